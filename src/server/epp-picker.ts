// The gateway's request path behind `tokengate epp`: Envoy hands over a request (ext_proc, src/epp/) and
// gets back the endpoint to send it to, chosen by the same stages as a request sent to the gateway —
// identify, read and profile, route, budget, flow control (the queue and its saturation bounds) and the
// endpoint picker — against the same generation, so one picker has two front doors. Envoy forwards;
// this side keeps the accounting a forward would: the lease (in-flight requests and tokens, pending
// prefill until the first response chunk), the prefix index, the budget's reservation settled from
// the usage the response carries, metrics and one log line per request.
//
// What the gateway's own forward does and the picker cannot: retries (Envoy walks the fallback list),
// the engine-side timings of the log line (no `x-ai-*` engine headers reach here), the rollout stage
// to a legacy service (not an endpoint of the pool: refused with a clear error).

import type { IncomingHttpHeaders } from "node:http";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import type { EppDecision, EppPicker, EppRequest } from "../epp/decision.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Placement } from "../flow/placement.js";
import { ClientGone } from "../http/client-gone.js";
import { traceContextFrom, traceIdFrom } from "../http/trace-context.js";
import { planRequest, type RequestPlan } from "../plan/request-plan.js";
import type { ApiKind } from "../profile/request-profile.js";
import { admitToBudget, budgeted, settleBudget } from "./budget-stage.js";
import { queueForEndpoint, recordRefusal, servingEndpoints, settle } from "./completion-handler.js";
import { noEndpointError, recordPick } from "./forward.js";
import type { GatewayRuntime } from "./gateway-runtime.js";
import { pickerFor } from "./pick-request.js";
import { parseJson, recordPlan } from "./plan-record.js";
import { RequestRecord } from "./request-record.js";

const KINDS: Readonly<Record<string, ApiKind>> = {
  "/v1/chat/completions": "chat",
  "/v1/completions": "completion",
};
/** Bytes of the response's end kept to read its usage from. */
const TAIL_BYTES = 16 * 1024;

/** `ip:port` of an endpoint's URL. */
export function addressOf(ep: EndpointState): string {
  return new URL(ep.url).host;
}

/** A request placed by the gateway's stages: its leased endpoint, its plan and the pool's candidates. */
interface Placed {
  readonly placement: Placement;
  readonly plan: RequestPlan;
  readonly candidates: readonly EndpointState[];
}

export class GatewayEppPicker implements EppPicker {
  constructor(private readonly gw: GatewayRuntime) {}

  async decide(req: EppRequest, signal: AbortSignal): Promise<EppDecision> {
    const headers = req.headers as IncomingHttpHeaders;
    const trace = traceContextFrom(headers);
    const rec = new RequestRecord(traceIdFrom(headers, trace.traceId));
    rec.w3cTraceId = trace.traceId;
    let placed: Placed | null = null;
    try {
      placed = await this.place(req, headers, rec, signal);
      return this.route(placed, rec);
    } catch (err) {
      if (placed) placed.placement.lease.release();
      const e = recordRefusal(this.gw, rec, err);
      if (signal.aborted) {
        rec.status = "client_cancelled";
        rec.clientCancelled = true;
      }
      this.finish(rec);
      return {
        kind: "refuse",
        status: e.status,
        code: e.code,
        message: e.message,
        ...(e.retryAfterSeconds !== null ? { retryAfterSeconds: e.retryAfterSeconds } : {}),
      };
    }
  }

  /** The gateway's stages up to a placement: a leased endpoint of the pool (within the subset). */
  private async place(
    req: EppRequest,
    headers: IncomingHttpHeaders,
    rec: RequestRecord,
    signal: AbortSignal,
  ): Promise<Placed> {
    const gw = this.gw;
    const gen = gw.generation;
    const config = gen.config;
    rec.configVersion = config.version;
    const path = (req.headers[":path"] ?? "").split("?", 1)[0]!;
    const kind = KINDS[path];
    if (kind === undefined) {
      throw new GatewayError(
        "not_found",
        `the endpoint picker routes /v1/chat/completions and /v1/completions, not ${path}`,
      );
    }
    // As at the gateway's own door: an API key, or X-AI-Tenant with the trusted upstreams' shared
    // secret (Envoy's address is not the client's, so address trust does not apply here).
    const who = gw.identifier.identify(headers, undefined);
    rec.tenant = who.tenant;
    if (gen.staged) {
      throw new GatewayError(
        "no_eligible_pool",
        "a rollout stage sends part of this route to the legacy service, which the endpoint picker cannot name",
      );
    }
    const body = parseJson(req.body);
    const plan: RequestPlan = recordPlan(rec, config.gateway.logging.prompts, () =>
      planRequest(config, gw.correction, { kind, body, headers, tenant: who.tenant }),
    );
    const { decision } = plan;
    gw.metrics.routeDecisions.labels(decision.pool, decision.reasonLabel).inc();
    if (budgeted(config, who.tenant)) await admitToBudget(gw, who.tenant, plan, rec);
    const pool = gen.pools.get(decision.pool);
    if (!pool) throw noEndpointError(decision.pool, "it has no endpoints", null);
    const pickAmong = pickerFor(pool.picker, plan.pickRequest);
    const subset = req.subset === null ? null : new Set(req.subset);
    const serving = servingEndpoints(pool, plan);
    const candidates = subset === null ? serving : serving.filter((e) => subset.has(addressOf(e)));
    const now = Date.now();
    if (!candidates.some((e) => e.routable(now))) {
      const why =
        subset === null ? pickAmong(candidates).reason : "no endpoint of the subset hint can take it";
      throw noEndpointError(decision.pool, why, null);
    }
    const clientGone = new ClientGone();
    signal.addEventListener("abort", () => clientGone.abort(new Error("Envoy ended the stream")), {
      once: true,
    });
    const placement = await queueForEndpoint(gw, gen, plan, rec, candidates, pickAmong, clientGone);
    pool.picker.index.record(placement.endpoint.name, plan.pickRequest.blockHashes);
    return { placement, plan, candidates };
  }

  /** The route Envoy gets, and the accounting of the request until the response ends. */
  private route({ placement, plan, candidates }: Placed, rec: RequestRecord): EppDecision {
    const gw = this.gw;
    const ep = placement.endpoint;
    const { pick } = placement;
    recordPick(rec, placement);
    rec.attempts = 1;
    rec.endpoint = ep.name;
    rec.modelVersion = ep.modelVersion ?? plan.decision.modelVersion;
    rec.kvCacheUsedRatio = ep.kvUsage;
    const inflight = gw.metrics.inflight.labels(plan.decision.pool, ep.name);
    inflight.inc();
    // Envoy retries down this list: the other routable candidates, best first by the picker's scores.
    const order = new Map(pick.topScores.map((t, i) => [t.endpoint, i]));
    const now = Date.now();
    const fallbacks = candidates
      .filter((e) => e !== ep && e.routable(now))
      .sort((a, b) => (order.get(a.name) ?? 1e9) - (order.get(b.name) ?? 1e9))
      .map(addressOf);
    let tail = Buffer.alloc(0);
    let ended = false;
    return {
      kind: "route",
      endpoint: addressOf(ep),
      fallbacks,
      headers: { "x-ai-trace-id": rec.traceId, "x-ai-route-pool": plan.decision.pool },
      responseStarted: (_served, status) => {
        if (status !== null) rec.httpStatus = status;
      },
      responseBody: (chunk) => {
        if (!Number.isFinite(rec.firstTokenAt) && chunk.length > 0) {
          rec.firstTokenAt = performance.now();
          placement.lease.firstToken();
        }
        tail =
          tail.length + chunk.length > TAIL_BYTES
            ? Buffer.concat([tail, chunk]).subarray(-TAIL_BYTES)
            : Buffer.concat([tail, chunk]);
      },
      done: (served, status) => {
        if (ended) return;
        ended = true;
        placement.lease.release();
        inflight.dec();
        if (served !== null && served !== addressOf(ep)) rec.addFallback(`served:${served}`);
        const usage = usageOf(tail);
        if (usage) {
          rec.inputTokensActual = usage.prompt;
          rec.outputTokens = usage.completion;
          placement.lease.prefill?.reportOutput(usage.completion);
        }
        rec.httpStatus = status ?? rec.httpStatus;
        if (status === null) {
          rec.status = "client_cancelled";
          rec.clientCancelled = true;
          rec.httpStatus = 499;
          ep.reportAbandoned();
        } else if (status >= 500) {
          rec.status = "error";
          ep.reportFailure(status);
        } else {
          rec.status = status >= 400 ? "engine_rejected" : "ok";
          ep.reportSuccess();
        }
        this.finish(rec);
      },
    };
  }

  private finish(rec: RequestRecord): void {
    if (rec.reservation !== null) settleBudget(this.gw, rec, rec.reservation);
    settle(this.gw, rec);
  }
}

/** The `usage` an OpenAI response (its JSON, or its stream's last events) ends with, if any. */
export function usageOf(tail: Buffer): { prompt: number; completion: number } | null {
  const text = tail.toString("utf8");
  const at = text.lastIndexOf('"usage"');
  if (at < 0) return null;
  const part = text.slice(at);
  const prompt = /"prompt_tokens"\s*:\s*(\d+)/.exec(part);
  const completion = /"completion_tokens"\s*:\s*(\d+)/.exec(part);
  if (!prompt || !completion) return null;
  return { prompt: Number(prompt[1]), completion: Number(completion[1]) };
}
