// The request path of POST /v1/chat/completions and /v1/completions, one stage after another:
// identify → read and profile → route → rollout stage (only when the config can send traffic to the
// legacy service) → budget (budgeted tenants) → queue (flow control) and pick → forward (retrying before
// the first byte) → settle (the budget's reservation too).
// Whatever happens, counters are released and exactly one log line is written.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { GatewayConfigSet } from "../config/config-set.js";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { PickAmong, Placement } from "../flow/placement.js";
import { RequestTicket } from "../flow/request-ticket.js";
import { ClientGone } from "../http/client-gone.js";
import { readBody } from "../http/request-body.js";
import { type TraceContext, traceContextFrom, traceIdFrom, traceparentOf } from "../http/trace-context.js";
import { planRequest, type RequestPlan } from "../plan/request-plan.js";
import type { ApiKind } from "../profile/request-profile.js";
import { admitToBudget, budgeted, settleBudget } from "./budget-stage.js";
import { applyOutcome, type ForwardContext, forward, noEndpointError } from "./forward.js";
import type { GatewayRuntime, Generation, PoolRuntime } from "./gateway-runtime.js";
import { forwardToLegacy } from "./legacy-forward.js";
import { pickerFor } from "./pick-request.js";
import { parseJson, recordPlan } from "./plan-record.js";
import { RequestRecord } from "./request-record.js";
import { stageRequest } from "./rollout-stage.js";
import { StreamHeartbeat } from "./stream-heartbeat.js";

const RETRY_LATER: readonly string[] = ["retry_later"];

/** What the request path leaves for the handler to finish: a stream's heartbeat, once armed. */
interface Live {
  heartbeat: StreamHeartbeat | null;
}

export async function handleCompletion(
  gw: GatewayRuntime,
  kind: ApiKind,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const trace = traceContextFrom(req.headers);
  const rec = new RequestRecord(traceIdFrom(req.headers, trace.traceId));
  rec.w3cTraceId = trace.traceId;
  res.setHeader("x-ai-trace-id", rec.traceId);
  res.setHeader("x-request-id", rec.traceId);
  const clientGone = new ClientGone();
  res.on("close", () => {
    if (!res.writableFinished) clientGone.abort(new Error("client disconnected"));
  });
  const live: Live = { heartbeat: null };
  try {
    await serve(gw, kind, req, res, rec, trace, clientGone, live);
  } catch (err) {
    if (clientGone.aborted) return; // the caller left: logged as cancelled below
    const e = recordRefusal(gw, rec, err);
    live.heartbeat?.stop();
    if (!res.headersSent && !res.destroyed) {
      // The rest of the body is not read: the connection cannot carry another request.
      if (e.code === "request_too_large" || e.code === "request_timeout")
        res.setHeader("connection", "close");
      e.send(res, rec.traceId);
    } else if (live.heartbeat?.started && !res.destroyed && !res.writableEnded) {
      // The heartbeat already answered 200: the error goes out as the stream's only event.
      rec.httpStatus = 200;
      res.end(`data: ${e.body(rec.traceId)}\n\n`);
    }
  } finally {
    live.heartbeat?.stop();
    if (clientGone.aborted && rec.httpStatus === 0) {
      rec.clientCancelled = true;
      rec.status = "client_cancelled";
      rec.httpStatus = 499;
    }
    if (gw.cutting && rec.clientCancelled) {
      // Not the client: the gateway cut it at the end of its shutdown drain (a stream that had started
      // got a gateway_shutdown event first; anything else, a closed connection).
      rec.clientCancelled = false;
      rec.status = "shutdown";
      rec.errorCode = "gateway_shutdown";
      if (res.headersSent) rec.httpStatus = res.statusCode;
    }
    if (rec.reservation !== null) settleBudget(gw, rec, rec.reservation);
    settle(gw, rec);
  }
}

async function serve(
  gw: GatewayRuntime,
  kind: ApiKind,
  req: IncomingMessage,
  res: ServerResponse,
  rec: RequestRecord,
  trace: TraceContext,
  clientGone: ClientGone,
  live: Live,
): Promise<void> {
  // The generation in force now serves this request to its end, whatever a reload does meanwhile.
  const gen = gw.generation;
  const config = gen.config;
  rec.configVersion = config.version;
  // Identify before reading the body: an unknown caller does not get to upload 4 MiB first.
  const who = gw.identifier.identify(req.headers, req.socket.remoteAddress);
  rec.tenant = who.tenant;
  if (who.batch) rec.batch = who.batch;
  const raw = await readBody(req, config.gateway.limits);
  let plan: RequestPlan;
  if (gen.staged) {
    // A rollout stage or a route rollback may send it to the legacy service instead.
    const staged = stageRequest(
      config,
      gw.correction,
      { kind, raw, headers: req.headers, tenant: who.tenant },
      rec,
    );
    if (staged.to === "legacy") {
      const headers = upstreamTraceHeaders(trace);
      return forwardToLegacy(gw, config.gateway, staged, res, rec, clientGone, headers);
    }
    plan = staged.plan;
  } else {
    const body = parseJson(raw);
    plan = recordPlan(rec, config.gateway.logging.prompts, () =>
      planRequest(config, gw.correction, { kind, body, headers: req.headers, tenant: who.tenant }),
    );
  }
  const { decision } = plan;
  gw.metrics.routeDecisions.labels(decision.pool, decision.reasonLabel).inc();
  if (budgeted(config, who.tenant)) await admitToBudget(gw, who.tenant, plan, rec);
  const pool = gen.pools.get(decision.pool);
  if (!pool) throw noEndpointError(decision.pool, "it has no endpoints", null);
  const pickAmong = pickerFor(pool.picker, plan.pickRequest);
  const candidates = servingEndpoints(pool, plan);

  // No endpoint can take it at all (none healthy): say so now rather than queue for nothing.
  const now = Date.now();
  if (!candidates.some((e) => e.routable(now))) {
    const pick = pickAmong(candidates);
    throw noEndpointError(decision.pool, pick.reason, pick.backupPool);
  }
  const heartbeat = armHeartbeat(config, res, rec, plan);
  live.heartbeat = heartbeat;
  const placement = await queueForEndpoint(gw, gen, plan, rec, candidates, pickAmong, clientGone);
  if (heartbeat) heartbeat.stage = "waiting for the first token";
  // A batch pause watching this pool hears of each streamed first token as it happens.
  const watched = plan.profile.stream && gen.flow.watches(decision.pool);
  const ctx: ForwardContext = {
    gw,
    gen,
    pool,
    plan,
    rec,
    candidates,
    pickAmong,
    res,
    clientGone,
    upstreamHeaders: upstreamTraceHeaders(trace),
    onFirstToken: watched ? () => gen.flow.observeTtft(decision.pool, performance.now() - rec.t0) : null,
    beforeFirstWrite: heartbeat ? () => heartbeat.stop() : null,
    headersAlreadySent: () => heartbeat?.started ?? false,
  };
  applyOutcome(ctx, await forward(ctx, placement));
}

/**
 * A request's path ended in an error before an answer: the gateway error to send (an unexpected throw is
 * an `internal_error`), recorded on the request and counted. Shared by both front doors (epp-picker.ts).
 */
export function recordRefusal(gw: GatewayRuntime, rec: RequestRecord, err: unknown): GatewayError {
  const e =
    err instanceof GatewayError
      ? err
      : new GatewayError("internal_error", `internal error: ${(err as Error).message}`);
  rec.errorCode = e.code;
  rec.httpStatus = e.status;
  rec.status = e.status >= 500 ? "error" : "rejected";
  gw.metrics.rejections.labels(e.code, rec.tenant ?? "unknown").inc();
  return e;
}

/**
 * The pool's endpoints that can serve the plan's target: its version (a pinned version is never served
 * by another) and its adapter (registered on the engine, or with a `path` the gateway registers it
 * from). None: a clear error now.
 */
export function servingEndpoints(pool: PoolRuntime, plan: RequestPlan): readonly EndpointState[] {
  const { decision } = plan;
  const version = decision.target.modelVersion;
  const adapter = decision.target.adapter;
  // The common case — no pinned version, no adapter — takes the pool as it is, without a copy.
  if (version === null && adapter === null) return pool.endpoints;
  const loadable = adapter !== null && decision.adapterPath !== null;
  const serving = pool.endpoints.filter(
    (e) =>
      (version === null || e.modelVersion === version) &&
      (adapter === null || loadable || e.servedAdapters === null || e.servedAdapters.has(adapter)),
  );
  if (serving.length > 0) return serving;
  if (version !== null && !pool.endpoints.some((e) => e.modelVersion === version)) {
    const running = [...new Set(pool.endpoints.map((e) => e.modelVersion ?? "unknown"))];
    throw new GatewayError(
      "model_version_unavailable",
      `no endpoint of pool ${decision.pool} runs ${version} (model ${decision.modelAlias}); running: ${running.join(", ")}`,
      { route: decision.pool, retryAfterSeconds: 5, fallbackOptions: ["retry_later"] },
    );
  }
  throw noEndpointError(decision.pool, `no endpoint has adapter ${adapter} registered`, null);
}

function armHeartbeat(
  config: GatewayConfigSet,
  res: ServerResponse,
  rec: RequestRecord,
  plan: RequestPlan,
): StreamHeartbeat | null {
  const heartbeatMs = config.gateway.streaming.heartbeatMs;
  if (!plan.profile.stream || heartbeatMs <= 0) return null;
  return new StreamHeartbeat(res, heartbeatMs, rec.t0, {
    "x-ai-route-pool": plan.decision.pool,
    "x-ai-route-reason": plan.decision.reason,
    "x-ai-model-version": plan.decision.modelVersion,
  });
}

/** Flow control: waits in the gateway's queue until a candidate endpoint is below its saturation bounds. */
export async function queueForEndpoint(
  gw: GatewayRuntime,
  gen: Generation,
  plan: RequestPlan,
  rec: RequestRecord,
  candidates: readonly EndpointState[],
  pickAmong: PickAmong,
  clientGone: ClientGone,
): Promise<Placement> {
  const { decision } = plan;
  const flow = gen.flow.pools.get(decision.pool)!;
  const ticket = new RequestTicket({
    priority: decision.priority,
    tenant: rec.tenant ?? "anonymous",
    cost: plan.cost,
    work: decision.inputTokens,
    maxQueueMs: decision.maxQueueMs,
    gate: gen.flow.gateFor(decision.rule),
    fallbackOptions: decision.queuePolicy?.fallbackOptions ?? RETRY_LATER,
    endpoints: candidates,
    bounds: flow.settings,
    longPrefill: flow.longPrefill,
    pickAmong,
    clientGone,
    stream: plan.profile.stream,
    pickRequest: plan.pickRequest,
  });
  const pausedAtAdmit = ticket.gate?.paused === true;
  const queuedAt = performance.now();
  const admitted = flow.admit(ticket);
  let placement: Placement;
  if (admitted instanceof Promise) {
    try {
      placement = await admitted;
    } catch (err) {
      rec.queueLeftAt = performance.now();
      throw err;
    } finally {
      rec.queueReason = ticket.waitReason(queuedAt, pausedAtAdmit);
      rec.heldWhileIdleMs = ticket.heldWhileIdleMs;
    }
  } else {
    placement = admitted;
  }
  rec.dispatchedAt = performance.now();
  gw.metrics.queueSeconds.labels(decision.pool).observe((rec.dispatchedAt - rec.t0) / 1000);
  if (rec.heldWhileIdleMs !== null && rec.heldWhileIdleMs > 0 && rec.queueReason !== "paused")
    gw.metrics.heldWhileIdleSeconds
      .labels(decision.pool, rec.tenant ?? "anonymous")
      .inc(rec.heldWhileIdleMs / 1000);
  return placement;
}

function upstreamTraceHeaders(trace: TraceContext): Record<string, string> {
  const h: Record<string, string> = { traceparent: traceparentOf(trace) };
  if (trace.tracestate !== null) h.tracestate = trace.tracestate;
  return h;
}

/** Metrics and the log line, once per request. */
export function settle(gw: GatewayRuntime, rec: RequestRecord): void {
  const m = gw.metrics;
  const pool = rec.pool ?? "none";
  const task = rec.task && rec.taskKnown ? rec.task : "unknown";
  m.requests.labels(pool, task, rec.status).inc();
  if (rec.pool) m.tasks.labels(rec.taskKnown ? "true" : "false").inc();
  const now = performance.now();
  if (rec.pool && rec.attempts > 0) {
    if (Number.isFinite(rec.firstTokenAt)) {
      const ttftMs = rec.firstTokenAt - rec.t0;
      m.ttftSeconds.labels(pool).observe(ttftMs / 1000);
    }
    m.durationSeconds.labels(pool).observe((now - rec.t0) / 1000);
    if (rec.runtimeQueueMs !== null) m.runtimeQueueSeconds.labels(pool).observe(rec.runtimeQueueMs / 1000);
    if (rec.prefillMs !== null) m.runtimePrefillSeconds.labels(pool).observe(rec.prefillMs / 1000);
    if (rec.decodeMs !== null) m.runtimeDecodeSeconds.labels(pool).observe(rec.decodeMs / 1000);
    if (rec.inputTokensActual !== null)
      m.inputTokens.labels(pool, rec.tenant ?? "unknown").inc(rec.inputTokensActual);
    if (rec.outputTokens !== null) m.outputTokens.labels(pool, rec.tenant ?? "unknown").inc(rec.outputTokens);
  }
  if (rec.rolloutSide !== null) {
    const ttftMs = rec.firstTokenAt - rec.t0;
    gw.rollout.record({
      rolloutSide: rec.rolloutSide,
      task: rec.task,
      taskKnown: rec.taskKnown,
      inputTokensEstimated: rec.inputTokensEstimated,
      inputTokensActual: rec.inputTokensActual,
      status: rec.status,
      ttftMs,
    });
  }
  const streamedTtft =
    rec.stream === true && Number.isFinite(rec.firstTokenAt) ? rec.firstTokenAt - rec.t0 : Number.NaN;
  gw.regionWindow.record(Date.now(), streamedTtft, rec.httpStatus >= 500);
  gw.log.write(rec.toLogLine(now));
}
