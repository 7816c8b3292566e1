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
import { ClientGone } from "../http/client-gone.js";
import { traceContextFrom, traceIdFrom } from "../http/trace-context.js";
import { startAttempt } from "../pipeline/attempt-start.js";
import type { AttemptEnd } from "../pipeline/hooks.js";
import { type Placed, place } from "../pipeline/place.js";
import { planStage } from "../pipeline/plan-stage.js";
import { recordRefusal } from "../pipeline/refusal.js";
import { RequestRecord } from "../pipeline/request-record.js";
import type { GatewayRuntime } from "../pipeline/runtime.js";
import type { ApiKind } from "../profile/request-profile.js";

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
      this.gw.hooks.settle(rec);
      return {
        kind: "refuse",
        status: e.status,
        code: e.code,
        message: e.message,
        ...(e.retryAfterSeconds !== null ? { retryAfterSeconds: e.retryAfterSeconds } : {}),
      };
    }
  }

  /** The pipeline up to a placement: a leased endpoint of the pool (within the subset). */
  private async place(
    req: EppRequest,
    headers: IncomingHttpHeaders,
    rec: RequestRecord,
    signal: AbortSignal,
  ): Promise<Placed> {
    const gw = this.gw;
    const gen = gw.generation;
    rec.configVersion = gen.config.version;
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
    const staged = planStage(gw, gen, rec, { kind, raw: req.body, headers, tenant: who.tenant });
    if (staged.to === "legacy") throw new Error("a generation that stages nothing sent a request to legacy");
    const subset = req.subset === null ? null : new Set(req.subset);
    const clientGone = new ClientGone();
    signal.addEventListener("abort", () => clientGone.abort(new Error("Envoy ended the stream")), {
      once: true,
    });
    return place(gw, gen, staged.plan, rec, clientGone, {
      narrow:
        subset === null
          ? null
          : { keep: (e) => subset.has(addressOf(e)), why: "no endpoint of the subset hint can take it" },
    });
  }

  /** The route Envoy gets, and the request's one attempt until the response ends. */
  private route({ pool, placement, plan, candidates }: Placed, rec: RequestRecord): EppDecision {
    const ep = placement.endpoint;
    const { pick } = placement;
    const attempt = startAttempt(this.gw, pool, plan, rec, placement);
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
        if (served !== null && served !== addressOf(ep)) rec.addFallback(`served:${served}`);
        const usage = usageOf(tail);
        if (usage) {
          rec.inputTokensActual = usage.prompt;
          rec.outputTokens = usage.completion;
        }
        rec.httpStatus = status ?? rec.httpStatus;
        let end: AttemptEnd;
        if (status === null) {
          rec.status = "client_cancelled";
          rec.clientCancelled = true;
          rec.httpStatus = 499;
          end = { kind: "cancelled" };
        } else if (status >= 500) {
          rec.status = "error";
          end = { kind: "failed", failure: status };
        } else {
          rec.status = status >= 400 ? "engine_rejected" : "ok";
          const used = usage && { promptTokens: usage.prompt, completionTokens: usage.completion };
          end = { kind: "answered", status, brokenMidStream: false, usage: used };
        }
        attempt.end(end);
        this.gw.hooks.settle(rec);
      },
    };
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
