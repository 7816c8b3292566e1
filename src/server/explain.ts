// POST /admin/explain: what the gateway would do with a request, against the live pool, without sending
// it — the route decision and the endpoint picker's filters, scores and mode (`tokengate route explain
// --gateway`). Nothing is counted or recorded: no lease, no prefix-index entry, no log line.

import type { IncomingHttpHeaders } from "node:http";
import { GatewayError } from "../errors/gateway-error.js";
import { overHardBound, placeable, softSaturation } from "../flow/saturation.js";
import { pickerFor } from "../pipeline/pick-among.js";
import type { GatewayRuntime } from "../pipeline/runtime.js";
import { planSummary } from "../plan/plan-summary.js";
import { planRequest, type RequestPlan } from "../plan/request-plan.js";
import { rolloutOf } from "../plan/rollout-of.js";
import type { ApiKind } from "../profile/request-profile.js";

/** Refusals of the route stage are an answer to explain; a malformed body is the admin caller's error. */
const ROUTE_REFUSALS = new Set([
  "model_not_found",
  "context_length_exceeded",
  "no_eligible_pool",
  "max_tokens_exceeded",
]);

export function explainRequest(
  gw: GatewayRuntime,
  kind: ApiKind,
  body: unknown,
  headers: IncomingHttpHeaders,
  tenant: string | null,
): Record<string, unknown> {
  let plan: RequestPlan;
  try {
    plan = planRequest(gw.config, gw.correction, { kind, body, headers, tenant }, { explain: true });
  } catch (err) {
    if (!(err instanceof GatewayError) || !ROUTE_REFUSALS.has(err.code)) throw err;
    const refused: Record<string, unknown> = {
      route: { error: { code: err.code, message: err.message, param: err.param } },
    };
    if (gw.generation.staged) refused.rollout = rolloutExplain(gw, null, body, headers, tenant);
    return refused;
  }
  const { decision } = plan;
  const out: Record<string, unknown> = {
    input_tokens_estimated: decision.inputTokens,
    route: planSummary(plan),
    route_trace: decision.explain,
  };
  if (gw.generation.staged) {
    const rollout = rolloutExplain(gw, plan, body, headers, tenant);
    out.rollout = rollout;
    // The legacy service serves it: no pool queue or pick to show.
    if (rollout.serves === "legacy") return out;
  }
  const pool = gw.pools.get(decision.pool);
  if (!pool) return out;
  out.queue = queueExplain(
    gw,
    decision.pool,
    decision.rule,
    decision.priority,
    decision.maxQueueMs,
    plan.cost,
  );
  const r = pickerFor(pool.picker, plan.pickRequest)(pool.endpoints);
  out.pick = {
    endpoint: r.endpoint?.name ?? null,
    mode: r.mode,
    reason: r.reason,
    top_scores: r.topScores,
    filtered: r.filtered,
    notes: r.notes,
    backup_pool: r.backupPool,
    prompt_blocks: plan.pickRequest.blockHashes.length,
    // The step law's estimate from dispatch, as the request log records it (less the time spent
    // before); `ranked_delay_ms`: what the picker ranked the endpoint by.
    predicted_ttft_ms:
      r.endpoint === null
        ? null
        : Math.round(r.endpoint.estimateTtftMs(r.uncachedTokens ?? 0, plan.pickRequest.lora)),
    ranked_delay_ms: r.predictedTtftMs === null ? null : Math.round(r.predictedTtftMs),
    uncached_tokens: r.uncachedTokens,
  };
  return out;
}

/** Flow control's view: whether the request would wait, behind what, and each endpoint's room. */
function queueExplain(
  gw: GatewayRuntime,
  poolName: string,
  rule: string | null,
  priority: number,
  maxQueueMs: number,
  cost: number,
): Record<string, unknown> {
  const flow = gw.flow.pools.get(poolName)!;
  const pool = gw.pools.get(poolName)!;
  const gate = gw.flow.gateFor(rule);
  const now = Date.now();
  const room = pool.endpoints.map((e) => ({
    endpoint: e.name,
    over_hard_bound: flow.settings.enabled ? overHardBound(e, flow.settings, cost, now) : null,
    saturated: flow.settings.enabled ? softSaturation(e, flow.settings, now) : null,
  }));
  const ahead = flow
    .bandSizes()
    .filter((b) => b.priority >= priority)
    .reduce((n, b) => n + b.size, 0);
  const paused = gate?.paused ?? false;
  const wouldWait =
    paused ||
    ahead > 0 ||
    (flow.settings.enabled && placeable(pool.endpoints, flow.settings, cost, now) === null);
  return {
    priority,
    max_queue_ms: maxQueueMs,
    flow_control: flow.settings.enabled,
    queued: flow.depth,
    queued_at_or_above_priority: ahead,
    pause: gate
      ? {
          rule: gate.rule,
          paused,
          watched_pool: gate.when.pool,
          ttft_p95_ms: gate.lastP95Ms,
          threshold_ms: gate.when.ttftP95MsGt,
          samples: gate.lastSamples,
        }
      : null,
    endpoints: room,
    would_wait: wouldWait,
  };
}

/** Who serves the request under the rollout stage or route rollback in force, and why. */
function rolloutExplain(
  gw: GatewayRuntime,
  plan: RequestPlan | null,
  body: unknown,
  headers: IncomingHttpHeaders,
  tenant: string | null,
): { serves: "tokengate" | "legacy"; stage: string | null; reason: string | null; trace: string[] } {
  const trace: string[] = [];
  const { effect } = rolloutOf(gw.config, plan, body, headers, tenant, trace);
  if (effect.to === "route") return { serves: "tokengate", stage: effect.stage, reason: effect.note, trace };
  return { serves: "legacy", stage: effect.stage ?? "legacy_passthrough", reason: effect.reason, trace };
}
