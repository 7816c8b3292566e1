// The request pipeline's named hooks. Every side effect of a request's attempts and of its end — the
// in-flight gauge, the adapter and prefix-index records, outlier ejection, the prefill view's decode fit,
// token correction, budget settlement, rollout gates, the region window, metrics and the log line — is a
// small plugin on one of them (plugins/), written once for every front door.
//
//   attempt     an attempt starts on the endpoint it was placed on (the queue's placement, or a retry's);
//               what the hook returns runs when the attempt ends, before the attempt's lease is released
//   attemptEnd  the attempt ended, its lease released: how it ended (AttemptEnd)
//   settle      the request is over, whatever became of it: exactly once, with its record complete
//
// Hooks run in the order they were registered; `settle`'s last is the log line.

import type { EndpointState } from "../endpoints/endpoint-state.js";
import type { Lease } from "../endpoints/lease.js";
import type { RequestFailure } from "../endpoints/outlier-ejection.js";
import type { RequestPlan } from "../plan/request-plan.js";
import type { PoolRuntime } from "./pool-runtime.js";
import type { RequestRecord } from "./request-record.js";

/** One attempt to serve a request from one endpoint. */
export interface Attempt {
  /** The pool of the generation the request arrived under. */
  readonly pool: PoolRuntime;
  readonly plan: RequestPlan;
  readonly rec: RequestRecord;
  readonly endpoint: EndpointState;
  readonly lease: Lease;
}

/** Token counts the engine reported for the attempt. */
export interface AttemptUsage {
  readonly promptTokens: number | null;
  readonly completionTokens: number | null;
}

/** How an attempt ended, as every front door reports it. */
export type AttemptEnd =
  /** The engine answered: a success, its own 4xx, or a reply that broke after it started. */
  | {
      readonly kind: "answered";
      readonly status: number;
      readonly brokenMidStream: boolean;
      readonly usage: AttemptUsage | null;
    }
  /** The client left (or the gateway cut it at shutdown). */
  | { readonly kind: "cancelled" }
  /** A deadline passed: before any byte (the whole exchange's) or after the reply started. */
  | { readonly kind: "timed_out" }
  /** The engine is full, not broken (429/503): skip it for `retryAfterMs`. */
  | { readonly kind: "backpressure"; readonly retryAfterMs: number }
  /** The engine failed the request before the client saw anything. */
  | { readonly kind: "failed"; readonly failure: RequestFailure }
  /** The request's adapter could not be registered on the engine; nothing was sent. */
  | { readonly kind: "adapter_failed" };

export interface RequestHook {
  /** What the plugin is, for errors and the README's list. */
  readonly name: string;
  readonly attempt?: (a: Attempt) => (() => void) | undefined;
  readonly attemptEnd?: (a: Attempt, end: AttemptEnd) => void;
  readonly settle?: (rec: RequestRecord) => void;
}

/** An attempt under way: what its hooks hold until it ends. */
export class RunningAttempt implements Attempt {
  readonly pool: PoolRuntime;
  readonly plan: RequestPlan;
  readonly rec: RequestRecord;
  readonly endpoint: EndpointState;
  readonly lease: Lease;
  private undo: (() => void)[] | null = null;
  private ended = false;

  constructor(
    private readonly hooks: HookSet,
    pool: PoolRuntime,
    plan: RequestPlan,
    rec: RequestRecord,
    endpoint: EndpointState,
    lease: Lease,
  ) {
    this.pool = pool;
    this.plan = plan;
    this.rec = rec;
    this.endpoint = endpoint;
    this.lease = lease;
  }

  /** Runs the `attempt` hooks; called once, by HookSet.begin. */
  start(hooks: readonly NonNullable<RequestHook["attempt"]>[]): void {
    for (const h of hooks) {
      const undo = h(this);
      if (undo === undefined) continue;
      if (this.undo === null) this.undo = [undo];
      else this.undo.push(undo);
    }
  }

  /**
   * Ends the attempt, once: what the hooks hold, then the lease (which may place a queued request at
   * once), then the `attemptEnd` hooks.
   */
  end(how: AttemptEnd): void {
    if (this.ended) return;
    this.ended = true;
    const undo = this.undo;
    if (undo !== null) for (let i = undo.length - 1; i >= 0; i--) undo[i]!();
    this.lease.release();
    for (const h of this.hooks.attemptEnds) h(this, how);
  }
}

/** The registered hooks, by hook point. */
export class HookSet {
  readonly names: readonly string[];
  private readonly attempts: readonly NonNullable<RequestHook["attempt"]>[];
  readonly attemptEnds: readonly NonNullable<RequestHook["attemptEnd"]>[];
  private readonly settles: readonly NonNullable<RequestHook["settle"]>[];

  constructor(hooks: readonly RequestHook[]) {
    const names = new Set<string>();
    for (const h of hooks) {
      if (names.has(h.name)) throw new Error(`request hook ${h.name} is registered twice`);
      names.add(h.name);
    }
    this.names = [...names];
    this.attempts = hooks.flatMap((h) => (h.attempt ? [h.attempt] : []));
    this.attemptEnds = hooks.flatMap((h) => (h.attemptEnd ? [h.attemptEnd] : []));
    this.settles = hooks.flatMap((h) => (h.settle ? [h.settle] : []));
  }

  /** An attempt starts on `endpoint` under `lease`; end it with `end()` whatever happens. */
  begin(
    pool: PoolRuntime,
    plan: RequestPlan,
    rec: RequestRecord,
    endpoint: EndpointState,
    lease: Lease,
  ): RunningAttempt {
    const a = new RunningAttempt(this, pool, plan, rec, endpoint, lease);
    a.start(this.attempts);
    return a;
  }

  /** The request is over: the `settle` hooks, in order. */
  settle(rec: RequestRecord): void {
    for (const h of this.settles) h(rec);
  }
}
