// One pool's flow control: a request leaves the gateway only when an endpoint has room (saturation
// bounds), in priority order with tenant fairness; otherwise it waits here, where order can still change,
// until its maxQueueMs. A client that leaves while queued leaves the queue at once. Pools sharing engines
// keep their priority across pools: a request does not go ahead of a higher-priority pool's waiting one
// (its rivals), and the queue sweep visits pools highest priority first.

import type { PoolFlowSettings } from "../config/inference-pool.js";
import { GatewayError } from "../errors/gateway-error.js";
import { FairQueue, type QueueEntry } from "./fair-queue.js";
import { LongPrefillGuard } from "./long-prefill.js";
import type { PauseGate } from "./pause-gate.js";
import { QueueSweep } from "./queue-sweep.js";

/** What one request asks of its pool's flow. */
export interface FlowTicket<P> {
  readonly priority: number;
  readonly tenant: string;
  /** Input + max output tokens: the tenant's fairness charge. */
  readonly cost: number;
  /** Prompt tokens to prefill: shortest first inside the tenants' fair share (fair-queue.ts). */
  readonly work?: number;
  readonly maxQueueMs: number;
  /** The batch pause this request's rule is subject to, if any. */
  readonly gate: PauseGate | null;
  readonly fallbackOptions: readonly string[];
  readonly signal: AbortSignal;
  /**
   * Places the request on an endpoint with room and claims it (synchronously, so the next placement sees
   * the claim), or returns null when no endpoint has room.
   */
  place(): P | null;
  /**
   * At its maxQueueMs, before it fails with queue_timeout: places it within the hard bounds alone. The
   * soft bounds (engine queues, KV use, predicted wait) keep engines' queues short while the gateway can
   * still reorder; they must not turn a request an engine could serve into an error. Absent: no last try.
   */
  placeAtDeadline?(): P | null;
  /**
   * After `place()` returned null: `full` when the pool has no room (nothing behind it can go either),
   * `no_match` when there is room but not for this request (its adapter has no slot, say), so requests
   * behind it may still go. Absent: `full`.
   */
  readonly lastMiss?: "full" | "no_match" | null;
  /**
   * Requests with the same key are refused by the same filters (the same model, version and adapter):
   * after one missed with `no_match`, the others are passed over in that round without a pick.
   */
  readonly matchKey?: string;
  /** Hook: the request starts to wait in the gateway queue (it is not placed at once). */
  onQueued?(): void;
}

interface Waiter<P> {
  readonly ticket: FlowTicket<P>;
  readonly resolve: (placed: P) => void;
  readonly reject: (err: unknown) => void;
  timer: NodeJS.Timeout | null;
  abort: (() => void) | null;
  entry: QueueEntry<Waiter<P>> | null;
}

export type QueueOutcome = "dispatched" | "timed_out" | "cancelled" | "refused_full";

export class PoolFlow<P> {
  private readonly queue = new FairQueue<Waiter<P>>();
  private scheduled = false;
  private pumping = false;
  private closed = false;
  private readonly sweep: QueueSweep;
  /** Pools of higher priority on engines this pool also uses (FlowControl.shareEngines). */
  private readonly rivals: PoolFlow<P>[] = [];
  /** Requests that waited, and were dispatched / timed out / cancelled / refused as the queue was full. */
  readonly stats = { queued: 0, dispatched: 0, timedOut: 0, cancelled: 0, refusedFull: 0 };

  /** Removed by a reload: what waits here still goes (or times out), nothing new comes. */
  retired = false;
  /** Holds long prompts back while short ones arrive (flow/long-prefill.ts). */
  readonly longPrefill: LongPrefillGuard;

  constructor(
    readonly pool: string,
    public settings: PoolFlowSettings,
    private readonly onOutcome: (outcome: QueueOutcome) => void = () => {},
    /** The sweep shared by the gateway's pools; absent: one of its own. */
    sweep?: QueueSweep,
  ) {
    this.longPrefill = new LongPrefillGuard(settings.longPrefill);
    if (sweep) this.sweep = sweep;
    else {
      this.sweep = new QueueSweep();
      this.sweep.add(this);
    }
  }

  /**
   * A reload kept this pool: new settings for requests from now on, the waiting ones keep their place,
   * and the rivals are named again (FlowControl.shareEngines).
   */
  reconfigure(settings: PoolFlowSettings): void {
    this.settings = settings;
    this.longPrefill.settings = settings.longPrefill;
    this.rivals.length = 0;
    this.longPrefill.rivals.length = 0;
  }

  /** `pool`, of higher priority, dispatches to some of the same engines. */
  addRival(pool: PoolFlow<P>): void {
    if (pool === this || this.rivals.includes(pool)) return;
    this.rivals.push(pool);
    this.longPrefill.rivals.push(pool.longPrefill);
    pool.longPrefill.watched = true;
  }

  get depth(): number {
    return this.queue.size;
  }

  bandSizes(): { priority: number; size: number }[] {
    return this.queue.bandSizes();
  }

  /**
   * Places the request now when nothing of its band or above waits ahead of it, here or in a rival pool,
   * and it is not paused; otherwise queues it. Resolves with the placement; rejects with `queue_full`,
   * `queue_timeout`, `inference_queue_paused`, or the abort reason when the client leaves.
   */
  admit(t: FlowTicket<P>): P | Promise<P> {
    if (!this.settings.enabled) {
      const p = t.place();
      if (p !== null) return p;
    } else if (!t.gate?.paused) {
      const head = this.queue.size === 0 ? null : this.queue.peek(eligible);
      if (head === null || head.priority < t.priority) {
        if (this.rivalWaits(t.priority)) return this.wait(t, false);
        const p = t.place();
        if (p !== null) return p;
      }
    }
    return this.wait(t);
  }

  /** The highest priority waiting here and not paused, or null. */
  headPriority(): number | null {
    return this.queue.size === 0 ? null : (this.queue.peek(eligible)?.priority ?? null);
  }

  /**
   * A rival pool has a request above `priority` waiting: this one queues behind it rather than take
   * the engine capacity the rival waits for. It then goes at the next sweep or event, after the rival's
   * turn, if there is room for it still (on engines the rival does not use, say).
   */
  private rivalWaits(priority: number): boolean {
    for (const r of this.rivals) {
      const h = r.headPriority();
      if (h !== null && h > priority) return true;
    }
    return false;
  }

  /** Something changed (a lease released, a scrape landed, a pause lifted): look at the queue soon. */
  notify(): void {
    if (this.scheduled || this.queue.size === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  /** Refuses everything still queued (gateway shutting down). */
  close(reason: string): void {
    this.closed = true;
    for (const e of [...this.queue.values()]) {
      this.queue.remove(e);
      this.finish(e.value);
      e.value.reject(
        new GatewayError("upstream_unavailable", reason, { route: this.pool, retryAfterSeconds: 1 }),
      );
    }
  }

  /** Queues `t`; `look`: examine the queue at once (not when it waits behind a rival's turn). */
  private wait(t: FlowTicket<P>, look = true): Promise<P> {
    if (this.closed) {
      return Promise.reject(new GatewayError("upstream_unavailable", "the gateway is shutting down"));
    }
    if (this.queue.size >= this.settings.maxQueuedRequests) {
      this.stats.refusedFull++;
      this.onOutcome("refused_full");
      return Promise.reject(
        new GatewayError(
          "queue_full",
          `pool ${this.pool}: the gateway queue holds ${this.queue.size} requests (maxQueuedRequests)`,
          { route: this.pool, retryAfterSeconds: 1, fallbackOptions: t.fallbackOptions },
        ),
      );
    }
    if (t.signal.aborted) return Promise.reject(t.signal.reason);
    this.stats.queued++;
    t.onQueued?.();
    return new Promise<P>((resolve, reject) => {
      const w: Waiter<P> = { ticket: t, resolve, reject, timer: null, abort: null, entry: null };
      w.entry = this.queue.push(w, t);
      w.timer = setTimeout(() => this.expire(w), t.maxQueueMs);
      w.abort = () => {
        if (!w.entry || !this.queue.remove(w.entry)) return;
        this.stats.cancelled++;
        this.onOutcome("cancelled");
        this.finish(w);
        reject(t.signal.reason);
      };
      t.signal.addEventListener("abort", w.abort, { once: true });
      this.sweep.arm();
      if (look) this.notify();
    });
  }

  private expire(w: Waiter<P>): void {
    if (!w.entry) return;
    const last = w.ticket.gate?.paused ? null : (w.ticket.placeAtDeadline?.() ?? null);
    if (last !== null) {
      this.queue.take(w.entry);
      this.stats.dispatched++;
      this.onOutcome("dispatched");
      this.finish(w);
      w.resolve(last);
      return;
    }
    if (!this.queue.remove(w.entry)) return;
    this.stats.timedOut++;
    this.onOutcome("timed_out");
    this.finish(w);
    const t = w.ticket;
    const gate = t.gate;
    if (gate?.paused) {
      w.reject(
        new GatewayError(
          "inference_queue_paused",
          `pool ${this.pool} is paused: pool ${gate.when.pool} TTFT P95 ${fmtMs(gate.lastP95Ms)} is above ` +
            `${gate.when.ttftP95MsGt} ms (rule ${gate.rule}); waited ${t.maxQueueMs} ms (maxQueueMs)`,
          {
            route: this.pool,
            retryAfterSeconds: gate.retryAfterSeconds(),
            fallbackOptions: t.fallbackOptions,
          },
        ),
      );
      return;
    }
    w.reject(
      new GatewayError(
        "queue_timeout",
        `pool ${this.pool} had no endpoint with room within maxQueueMs (${t.maxQueueMs} ms)`,
        {
          route: this.pool,
          retryAfterSeconds: Math.max(1, Math.ceil(t.maxQueueMs / 1000)),
          fallbackOptions: t.fallbackOptions,
        },
      ),
    );
  }

  private finish(w: Waiter<P>): void {
    if (w.timer) clearTimeout(w.timer);
    if (w.abort) w.ticket.signal.removeEventListener("abort", w.abort);
    w.entry = null;
  }

  /**
   * Dispatches from the head while endpoints have room. A request that cannot go though the pool has room
   * (no endpoint for it now) is passed over for this round, so it does not hold up the ones behind it.
   */
  pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    let passed: Set<string> | null = null;
    const go = (w: Waiter<P>) => eligible(w) && !passed?.has(w.ticket.matchKey ?? "");
    try {
      for (;;) {
        const head = this.queue.peek(go);
        if (!head) break;
        const w = head.value;
        const placed = w.ticket.place();
        if (placed === null) {
          if (w.ticket.lastMiss !== "no_match") break;
          passed ??= new Set();
          passed.add(w.ticket.matchKey ?? "");
          continue;
        }
        this.queue.take(head);
        this.stats.dispatched++;
        this.onOutcome("dispatched");
        this.finish(w);
        w.resolve(placed);
      }
    } finally {
      this.pumping = false;
    }
  }
}

function eligible<P>(w: Waiter<P>): boolean {
  return !w.ticket.gate?.paused;
}

function fmtMs(v: number | null): string {
  return v === null ? "n/a" : `${Math.round(v)} ms`;
}
