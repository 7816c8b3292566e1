// The gateway's flow control: a PoolFlow per pool, the TTFT windows that batch pauses watch, and the
// pause gates, re-evaluated every 250 ms. Transitions are logged with the figure that caused them.
// Pools keep their route priority where they share engines: one queue sweep visits them highest first,
// and a pool does not go ahead of a higher one's waiting requests on engines they share.

import { type GatewayConfigSet, poolPriorities } from "../config/config-set.js";
import { LatencyWindow } from "./latency-window.js";
import { PauseGate, type PauseTransition } from "./pause-gate.js";
import { PoolFlow, type QueueOutcome } from "./pool-flow.js";
import { QueueSweep } from "./queue-sweep.js";

export const EVALUATE_MS = 250;

export interface FlowListeners {
  /** A batch pause started or ended. */
  onTransition?(gate: PauseGate, t: PauseTransition): void;
  /** A request that had to wait stopped waiting. */
  onQueueOutcome?(pool: string, outcome: QueueOutcome): void;
}

export class FlowControl<P> {
  readonly pools = new Map<string, PoolFlow<P>>();
  /** Rule name → its pause gate. */
  readonly gates = new Map<string, PauseGate>();
  /** Watched pool → its TTFT windows (one per window length asked for). */
  private readonly windows = new Map<string, LatencyWindow[]>();
  private timer: NodeJS.Timeout | null = null;
  /** Each pool's route priority (its highest under any alias). */
  private readonly rank: Map<string, number>;
  private readonly sweep: QueueSweep;

  /**
   * `previous`: the flow control a reload replaces. Pools that are still there keep their queue (the
   * waiting requests keep their place) under their new settings; a rule's pause gate keeps its state
   * under the rule's new condition (the same object, which the waiting requests hold), a rule's gate
   * that is gone lifts, and TTFT windows keep their samples; removed pools' waiting requests still go,
   * or time out, as they would have.
   */
  constructor(
    config: GatewayConfigSet,
    private readonly listeners: FlowListeners = {},
    previous: FlowControl<P> | null = null,
  ) {
    this.rank = poolPriorities(config);
    this.sweep = previous?.sweep ?? new QueueSweep();
    const byPriority = [...config.pools.values()].sort((a, b) => this.rankOf(b.name) - this.rankOf(a.name));
    for (const pool of byPriority) {
      let flow = previous?.pools.get(pool.name);
      if (flow) flow.reconfigure(pool.flowControl);
      else {
        const onOutcome = (o: QueueOutcome) => listeners.onQueueOutcome?.(pool.name, o);
        flow = new PoolFlow<P>(pool.name, pool.flowControl, onOutcome, this.sweep);
      }
      this.pools.set(pool.name, flow);
    }
    const retired = [...(previous?.pools.values() ?? [])].filter((f) => !this.pools.has(f.pool));
    for (const f of retired) f.retired = true;
    this.sweep.set([...this.pools.values(), ...retired.filter((f) => f.depth > 0)]);
    for (const rule of config.route.rules) {
      const when = rule.queuePolicy?.pauseWhen;
      if (!when) continue;
      const windowMs = when.windowSeconds * 1000;
      const list = this.windows.get(when.pool) ?? [];
      let window = list.find((w) => w.windowMs === windowMs);
      if (!window) {
        window = previous?.windows.get(when.pool)?.find((w) => w.windowMs === windowMs);
        window ??= new LatencyWindow(windowMs);
        list.push(window);
        this.windows.set(when.pool, list);
      }
      const kept = previous?.gates.get(rule.name);
      if (kept) kept.reconfigure(rule.routeTo, when, window);
      this.gates.set(rule.name, kept ?? new PauseGate(rule.name, rule.routeTo, when, window));
    }
    // A rule that lost its pause, or is gone: what waits under its gate is no longer held by it.
    for (const [name, gate] of previous?.gates ?? []) if (!this.gates.has(name)) gate.lift(performance.now());
  }

  private rankOf(pool: string): number {
    return this.rank.get(pool) ?? 0;
  }

  /**
   * The named pools dispatch to one engine: each yields to those of higher priority there. Returns their
   * flows, highest priority first (the order freed capacity is offered in).
   */
  shareEngines(names: readonly string[]): PoolFlow<P>[] {
    const flows = [...names]
      .sort((a, b) => this.rankOf(b) - this.rankOf(a))
      .map((n) => this.pools.get(n))
      .filter((f): f is PoolFlow<P> => f !== undefined);
    for (const low of flows)
      for (const high of flows) if (this.rankOf(high.pool) > this.rankOf(low.pool)) low.addRival(high);
    return flows;
  }

  gateFor(rule: string | null): PauseGate | null {
    return rule === null ? null : (this.gates.get(rule) ?? null);
  }

  /** Whether a batch pause watches `pool`'s TTFT. */
  watches(pool: string): boolean {
    return this.windows.has(pool);
  }

  /**
   * A streamed request of `pool` got its first token `ttftMs` after arriving at the gateway — told as it
   * happens, not when the reply ends, so a pause reacts within its evaluation period. Non-streaming
   * replies are not counted: their "first token" is their last.
   */
  observeTtft(pool: string, ttftMs: number, now = performance.now()): void {
    const list = this.windows.get(pool);
    if (list) for (const w of list) w.add(ttftMs, now);
  }

  /** Re-evaluates every gate; a lifted pause lets its pool dispatch at once. */
  evaluate(now: number): void {
    for (const gate of this.gates.values()) {
      const t = gate.evaluate(now);
      if (!t) continue;
      this.listeners.onTransition?.(gate, t);
      if (!t.paused) this.pools.get(gate.pool)?.notify();
    }
  }

  start(): void {
    if (this.gates.size === 0 || this.timer) return;
    this.timer = setInterval(() => this.evaluate(performance.now()), EVALUATE_MS);
    this.timer.unref();
  }

  /** A reload replaced this flow control: its gates stop being evaluated here; its queues live on. */
  handOver(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  stop(reason = "the gateway is shutting down"): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const f of this.pools.values()) f.close(reason);
    this.sweep.stop();
  }
}
