// POST /admin/explain: what the gateway would do with a request, against the live pool, without sending
// it — the route decision and the endpoint picker's filters, scores and mode (`tokengate route explain
// --gateway`). Nothing is counted or recorded: no lease, no prefix-index entry, no log line.

import type { IncomingHttpHeaders } from "node:http";
import { overHardBound, placeable, softSaturation } from "../flow/saturation.js";
import { type ApiKind, profileRequest } from "../profile/request-profile.js";
import { routeRequest } from "../route/route-request.js";
import type { GatewayRuntime } from "./gateway-runtime.js";
import { pickerFor } from "./pick-request.js";

export function explainRequest(
  gw: GatewayRuntime,
  kind: ApiKind,
  body: unknown,
  headers: IncomingHttpHeaders,
): Record<string, unknown> {
  const profile = profileRequest(kind, body, headers);
  const alias = gw.config.route.aliases.get(profile.modelAlias);
  const model = (alias && gw.config.pools.get(alias.defaultPool)?.model) ?? profile.modelAlias;
  const inputTokens = gw.correction.apply(model, profile.inputTokensRaw);
  const decision = routeRequest(gw.config, {
    modelAlias: profile.modelAlias,
    task: profile.task,
    requestClass: profile.requestClass,
    inputTokens,
    maxTokens: profile.maxTokens,
  });
  const out: Record<string, unknown> = {
    input_tokens_estimated: inputTokens,
    route: decision.ok
      ? {
          pool: decision.pool,
          reason: decision.reason,
          upstream_model: decision.upstreamModel,
          max_tokens: decision.maxTokens,
        }
      : { error: { code: decision.code, message: decision.message, param: decision.param } },
    route_trace: decision.explain,
  };
  if (!decision.ok) return out;
  const pool = gw.pools.get(decision.pool);
  if (!pool) return out;
  out.queue = queueExplain(
    gw,
    decision.pool,
    decision.rule,
    decision.priority,
    decision.maxQueueMs,
    inputTokens + decision.maxTokens,
  );
  const { request, pickAmong } = pickerFor(
    pool.picker,
    kind,
    profile.body,
    { upstreamModel: decision.upstreamModel, maxTokens: decision.maxTokens, inputTokens },
    headers,
  );
  const blockHashes = request.blockHashes;
  const r = pickAmong(pool.endpoints);
  out.pick = {
    endpoint: r.endpoint?.name ?? null,
    mode: r.mode,
    reason: r.reason,
    top_scores: r.topScores,
    filtered: r.filtered,
    notes: r.notes,
    backup_pool: r.backupPool,
    prompt_blocks: blockHashes.length,
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
