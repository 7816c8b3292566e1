// An API request at the director (POST /v1/*), top to bottom: read the body (capped) for its model,
// build the query from the caller's headers, decide a region, then redirect there (307) or forward it
// (L7) — retrying once, on the next decision, when the region fails before the reply's first byte — and
// write one `director.decision` line.

import type http from "node:http";
import { GatewayError } from "../errors/gateway-error.js";
import { readBody } from "../http/request-body.js";
import type { UpstreamPools } from "../http/upstream-pools.js";
import { countDecision, type DecisionLine, decisionLine, logDecision } from "./decision-record.js";
import { attemptRegion, type ForwardRequest, type RegionAttempt, targetOf } from "./director-forward.js";
import { modelOfBody, queryOfRequest } from "./director-query.js";
import { type DirectorError, refusalOf } from "./director-refusal.js";
import type { DirectorView } from "./director-routes.js";
import type { DirectorDecision, DirectorQuery } from "./director-types.js";

/** The longest a caller may take to send its body. */
const BODY_READ_MS = 60_000;

export interface RequestContext extends DirectorView {
  readonly upstream: UpstreamPools;
  readonly maxBodyBytes: number;
}

type Region = DirectorDecision & { kind: "region" };

export async function serveApiRequest(
  ctx: RequestContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const started = performance.now();
  const traceId = ctx.traceIdOf(req.headers);
  res.setHeader("x-ai-trace-id", traceId);
  const front = ctx.config.mode;
  const finish = (line: DecisionLine) =>
    logDecision(ctx.log, { ...line, latency_ms: performance.now() - started });
  let body: Buffer;
  let q: DirectorQuery;
  try {
    body = await readBody(req, { maxBodyBytes: ctx.maxBodyBytes, bodyReadMs: BODY_READ_MS });
    q = queryOfRequest(ctx.config, req.headers, modelOfBody(body));
  } catch (err) {
    if (!(err instanceof GatewayError)) return void res.destroy(); // the client left mid-body
    err.send(res, traceId);
    const status = { trace_id: traceId, front, status: "rejected", http_status: err.status };
    return finish(decisionLine(null, null, { ...status, error_code: err.code }));
  }
  const d = ctx.core.decide(q, ctx.clock());
  countDecision(ctx.metrics, d);
  if (d.kind === "refuse") {
    const refusal = refusalOf(d, ctx.config.polling.intervalMs);
    refusal.send(res, traceId);
    return finish(decisionLine(q, d, { trace_id: traceId, front, status: "refused", http_status: 503 }));
  }
  const first = attemptOf(ctx, d, d.reason);
  if (front === "redirect") {
    redirect(res, first, req.url ?? "/");
    return finish(decisionLine(q, d, { trace_id: traceId, front, status: "ok", http_status: 307 }));
  }
  const fwd: ForwardRequest = {
    method: req.method ?? "POST",
    url: req.url ?? "/",
    headers: req.headers,
    body,
    traceId,
  };
  const sent = await forwardWithRetry(ctx, q, first, fwd, res);
  finish(decisionLine(q, sent.decision ?? d, { trace_id: traceId, front, ...sent.line }));
}

function attemptOf(ctx: RequestContext, d: Region, reason: string): RegionAttempt {
  const region = ctx.config.regions.find((r) => r.name === d.region);
  if (!region) throw new Error(`the core chose region "${d.region}", which the config does not list`);
  return { region: region.name, gatewayUrl: region.gatewayUrl, reason };
}

function redirect(res: http.ServerResponse, at: RegionAttempt, url: string): void {
  res
    .writeHead(307, {
      location: `${at.gatewayUrl.replace(/\/+$/, "")}${url}`,
      "x-ai-director-region": at.region,
      "x-ai-director-reason": at.reason,
      "content-length": "0",
    })
    .end();
}

interface Sent {
  /** The retry's decision, when there was one. */
  readonly decision: Region | null;
  readonly line: Pick<DecisionLine, "status" | "http_status"> & Partial<DecisionLine>;
}

/**
 * Forwards to `first`; a connect failure or a 5xx before any byte is reported against the region and
 * the request goes once more, to the next decision's region (or, when that is the same one, the best
 * other candidate). A 5xx with nowhere else to go is relayed as it came.
 */
async function forwardWithRetry(
  ctx: RequestContext,
  q: DirectorQuery,
  first: RegionAttempt,
  req: ForwardRequest,
  res: http.ServerResponse,
): Promise<Sent> {
  let at = first;
  let retry: Region | null = null;
  let retriedFrom: string | null = null;
  for (;;) {
    // Set by `failed`, which the attempt may call (a 5xx) before it returns.
    const seen: { reported: boolean; next: Region | null } = { reported: false, next: null };
    const failed = (retryable: boolean) => {
      seen.reported = true;
      ctx.core.observeOutcome(at.region, false, ctx.clock());
      ctx.metrics.forwardFailures.labels(at.region).inc();
      if (retryable && retriedFrom === null) seen.next = retryDecision(ctx, q, at.region);
      return seen.next !== null;
    };
    const dispatcher = ctx.upstream.for(targetOf(at.gatewayUrl, req.url).origin);
    const r = await attemptRegion(dispatcher, at, req, res, () => failed(true));
    const attempts = retriedFrom === null ? 1 : 2;
    const base = { attempts, retried_from: retriedFrom, region: at.region, reason: at.reason };
    if (r.kind === "cancelled")
      return { decision: retry, line: { ...base, status: "client_cancelled", http_status: 499 } };
    if (r.kind === "relayed") {
      const ok = r.status < 500 && r.broken === null;
      if (!seen.reported) {
        ctx.core.observeOutcome(at.region, ok, ctx.clock());
        if (!ok) ctx.metrics.forwardFailures.labels(at.region).inc();
      }
      const status = r.broken !== null ? "broken_stream" : r.status >= 500 ? "upstream_error" : "ok";
      return { decision: retry, line: { ...base, status, http_status: r.status } };
    }
    if (!seen.reported) failed(r.kind === "failed");
    if (r.kind === "failed" && seen.next !== null) {
      const next: Region = seen.next;
      retry = next;
      retriedFrom = at.region;
      at = attemptOf(ctx, next, next.reason);
      continue;
    }
    const err: DirectorError =
      r.kind === "timeout"
        ? new GatewayError("upstream_timeout", `region ${at.region}'s gateway did not answer: ${r.why}`, {
            route: at.region,
          })
        : new GatewayError(
            "upstream_unavailable",
            `region ${at.region}'s gateway failed (${r.why}) after ${attempts} attempt(s)`,
            { route: at.region, retryAfterSeconds: 1, fallbackOptions: ["retry_later"] },
          );
    err.send(res, req.traceId);
    const status = r.kind === "timeout" ? "upstream_timeout" : "upstream_error";
    return { decision: retry, line: { ...base, status, http_status: err.status, error_code: err.code } };
  }
}

/**
 * Where a request goes after `failed` failed it: the next decision (made after the failure was
 * reported), or when that still names `failed`, its best other candidate; null when there is none.
 */
function retryDecision(ctx: RequestContext, q: DirectorQuery, failed: string): Region | null {
  const d = ctx.core.decide(q, ctx.clock());
  if (d.kind === "refuse") return null;
  if (d.region !== failed) {
    countDecision(ctx.metrics, d);
    return d;
  }
  let best: { region: string; score: number } | null = null;
  for (const c of d.candidates) {
    if (c.region === failed || c.filtered !== null || c.score === null) continue;
    if (best === null || c.score > best.score) best = { region: c.region, score: c.score };
  }
  if (best === null) return null;
  const other: Region = { ...d, region: best.region, reason: "failover", affinity: null };
  countDecision(ctx.metrics, other);
  return other;
}
