// The gateway's front door for POST /v1/chat/completions and /v1/completions: the request pipeline
// (src/pipeline/) behind an HTTP request — identify → read → plan (or the legacy service, while a
// rollout stage runs) → place (budget, candidates, queue and pick) → forward (retrying before the first
// byte) → settle (the pipeline's settle hooks: budget, metrics, rollout gates, region window, log line).
// What is this door's own: the trace headers, a stream's heartbeat while it waits, and sending an error
// as a response (or, after a heartbeat, as the stream's only event). Whatever happens, the request is
// settled once.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { GatewayConfigSet } from "../config/config-set.js";
import { ClientGone } from "../http/client-gone.js";
import { readBody } from "../http/request-body.js";
import { type TraceContext, traceContextFrom, traceIdFrom, traceparentOf } from "../http/trace-context.js";
import { applyOutcome, type ForwardContext, forward } from "../pipeline/forward.js";
import { forwardToLegacy } from "../pipeline/legacy-forward.js";
import { place } from "../pipeline/place.js";
import { planStage } from "../pipeline/plan-stage.js";
import { recordRefusal } from "../pipeline/refusal.js";
import { RequestRecord } from "../pipeline/request-record.js";
import type { GatewayRuntime } from "../pipeline/runtime.js";
import type { RequestPlan } from "../plan/request-plan.js";
import type { ApiKind } from "../profile/request-profile.js";
import { StreamHeartbeat } from "./stream-heartbeat.js";

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
    gw.hooks.settle(rec);
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
  const staged = planStage(gw, gen, rec, { kind, raw, headers: req.headers, tenant: who.tenant });
  if (staged.to === "legacy") {
    // A rollout stage or a route rollback sends it to the legacy service instead.
    return forwardToLegacy(gw, config.gateway, staged, res, rec, clientGone, upstreamTraceHeaders(trace));
  }
  const { plan } = staged;
  const placed = await place(gw, gen, plan, rec, clientGone, {
    offerBackupPool: true,
    queuing: () => {
      live.heartbeat = armHeartbeat(config, res, rec, plan);
    },
  });
  const heartbeat = live.heartbeat;
  if (heartbeat) heartbeat.stage = "waiting for the first token";
  // A batch pause watching this pool hears of each streamed first token as it happens.
  const pool = plan.decision.pool;
  const watched = plan.profile.stream && gen.flow.watches(pool);
  const ctx: ForwardContext = {
    gw,
    gen,
    placed,
    rec,
    res,
    clientGone,
    upstreamHeaders: upstreamTraceHeaders(trace),
    onFirstToken: watched ? () => gen.flow.observeTtft(pool, performance.now() - rec.t0) : null,
    beforeFirstWrite: heartbeat ? () => heartbeat.stop() : null,
    headersAlreadySent: () => heartbeat?.started ?? false,
  };
  applyOutcome(ctx, await forward(ctx));
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

function upstreamTraceHeaders(trace: TraceContext): Record<string, string> {
  const h: Record<string, string> = { traceparent: traceparentOf(trace) };
  if (trace.tracestate !== null) h.tracestate = trace.tracestate;
  return h;
}
