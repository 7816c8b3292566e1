// The forward stage: one placed request sent upstream, wrapped in what every attempt needs — the lease
// and the in-flight gauge held exactly while it runs, the endpoint's outcome reported to outlier
// ejection, the prefix index and adapter record told what the engine now holds, and a retry on the best
// untried endpoint while nothing has reached the client and the retry budget allows. It returns one
// typed outcome; `applyOutcome` maps it to the request's status and log fields in one place.

import type { ServerResponse } from "node:http";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { PickAmong, Placement } from "../flow/placement.js";
import { placeOn } from "../flow/request-ticket.js";
import type { RequestPlan } from "../plan/request-plan.js";
import { type AttemptOutcome, attemptUpstream, type ClientGone } from "../proxy/upstream-attempt.js";
import type { GatewayRuntime, Generation, PoolRuntime } from "./gateway-runtime.js";
import type { RequestRecord } from "./request-record.js";

export const API_PATHS = { chat: "/v1/chat/completions", completion: "/v1/completions" } as const;

export type ForwardOutcome =
  /** The engine answered (a success, its own 4xx, or a stream that broke after it started). */
  | {
      readonly kind: "answered";
      readonly endpoint: EndpointState;
      readonly attempt: AttemptOutcome & { kind: "done" };
    }
  | { readonly kind: "cancelled"; readonly firstTokenAt: number }
  /** A stream that had started missed a deadline: the client was told with an error event. */
  | { readonly kind: "broken_after_start" }
  /** Nothing reached the client: the caller sends this error. */
  | { readonly kind: "failed"; readonly error: GatewayError };

export interface ForwardContext {
  readonly gw: GatewayRuntime;
  /** The generation the request arrived under. */
  readonly gen: Generation;
  readonly pool: PoolRuntime;
  readonly plan: RequestPlan;
  readonly rec: RequestRecord;
  /** The endpoints that serve the request's model, version and adapter. */
  readonly candidates: readonly EndpointState[];
  readonly pickAmong: PickAmong;
  readonly res: ServerResponse;
  readonly clientGone: ClientGone;
  readonly upstreamHeaders: Record<string, string>;
  readonly onFirstToken: (() => void) | null;
  readonly beforeFirstWrite: (() => void) | null;
  /** After a stream heartbeat the client got 200 whatever the engine said. */
  readonly headersAlreadySent: () => boolean;
}

/** Sends the request from `first` on, retrying before the first byte; see the file header. */
export async function forward(ctx: ForwardContext, first: Placement): Promise<ForwardOutcome> {
  const budget = ctx.pool.retryBudget;
  budget.begin();
  const retry = { held: false };
  try {
    return await attempts(ctx, first, retry);
  } finally {
    if (retry.held) budget.retryDone();
    budget.end();
  }
}

async function attempts(
  ctx: ForwardContext,
  first: Placement,
  retry: { held: boolean },
): Promise<ForwardOutcome> {
  const { gw, pool, plan, rec } = ctx;
  const { decision } = plan;
  const settings = ctx.gen.config.gateway;
  const timeouts = settings.timeouts;
  const maxAttempts = Math.max(1, settings.retry.maxAttempts);
  const tried = new Set<EndpointState>();
  let placement = first;
  for (;;) {
    const ep = placement.endpoint;
    recordPick(rec, placement);
    // What the engine will now hold, so the next request of this prefix (or adapter) finds it.
    pool.picker.index.record(ep.name, plan.pickRequest.blockHashes);
    const adapter = decision.target.adapter;
    if (adapter !== null) {
      ep.adapterRecord.sent(adapter, ep.loras?.max ?? null);
      ep.adapterRecord.began(adapter);
    }
    rec.attempts++;
    rec.endpoint = ep.name;
    rec.modelVersion = ep.modelVersion ?? decision.modelVersion;
    rec.kvCacheUsedRatio = ep.kvUsage;
    const inflight = gw.metrics.inflight.labels(decision.pool, ep.name);
    inflight.inc();
    const lease = placement.lease;
    const onFirstToken = () => {
      // Prefill is over on the engine: its view frees that work at once, which may let a queued request go.
      lease.firstToken();
      ctx.onFirstToken?.();
    };
    let outcome: AttemptOutcome;
    try {
      outcome =
        (await registerAdapter(ctx, ep)) ??
        (await attemptUpstream(
          gw.dispatcher(ep),
          {
            url: ep.url,
            path: API_PATHS[plan.profile.kind],
            body: plan.upstreamBody,
            stream: plan.profile.stream,
            clientWantsUsage: plan.profile.includeUsage,
            responseHeaders: {
              "x-ai-route-pool": decision.pool,
              "x-ai-route-reason": decision.reason,
              "x-ai-model-version": rec.modelVersion,
              "x-ai-endpoint": ep.name,
            },
            traceId: rec.traceId,
            upstreamHeaders: ep.authorization
              ? { ...ctx.upstreamHeaders, authorization: ep.authorization }
              : ctx.upstreamHeaders,
            timeouts,
            onFirstToken,
            beforeFirstWrite: ctx.beforeFirstWrite,
          },
          ctx.res,
          ctx.clientGone,
        ));
    } finally {
      // The adapter's slot first: releasing the lease may place a queued request at once.
      if (adapter !== null) ep.adapterRecord.ended(adapter);
      lease.release();
      inflight.dec();
    }
    switch (outcome.kind) {
      case "done":
        lease.prefill?.reportOutput(outcome.usage?.completion_tokens ?? 0);
        if (outcome.brokenMidStream) ep.reportFailure("reset");
        else ep.reportSuccess();
        return { kind: "answered", endpoint: ep, attempt: outcome };
      case "cancelled":
        ep.reportAbandoned();
        return { kind: "cancelled", firstTokenAt: outcome.firstTokenAt };
      case "timeout_after_start":
        ep.reportFailure("timeout");
        return { kind: "broken_after_start" };
      case "total_timeout":
        ep.reportFailure("timeout");
        return {
          kind: "failed",
          error: new GatewayError(
            "upstream_timeout",
            `the engine did not answer within timeouts.totalMs (${timeouts.totalMs} ms)`,
            { route: decision.pool, retryAfterSeconds: 1, fallbackOptions: ["retry_later"] },
          ),
        };
      case "retryable": {
        const backpressure =
          outcome.reason === "status" && (outcome.status === 429 || outcome.status === 503);
        // Whether the endpoint is out now (this failure, or a sibling request's, marked it down or ejected it).
        let out = false;
        if (backpressure) {
          // Full, not broken: skip it for as long as it asked, count nothing against it.
          ep.reportBackpressure((outcome.retryAfterSeconds ?? 1) * 1000);
        } else if (outcome.reason !== "adapter") {
          ep.reportFailure(outcome.reason === "status" ? (outcome.status ?? 500) : outcome.reason);
          out = !ep.routable(Date.now());
        } else {
          // The adapter could not be loaded there: nothing of the engine's health, but a probe's slot ends.
          ep.reportAbandoned();
        }
        rec.addFallback(`retry:${ep.name}:${outcome.reason}${outcome.status ? `=${outcome.status}` : ""}`);
        tried.add(ep);
        if (retry.held) {
          pool.retryBudget.retryDone();
          retry.held = false;
        }
        // A retry away from an endpoint just taken out (down or ejected) adds nothing to a struggling
        // engine, so it needs no budget: a crash resets every request it held at once, and the budget
        // (meant against retry storms on a failing pool) failed some of them while others were healthy.
        const redirect = out && rec.attempts < maxAttempts;
        if (redirect || (rec.attempts < maxAttempts && pool.retryBudget.tryRetry())) {
          retry.held = !redirect;
          // A retry does not queue again: it goes to the best endpoint not yet tried, room or not.
          const pick = ctx.pickAmong(ctx.candidates.filter((e) => !tried.has(e)));
          if (!pick.endpoint) {
            return {
              kind: "failed",
              error: noEndpointError(
                decision.pool,
                `every endpoint of pool ${decision.pool} failed this request`,
                pick.backupPool,
                tried.size,
              ),
            };
          }
          gw.metrics.retries.labels(decision.pool, outcome.reason).inc();
          placement = placeOn(
            pick,
            plan.cost,
            plan.profile.stream,
            plan.decision.inputTokens,
            plan.decision.target.adapter,
          )!;
          continue;
        }
        if (backpressure) {
          return {
            kind: "failed",
            error: new GatewayError(
              "upstream_overloaded",
              `the engines are full (${outcome.detail.slice(0, 200)}) after ${rec.attempts} attempt(s)`,
              {
                route: decision.pool,
                status: outcome.status === 429 ? 429 : 503,
                retryAfterSeconds: outcome.retryAfterSeconds ?? 1,
                fallbackOptions: ["retry_later"],
              },
            ),
          };
        }
        const timeout = outcome.reason === "timeout";
        return {
          kind: "failed",
          error: new GatewayError(
            timeout ? "upstream_timeout" : "upstream_unavailable",
            `the engine did not answer (${outcome.detail}) after ${rec.attempts} attempt(s)`,
            { route: decision.pool, retryAfterSeconds: 1, fallbackOptions: ["retry_later"] },
          ),
        };
      }
    }
  }
}

/**
 * An engine that does not list the request's adapter first registers it (once, however many requests
 * wait). A failed registration is a failed attempt: the request goes to another endpoint, and the
 * engine, which may serve everything else well, is not ejected for it.
 */
async function registerAdapter(ctx: ForwardContext, ep: EndpointState): Promise<AttemptOutcome | null> {
  const { adapter } = ctx.plan.decision.target;
  const path = ctx.plan.decision.adapterPath;
  if (adapter === null || path === null) return null;
  const loading = ctx.gw.adapterLoader.ensure(ctx.gw.dispatcher(ep), ep, adapter, path);
  if (loading === null) return null;
  const r = await loading;
  if (r.ok) return null;
  return { kind: "retryable", reason: "adapter", status: null, detail: r.detail };
}

/** The picker's choice on the request's record (mode, reason, top scores, predicted TTFT). */
export function recordPick(rec: RequestRecord, placement: Placement): void {
  const { pick } = placement;
  rec.pickMode = pick.mode;
  rec.pickReason = pick.reason;
  rec.pickScores = pick.topScores.map((t) => `${t.endpoint}=${t.total.toFixed(3)}`).join(" ");
  // The estimate of the TTFT the log records (`ttft_ms`, from arrival): the time the request has spent
  // already, in the gateway queue and before, plus the step law's estimate from dispatch; the picker's
  // ranking value where the endpoint keeps no prefill view.
  const estimate = placement.lease.prefill?.estimatedMs;
  rec.predictedTtftMs = estimate === undefined ? pick.predictedTtftMs : rec.elapsedMs() + estimate;
  if (pick.mode !== "metrics") rec.addFallback(`pick:${pick.mode}`);
}

/**
 * No endpoint can serve the request: none is routable, or (`endpointsTried` > 0, the error's
 * `endpoints_tried`) each one tried failed it — the engines failed, which a caller that retries (the
 * batch runner) counts as an attempt rather than as a wait.
 */
export function noEndpointError(
  pool: string,
  why: string,
  backupPool: string | null,
  endpointsTried = 0,
): GatewayError {
  return new GatewayError("no_healthy_endpoint", `pool ${pool}: ${why}`, {
    route: pool,
    retryAfterSeconds: 1,
    fallbackOptions: backupPool ? [`pool:${backupPool}`, "retry_later"] : ["retry_later"],
    ...(endpointsTried > 0 ? { details: { endpoints_tried: endpointsTried } } : {}),
  });
}

/**
 * The request's status and log fields from the forward outcome — the one place they are set. A failed
 * outcome is thrown, so the handler's error path sends it (or, after a heartbeat, its error event).
 */
export function applyOutcome(ctx: ForwardContext, outcome: ForwardOutcome): void {
  const { gw, rec, plan } = ctx;
  switch (outcome.kind) {
    case "failed":
      throw outcome.error;
    case "cancelled":
      rec.firstTokenAt = outcome.firstTokenAt;
      rec.clientCancelled = true;
      rec.status = "client_cancelled";
      rec.httpStatus = 499;
      if (!gw.cutting) gw.metrics.clientCancels.labels(plan.decision.pool).inc();
      return;
    case "broken_after_start":
      rec.status = "broken_stream";
      rec.errorCode = "upstream_timeout";
      rec.httpStatus = 200;
      return;
    case "answered": {
      const a = outcome.attempt;
      rec.httpStatus = ctx.headersAlreadySent() ? 200 : a.status;
      rec.firstTokenAt = a.firstTokenAt;
      rec.runtimeQueueMs = a.timing.queueMs;
      rec.prefillMs = a.timing.prefillMs;
      rec.decodeMs = a.timing.decodeMs;
      if (a.usage) {
        rec.inputTokensActual = a.usage.prompt_tokens ?? null;
        rec.outputTokens = a.usage.completion_tokens ?? null;
        rec.cachedTokens = a.usage.prompt_tokens_details?.cached_tokens ?? null;
        // Learned per served base model (adapters share its tokenizer).
        if (rec.inputTokensActual !== null)
          gw.correction.observe(plan.decision.baseModel, plan.profile.inputTokensRaw, rec.inputTokensActual);
      }
      if (a.upstreamClientError) {
        rec.status = "engine_rejected";
        rec.errorCode = `engine_${a.status}`;
      } else if (a.brokenMidStream) {
        rec.status = "broken_stream";
        rec.errorCode = "upstream_error";
      }
      return;
    }
  }
}
