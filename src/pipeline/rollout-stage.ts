// The rollout stage of the request path (only when the config can send traffic to the legacy service):
// the request is planned as usual — on paper when the stage keeps tokengate's decision from taking
// effect — and the stage says who serves it. A request the plan refuses still goes to the legacy
// service while the stage sends traffic there: the shadow stage must not change what callers get.

import type { IncomingHttpHeaders } from "node:http";
import type { GatewayConfigSet } from "../config/config-set.js";
import { GatewayError } from "../errors/gateway-error.js";
import { planRequest, type RequestPlan } from "../plan/request-plan.js";
import { rolloutOf } from "../plan/rollout-of.js";
import type { ApiKind } from "../profile/request-profile.js";
import type { TokenCorrection } from "../profile/token-correction.js";
import type { RolloutEffect } from "../route/rollout-effect.js";
import { parseJson, recordPlan } from "./plan-record.js";
import type { RequestRecord } from "./request-record.js";

export interface LegacyRequest {
  readonly to: "legacy";
  readonly url: string;
  readonly kind: ApiKind;
  /** What the legacy service is sent: the caller's bytes, or those with usage asked of a stream. */
  readonly body: Buffer;
  readonly stream: boolean;
  /** False when the gateway asked for the usage chunk itself (it is dropped before the caller sees it). */
  readonly clientWantsUsage: boolean;
  /** The labels written for the legacy service (seed 004's `write_headers`). */
  readonly labels: Record<string, string>;
}

export type Staged = { readonly to: "route"; readonly plan: RequestPlan } | LegacyRequest;

export interface StageInput {
  readonly kind: ApiKind;
  readonly raw: Buffer;
  readonly headers: IncomingHttpHeaders;
  readonly tenant: string | null;
}

export function stageRequest(
  config: GatewayConfigSet,
  correction: TokenCorrection,
  input: StageInput,
  rec: RequestRecord,
): Staged {
  const route = config.route;
  let plan: RequestPlan | null = null;
  let refusal: GatewayError | null = null;
  let body: unknown;
  try {
    body = parseJson(input.raw);
    plan = recordPlan(rec, config.gateway.logging.prompts, () =>
      planRequest(config, correction, {
        kind: input.kind,
        body,
        headers: input.headers,
        tenant: input.tenant,
      }),
    );
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    refusal = err;
  }
  const { effect, ...labels } = rolloutOf(config, plan, body, input.headers, input.tenant);
  rec.rolloutStage = effect.stage ?? (effect.to === "legacy" ? "legacy_passthrough" : null);
  if (effect.to === "route") {
    if (refusal) throw refusal;
    rec.rolloutSide = effect.note !== null ? "canary" : "routed";
    if (effect.note !== null) rec.routeReason = `${rec.routeReason},${effect.note}`;
    return { to: "route", plan: plan! };
  }
  rec.rolloutSide = "legacy";
  rec.wouldRoutePool = plan?.decision.pool ?? null;
  rec.wouldRouteReason = plan?.decision.reason ?? refusal?.code ?? null;
  rec.task = labels.task;
  rec.requestClass = labels.requestClass;
  if (plan === null) rec.taskKnown = labels.task !== null && route.knownTasks.has(labels.task);
  rec.pool = "legacy";
  rec.routeReason = effect.reason;
  rec.reasonLabel = effect.reason.replace(/^rollout=/, "").replace(",", "_");
  rec.servedModel = null;
  rec.modelVersion = null;
  return legacyRequest(config, input, body, plan, effect);
}

function legacyRequest(
  config: GatewayConfigSet,
  input: StageInput,
  body: unknown,
  plan: RequestPlan | null,
  effect: RolloutEffect & { to: "legacy" },
): LegacyRequest {
  const url = config.route.legacy!.url;
  const parsed = isMap(body) ? body : null;
  const stream = parsed?.stream === true;
  const base = { to: "legacy" as const, url, kind: input.kind, stream };
  // Route rollback: the request goes exactly as it came.
  if (effect.passthrough) return { ...base, body: input.raw, clientWantsUsage: true, labels: {} };
  const labels: Record<string, string> = {};
  const write = config.route.rollout?.writeHeaders ?? [];
  const values: Record<string, string | null> = {
    "x-ai-task": plan?.profile.task ?? null,
    "x-ai-request-class": plan?.profile.requestClass ?? null,
    "x-ai-input-tokens-estimated": plan ? String(plan.decision.inputTokens) : null,
    "x-ai-tenant": input.tenant,
  };
  for (const h of write) {
    const v = values[h];
    if (v !== null && v !== undefined) labels[h] = v;
  }
  // A stream is asked for its usage (the token-estimate gate compares with it); the caller does not see it.
  const so = parsed?.stream_options;
  const asked = isMap(so) && so.include_usage === true;
  if (!stream || asked || (so !== undefined && !isMap(so))) {
    return { ...base, body: input.raw, clientWantsUsage: true, labels };
  }
  const withUsage = { ...parsed, stream_options: { ...(isMap(so) ? so : {}), include_usage: true } };
  let text: string;
  try {
    text = JSON.stringify(withUsage);
  } catch {
    // Nested past what stringify recurses through: the legacy service gets the bytes as they came.
    return { ...base, body: input.raw, clientWantsUsage: true, labels };
  }
  return { ...base, body: Buffer.from(text), clientWantsUsage: false, labels };
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
