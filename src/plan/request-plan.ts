// The request plan: from (API kind, body, headers, tenant) to everything the gateway decides before it
// queues — the profile, the route decision, the body sent upstream and what the endpoint picker is asked.
// The gateway, `POST /admin/explain` and `tokengate route explain` all call this one function, so an
// explanation is always what the gateway does.

import type { IncomingHttpHeaders } from "node:http";
import type { GatewayConfigSet } from "../config/config-set.js";
import type { StickyBy } from "../config/route-types.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { EndpointPickerConfig } from "../picker/config/endpoint-picker-config.js";
import type { PickRequest } from "../picker/framework/types.js";
import { PEERS_READING_TEXT } from "../picker/peers/peer-algorithm.js";
import { promptHashesFor, sessionHeader } from "../picker/picker-profile.js";
import { type ApiKind, profileRequest, type RequestProfile } from "../profile/request-profile.js";
import type { TokenCorrection } from "../profile/token-correction.js";
import type { RouteDecision, RouteRejection } from "../route/route-decision.js";
import { routeRequest } from "../route/route-request.js";
import { promptPartsOf } from "./prompt-parts.js";

export interface PlanInput {
  readonly kind: ApiKind;
  /** The parsed JSON body, not yet validated. */
  readonly body: unknown;
  readonly headers: IncomingHttpHeaders;
  /** From the identify stage; null for an anonymous caller. */
  readonly tenant: string | null;
}

export interface PlanOptions {
  /** Build the route's explanation (every rule checked); the request path passes false. */
  readonly explain?: boolean;
  /** What-ifs (`route explain --input-tokens`): this many input tokens instead of the estimate. */
  readonly inputTokens?: number;
}

export interface RequestPlan {
  readonly profile: RequestProfile;
  readonly decision: RouteDecision;
  /** The JSON sent to the engine: the served model (adapter or base), max_tokens, usage always asked. */
  readonly upstreamBody: Buffer;
  readonly pickRequest: PickRequest;
  /** Input + max output tokens: what the request holds of an endpoint while in flight. */
  readonly cost: number;
}

/**
 * Profiles, routes and prepares one request; throws a GatewayError naming the field at fault, or the
 * route's refusal (`model_not_found`, `context_length_exceeded`, …) in seed 004's shape.
 * @example
 * const plan = planRequest(config, correction, { kind: "chat", body, headers, tenant: "support-basic" });
 * plan.decision.pool // "summary-online"
 */
export function planRequest(
  config: GatewayConfigSet,
  correction: TokenCorrection | null,
  input: PlanInput,
  opts: PlanOptions = {},
): RequestPlan {
  const profile = profileRequest(input.kind, input.body, input.headers);
  const fixed = opts.inputTokens;
  const tokensFor = (model: string) =>
    fixed ?? (correction ? correction.apply(model, profile.inputTokensRaw) : profile.inputTokensRaw);
  const decision = routeRequest(
    config,
    {
      modelAlias: profile.modelAlias,
      task: profile.task,
      requestClass: profile.requestClass,
      inputTokens: fixed ?? profile.inputTokensRaw,
      maxTokens: profile.maxTokens,
      tokensFor,
      stickyKey: (by) => stickyKeyOf(by, input.tenant, input.headers),
    },
    { explain: opts.explain ?? false },
  );
  if (!decision.ok) throw new RouteRefusal(withParamSent(profile, decision));
  return {
    profile,
    decision,
    upstreamBody: upstreamBodyOf(profile, decision),
    pickRequest: pickRequestOf(config, profile, decision, input.headers),
    cost: decision.inputTokens + decision.maxTokens,
  };
}

/** The route stage refused the request; `explain` says why, rule by rule (when asked for). */
export class RouteRefusal extends GatewayError {
  readonly explain: readonly string[];

  constructor(r: RouteRejection) {
    super(r.code, r.message, {
      param: r.param,
      route: r.route,
      fallbackOptions: r.fallbackOptions,
      status: r.status,
    });
    this.explain = r.explain;
  }
}

/**
 * The refusal naming the field this request sent: routing names the chat fields (`messages`,
 * `max_tokens`), but a completion's input is its `prompt`, and a chat request may have sent
 * `max_completion_tokens` instead.
 */
function withParamSent(profile: RequestProfile, r: RouteRejection): RouteRejection {
  let param = r.param;
  if (param === "messages" && profile.kind === "completion") param = "prompt";
  else if (param === "max_tokens" && profile.kind === "chat" && profile.body.max_completion_tokens != null)
    param = "max_completion_tokens";
  return param === r.param ? r : { ...r, param };
}

function upstreamBodyOf(profile: RequestProfile, decision: RouteDecision): Buffer {
  const body: Record<string, unknown> = {
    ...profile.body,
    model: decision.upstreamModel,
    max_tokens: decision.maxTokens,
  };
  delete body.max_completion_tokens;
  // Routing labels given in the body are the gateway's, not the engine's.
  delete body.task;
  delete body.request_class;
  if (profile.stream) {
    // Always ask for usage upstream: it settles token accounting; the frame is dropped if the caller did not ask.
    const so = (profile.body.stream_options as Record<string, unknown> | undefined) ?? {};
    body.stream_options = { ...so, include_usage: true };
  } else {
    // Without a stream they mean nothing, and vLLM refuses them ("only when stream is true").
    delete body.stream_options;
  }
  return Buffer.from(stringifyBody(body));
}

/**
 * JSON.parse reads any depth, JSON.stringify recurses and overflows the stack a few thousand levels
 * down: such a body is the caller's fault (a 400), not a RangeError escaping as a 500.
 */
function stringifyBody(body: Record<string, unknown>): string {
  try {
    return JSON.stringify(body);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    throw new GatewayError("invalid_request", "the request body nests arrays or objects too deeply", {
      param: "body",
    });
  }
}

function pickRequestOf(
  config: GatewayConfigSet,
  profile: RequestProfile,
  decision: RouteDecision,
  headers: IncomingHttpHeaders,
): PickRequest {
  const picker = config.pickers.get(decision.pool);
  const session = picker ? sessionHeaderOf(picker) : null;
  const s = session ? firstHeader(headers, session) : null;
  const lora = decision.target.adapter;
  const parts = picker ? promptPartsOf(profile.kind, profile.body) : null;
  return {
    model: decision.baseModel,
    modelVersion: decision.target.modelVersion,
    lora,
    inputTokens: decision.inputTokens,
    maxTokens: decision.maxTokens,
    // Salted by model and adapter as the engine's prefix cache is: an adapter's KV is its own.
    blockHashes:
      picker && parts ? promptHashesFor(picker, parts, decision.baseModel, lora) : new Float64Array(0),
    sessionKey: s,
    // Only for a peer algorithm that reads the prompt as characters (SGLang's tree).
    ...(picker && parts && PEERS_READING_TEXT.has(picker.algorithm) ? { promptText: parts.join("") } : {}),
  };
}

const SESSION_HEADERS = new WeakMap<EndpointPickerConfig, string | null>();

/** The picker's session header, lowercased, looked up once per (frozen) picker config. */
function sessionHeaderOf(picker: EndpointPickerConfig): string | null {
  let h = SESSION_HEADERS.get(picker);
  if (h === undefined) {
    h = sessionHeader(picker)?.toLowerCase() ?? null;
    SESSION_HEADERS.set(picker, h);
  }
  return h;
}

/** The value a weighted split sticks by; null (random by weight) when the caller has none. */
export function stickyKeyOf(
  by: StickyBy,
  tenant: string | null,
  headers: IncomingHttpHeaders,
): string | null {
  if (by.kind === "tenant") return tenant;
  if (by.kind === "header") return firstHeader(headers, by.header);
  return null;
}

/** A header's first value; null when absent or empty. */
export function firstHeader(headers: IncomingHttpHeaders, name: string): string | null {
  const v = headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === "" ? null : s;
}
