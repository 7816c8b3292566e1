// The gateway's hand-off: one placed request sent upstream, each attempt inside the pipeline's attempt
// hooks (the lease held exactly while it runs; the in-flight gauge, adapter and prefix-index records,
// outlier report, decode fit and token correction as plugins, hooks.ts), and a retry on the best untried
// endpoint while nothing has reached the client and the retry budget allows. It returns one typed
// outcome; `applyOutcome` maps it to the request's status and log fields in one place.

import type { ServerResponse } from "node:http";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Placement } from "../flow/placement.js";
import { placeOn } from "../flow/request-ticket.js";
import { type AttemptOutcome, attemptUpstream, type ClientGone } from "../proxy/upstream-attempt.js";
import { startAttempt } from "./attempt-start.js";
import { noEndpointError } from "./candidates.js";
import type { AttemptEnd } from "./hooks.js";
import type { Placed } from "./place.js";
import type { Generation } from "./pool-runtime.js";
import type { RequestRecord } from "./request-record.js";
import type { GatewayRuntime } from "./runtime.js";

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
  /** The pool, plan, candidates and picker of the placed request. */
  readonly placed: Placed;
  readonly rec: RequestRecord;
  readonly res: ServerResponse;
  readonly clientGone: ClientGone;
  readonly upstreamHeaders: Record<string, string>;
  readonly onFirstToken: (() => void) | null;
  readonly beforeFirstWrite: (() => void) | null;
  /** After a stream heartbeat the client got 200 whatever the engine said. */
  readonly headersAlreadySent: () => boolean;
}

/** Sends the placed request, retrying before the first byte; see the file header. */
export async function forward(ctx: ForwardContext): Promise<ForwardOutcome> {
  const budget = ctx.placed.pool.retryBudget;
  budget.begin();
  const retry = { held: false };
  try {
    return await attempts(ctx, ctx.placed.placement, retry);
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
  const { gw, rec } = ctx;
  const { pool, plan } = ctx.placed;
  const { decision } = plan;
  const settings = ctx.gen.config.gateway;
  const timeouts = settings.timeouts;
  const maxAttempts = Math.max(1, settings.retry.maxAttempts);
  const tried = new Set<EndpointState>();
  let placement = first;
  for (;;) {
    const ep = placement.endpoint;
    const attempt = startAttempt(gw, pool, plan, rec, placement);
    const lease = placement.lease;
    const onFirstToken = () => {
      // Prefill is over on the engine: its view frees that work at once, which may let a queued request go.
      lease.firstToken();
      ctx.onFirstToken?.();
    };
    let outcome: AttemptOutcome;
    try {
      const loading = adapterLoad(ctx, ep);
      outcome =
        (loading === null ? null : await loading) ??
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
              "x-ai-model-version": ep.modelVersion ?? decision.modelVersion,
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
    } catch (err) {
      attempt.end({ kind: "cancelled" });
      throw err;
    }
    attempt.end(attemptEnd(outcome));
    switch (outcome.kind) {
      case "done":
        return { kind: "answered", endpoint: ep, attempt: outcome };
      case "cancelled":
        return { kind: "cancelled", firstTokenAt: outcome.firstTokenAt };
      case "timeout_after_start":
        return { kind: "broken_after_start" };
      case "total_timeout":
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
        const out = !backpressure && outcome.reason !== "adapter" && !ep.routable(Date.now());
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
          const pick = ctx.placed.pickAmong(ctx.placed.candidates.filter((e) => !tried.has(e)));
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
 * engine, which may serve everything else well, is not ejected for it. Null (no promise) when there is
 * nothing to register, as for nearly every request.
 */
function adapterLoad(ctx: ForwardContext, ep: EndpointState): Promise<AttemptOutcome | null> | null {
  const { adapter } = ctx.placed.plan.decision.target;
  const path = ctx.placed.plan.decision.adapterPath;
  if (adapter === null || path === null) return null;
  const loading = ctx.gw.adapterLoader.ensure(ctx.gw.dispatcher(ep), ep, adapter, path);
  if (loading === null) return null;
  return loading.then((r) =>
    r.ok ? null : { kind: "retryable", reason: "adapter", status: null, detail: r.detail },
  );
}

/** How an attempt's outcome ended it, for the attempt hooks. */
function attemptEnd(outcome: AttemptOutcome): AttemptEnd {
  switch (outcome.kind) {
    case "done": {
      const u = outcome.usage;
      return {
        kind: "answered",
        status: outcome.status,
        brokenMidStream: outcome.brokenMidStream !== null,
        usage: u
          ? { promptTokens: u.prompt_tokens ?? null, completionTokens: u.completion_tokens ?? null }
          : null,
      };
    }
    case "cancelled":
      return { kind: "cancelled" };
    case "timeout_after_start":
    case "total_timeout":
      return { kind: "timed_out" };
    case "retryable":
      if (outcome.reason === "status" && (outcome.status === 429 || outcome.status === 503))
        return { kind: "backpressure", retryAfterMs: (outcome.retryAfterSeconds ?? 1) * 1000 };
      if (outcome.reason === "adapter") return { kind: "adapter_failed" };
      return {
        kind: "failed",
        failure: outcome.reason === "status" ? (outcome.status ?? 500) : outcome.reason,
      };
  }
}

/**
 * The request's status and log fields from the forward outcome — the one place they are set. A failed
 * outcome is thrown, so the handler's error path sends it (or, after a heartbeat, its error event).
 */
export function applyOutcome(ctx: ForwardContext, outcome: ForwardOutcome): void {
  const { gw, rec } = ctx;
  const { plan } = ctx.placed;
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
      rec.recordAnswer(a, ctx.headersAlreadySent() ? 200 : a.status);
      rec.runtimeQueueMs = a.timing.queueMs;
      rec.prefillMs = a.timing.prefillMs;
      rec.decodeMs = a.timing.decodeMs;
      return;
    }
  }
}
