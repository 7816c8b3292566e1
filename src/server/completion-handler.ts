// The request path of POST /v1/chat/completions and /v1/completions, one stage after another:
// identify → read and profile → route → queue (flow control) and pick → forward (retrying before the
// first byte) → settle.
// Whatever happens, counters are released and exactly one log line is written.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { PickResult } from "../picker/framework/types.js";
import { type ApiKind, profileRequest } from "../profile/request-profile.js";
import { attemptUpstream } from "../proxy/upstream-attempt.js";
import { routeRequest } from "../route/route-request.js";
import { ClientGone } from "./client-gone.js";
import type { GatewayRuntime, Placement } from "./gateway-runtime.js";
import { traceIdFrom } from "./identify.js";
import { pickerFor } from "./pick-request.js";
import { readBody } from "./request-body.js";
import { RequestRecord } from "./request-record.js";
import { RequestTicket } from "./request-ticket.js";
import { StreamHeartbeat } from "./stream-heartbeat.js";

const RETRY_LATER: readonly string[] = ["retry_later"];

const PATHS: Record<ApiKind, string> = { chat: "/v1/chat/completions", completion: "/v1/completions" };

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
  const rec = new RequestRecord(traceIdFrom(req.headers));
  res.setHeader("x-ai-trace-id", rec.traceId);
  res.setHeader("x-request-id", rec.traceId);
  const clientGone = new ClientGone();
  res.on("close", () => {
    if (!res.writableFinished) clientGone.abort(new Error("client disconnected"));
  });
  const live: Live = { heartbeat: null };
  try {
    await serve(gw, kind, req, res, rec, clientGone, live);
  } catch (err) {
    if (clientGone.aborted) return; // the caller left: logged as cancelled below
    const e =
      err instanceof GatewayError
        ? err
        : new GatewayError("internal_error", `internal error: ${(err as Error).message}`);
    rec.errorCode = e.code;
    rec.httpStatus = e.status;
    rec.status = e.status >= 500 ? "error" : "rejected";
    gw.metrics.rejections.labels(e.code, rec.tenant ?? "unknown").inc();
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
    settle(gw, rec);
  }
}

async function serve(
  gw: GatewayRuntime,
  kind: ApiKind,
  req: IncomingMessage,
  res: ServerResponse,
  rec: RequestRecord,
  clientGone: ClientGone,
  live: Live,
): Promise<void> {
  const config = gw.config;
  rec.configVersion = config.version;
  // Identify before reading the body: an unknown caller does not get to upload 4 MiB first.
  const who = gw.identifier.identify(req.headers, req.socket.remoteAddress);
  rec.tenant = who.tenant;
  const raw = await readBody(req, config.gateway.limits);
  let json: unknown;
  try {
    json = JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw new GatewayError("invalid_json", `the request body is not valid JSON: ${(err as Error).message}`, {
      param: "body",
    });
  }
  const profile = profileRequest(kind, json, req.headers);
  rec.task = profile.task;
  rec.requestClass = profile.requestClass;
  rec.modelAlias = profile.modelAlias;
  rec.stream = profile.stream;
  if (config.gateway.logging.prompts)
    rec.prompt = kind === "chat" ? profile.body.messages : profile.body.prompt;

  const aliasPools = config.route.aliases.get(profile.modelAlias);
  const firstPool = aliasPools ? config.pools.get(aliasPools.defaultPool) : undefined;
  const correctionModel = firstPool?.model ?? profile.modelAlias;
  const inputTokens = gw.correction.apply(correctionModel, profile.inputTokensRaw);
  rec.inputTokensEstimated = inputTokens;
  const decision = routeRequest(
    config,
    {
      modelAlias: profile.modelAlias,
      task: profile.task,
      requestClass: profile.requestClass,
      inputTokens,
      maxTokens: profile.maxTokens,
    },
    { explain: false },
  );
  if (!decision.ok) {
    rec.pool = decision.route;
    throw new GatewayError(decision.code, decision.message, {
      param: decision.param,
      route: decision.route,
      fallbackOptions: decision.fallbackOptions,
      status: decision.status,
    });
  }
  rec.taskKnown = decision.taskKnown;
  rec.pool = decision.pool;
  rec.routeReason = decision.reason;
  rec.reasonLabel = decision.reasonLabel;
  rec.modelVersion = decision.modelVersion;
  rec.maxTokens = decision.maxTokens;
  gw.metrics.routeDecisions.labels(decision.pool, decision.reasonLabel).inc();

  const upstreamBody: Record<string, unknown> = {
    ...profile.body,
    model: decision.upstreamModel,
    max_tokens: decision.maxTokens,
  };
  delete upstreamBody.max_completion_tokens;
  if (profile.stream) {
    // Always ask for usage upstream: it settles token accounting; the frame is dropped if the caller did not ask.
    const so = (profile.body.stream_options as Record<string, unknown> | undefined) ?? {};
    upstreamBody.stream_options = { ...so, include_usage: true };
  }
  const body = Buffer.from(JSON.stringify(upstreamBody));
  const pool = gw.pools.get(decision.pool);
  if (!pool)
    throw new GatewayError("no_healthy_endpoint", `pool ${decision.pool} has no endpoints`, {
      route: decision.pool,
    });
  const cost = inputTokens + decision.maxTokens;
  const tried = new Set<EndpointState>();
  const timeouts = config.gateway.timeouts;
  const maxAttempts = Math.max(1, config.gateway.retry.maxAttempts);
  pool.retryBudget.recordRequest();

  const picker = pool.picker;
  const { request: pickRequest, pickAmong } = pickerFor(
    picker,
    kind,
    profile.body,
    { upstreamModel: decision.upstreamModel, maxTokens: decision.maxTokens, inputTokens },
    req.headers,
  );
  const blockHashes = pickRequest.blockHashes;
  const noEndpoint = (pick: PickResult<EndpointState>) => {
    const why = tried.size > 0 ? `every endpoint of pool ${decision.pool} failed this request` : pick.reason;
    return new GatewayError("no_healthy_endpoint", `pool ${decision.pool}: ${why}`, {
      route: decision.pool,
      retryAfterSeconds: 1,
      fallbackOptions: pick.backupPool ? [`pool:${pick.backupPool}`, "retry_later"] : ["retry_later"],
    });
  };

  // No endpoint can take it at all (none healthy): say so now rather than queue for nothing.
  const now = Date.now();
  if (!pool.endpoints.some((e) => e.routable(now))) throw noEndpoint(pickAmong(pool.endpoints));

  const heartbeatMs = config.gateway.streaming.heartbeatMs;
  const heartbeat =
    profile.stream && heartbeatMs > 0
      ? new StreamHeartbeat(res, heartbeatMs, rec.t0, {
          "x-ai-route-pool": decision.pool,
          "x-ai-route-reason": decision.reason,
          "x-ai-model-version": decision.modelVersion,
        })
      : null;
  live.heartbeat = heartbeat;

  // Flow control: wait in the gateway's queue until an endpoint is below its saturation bounds.
  const flow = gw.flow.pools.get(decision.pool)!;
  const admitted = flow.admit(
    new RequestTicket({
      priority: decision.priority,
      tenant: rec.tenant ?? "anonymous",
      cost,
      maxQueueMs: decision.maxQueueMs,
      gate: gw.flow.gateFor(decision.rule),
      fallbackOptions: decision.queuePolicy?.fallbackOptions ?? RETRY_LATER,
      endpoints: pool.endpoints,
      bounds: flow.settings,
      pickAmong,
      clientGone,
    }),
  );
  let placement: Placement;
  try {
    placement = admitted instanceof Promise ? await admitted : admitted;
  } catch (err) {
    rec.queueLeftAt = performance.now();
    throw err;
  }
  rec.dispatchedAt = performance.now();
  if (heartbeat) heartbeat.stage = "waiting for the first token";
  // A batch pause watching this pool hears of each streamed first token as it happens.
  const watched = profile.stream && gw.flow.watches(decision.pool);
  gw.metrics.queueSeconds.labels(decision.pool).observe((rec.dispatchedAt - rec.t0) / 1000);

  for (;;) {
    const { pick, lease } = placement;
    const ep = placement.endpoint;
    rec.pickMode = pick.mode;
    rec.pickReason = pick.reason;
    rec.pickScores = pick.topScores.map((t) => `${t.endpoint}=${t.total.toFixed(3)}`).join(" ");
    if (pick.mode !== "metrics") rec.addFallback(`pick:${pick.mode}`);
    // What the engine will now hold, so the next request of this prefix finds it.
    picker.index.record(ep.name, blockHashes);
    rec.attempts++;
    rec.endpoint = ep.name;
    rec.kvCacheUsedRatio = ep.kvUsage;
    const inflight = gw.metrics.inflight.labels(decision.pool, ep.name);
    inflight.inc();
    let outcome: Awaited<ReturnType<typeof attemptUpstream>>;
    try {
      outcome = await attemptUpstream(
        gw.dispatcher(ep),
        {
          url: ep.url,
          path: PATHS[kind],
          body,
          stream: profile.stream,
          clientWantsUsage: profile.includeUsage,
          responseHeaders: {
            "x-ai-route-pool": decision.pool,
            "x-ai-route-reason": decision.reason,
            "x-ai-model-version": decision.modelVersion,
            "x-ai-endpoint": ep.name,
          },
          traceId: rec.traceId,
          timeouts,
          onFirstToken: watched ? () => gw.flow.observeTtft(decision.pool, performance.now() - rec.t0) : null,
          beforeFirstWrite: heartbeat ? () => heartbeat.stop() : null,
        },
        res,
        clientGone,
      );
    } finally {
      lease.release();
      inflight.dec();
    }
    if (outcome.kind === "retryable") {
      ep.reportFailure(outcome.reason === "status" ? (outcome.status ?? 500) : outcome.reason);
      rec.addFallback(`retry:${ep.name}:${outcome.reason}${outcome.status ? `=${outcome.status}` : ""}`);
      tried.add(ep);
      if (rec.attempts < maxAttempts && pool.retryBudget.tryRetry()) {
        // A retry does not queue again: it goes to the best endpoint not yet tried, room or not.
        const pick = pickAmong(pool.endpoints.filter((e) => !tried.has(e)));
        if (!pick.endpoint) throw noEndpoint(pick);
        gw.metrics.retries.labels(decision.pool, outcome.reason).inc();
        placement = { endpoint: pick.endpoint, lease: pick.endpoint.acquire(cost), pick };
        continue;
      }
      const timeout = outcome.reason === "timeout";
      throw new GatewayError(
        timeout ? "upstream_timeout" : "upstream_unavailable",
        `the engine did not answer (${outcome.detail}) after ${rec.attempts} attempt(s)`,
        { route: decision.pool, retryAfterSeconds: 1, fallbackOptions: ["retry_later"] },
      );
    }
    if (outcome.kind === "cancelled") {
      rec.firstTokenAt = outcome.firstTokenAt;
      rec.clientCancelled = true;
      rec.status = "client_cancelled";
      rec.httpStatus = 499;
      if (!gw.cutting) gw.metrics.clientCancels.labels(decision.pool).inc();
      return;
    }
    if (outcome.kind === "total_timeout") {
      ep.reportFailure("timeout");
      throw new GatewayError(
        "upstream_timeout",
        `the engine did not answer within timeouts.totalMs (${timeouts.totalMs} ms)`,
        {
          route: decision.pool,
          retryAfterSeconds: 1,
          fallbackOptions: ["retry_later"],
        },
      );
    }
    if (outcome.kind === "timeout_after_start") {
      ep.reportFailure("timeout");
      rec.status = "broken_stream";
      rec.errorCode = "upstream_timeout";
      rec.httpStatus = 200;
      return;
    }
    ep.reportSuccess();
    // After a heartbeat the client got 200 whatever the engine said (a refusal went out as an event).
    rec.httpStatus = heartbeat?.started ? 200 : outcome.status;
    rec.firstTokenAt = outcome.firstTokenAt;
    rec.runtimeQueueMs = outcome.timing.queueMs;
    rec.prefillMs = outcome.timing.prefillMs;
    rec.decodeMs = outcome.timing.decodeMs;
    if (outcome.usage) {
      rec.inputTokensActual = outcome.usage.prompt_tokens ?? null;
      rec.outputTokens = outcome.usage.completion_tokens ?? null;
      rec.cachedTokens = outcome.usage.prompt_tokens_details?.cached_tokens ?? null;
      if (rec.inputTokensActual !== null) {
        gw.correction.observe(correctionModel, profile.inputTokensRaw, rec.inputTokensActual);
      }
    }
    if (outcome.upstreamClientError) {
      rec.status = "engine_rejected";
      rec.errorCode = `engine_${outcome.status}`;
    } else if (outcome.brokenMidStream) {
      rec.status = "broken_stream";
      rec.errorCode = "upstream_error";
      ep.reportFailure("reset");
    }
    return;
  }
}

/** Metrics and the log line, once per request. */
function settle(gw: GatewayRuntime, rec: RequestRecord): void {
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
  gw.log.write(rec.toLogLine(now));
}
