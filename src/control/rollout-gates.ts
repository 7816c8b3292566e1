// Seed 004's exit criteria for each rollout stage, from the gateway's own records: what every request of
// the stage showed (its labels, its token estimate against the engine's usage, its outcome and TTFT on
// the side that served it), and the gates `tokengate rollout report` prints and `rollout promote` checks.
//
//   shadow-label: labelled requests ≥ 95%, token-estimate P90 error < 18%, unknown tasks < 1%
//   canary:       canary requests failed ≤ 1%, their TTFT P95 ≤ 1.8 s
// Each needs `minRequests` requests first: too few to judge fails, it does not pass.

import type { Rollout, RolloutGates, RolloutStage, RouteConfig } from "../config/route-types.js";

/** What the stats read of one request's record (RequestRecord satisfies it). */
export interface RolloutSample {
  readonly rolloutSide: "legacy" | "canary" | "routed" | null;
  readonly task: string | null;
  readonly taskKnown: boolean;
  readonly inputTokensEstimated: number | null;
  readonly inputTokensActual: number | null;
  readonly status: string;
  /** ms, NaN when no first token. */
  readonly ttftMs: number;
}

/** Keeps the last `size` values; quantiles over them. */
class Window {
  private readonly values: Float64Array;
  private n = 0;

  constructor(size = 4096) {
    this.values = new Float64Array(size);
  }

  add(v: number): void {
    this.values[this.n % this.values.length] = v;
    this.n++;
  }

  get count(): number {
    return Math.min(this.n, this.values.length);
  }

  quantile(q: number): number | null {
    const k = this.count;
    if (k === 0) return null;
    const sorted = this.values.slice(0, k).sort();
    return sorted[Math.min(k - 1, Math.ceil(q * k) - 1)]!;
  }
}

interface Side {
  requests: number;
  failed: number;
  readonly ttft: Window;
}

const FAILED = new Set(["error", "broken_stream"]);

export interface Gate {
  readonly name: string;
  /** The figure measured (null: nothing to measure yet). */
  readonly value: number | null;
  /** `>= 0.95`, `< 0.18` … */
  readonly threshold: string;
  readonly pass: boolean;
  readonly detail: string;
}

export interface RolloutReport {
  readonly version: string;
  readonly stage: RolloutStage | "none";
  readonly since: string;
  readonly requests: number;
  readonly sides: Readonly<Record<"legacy" | "canary" | "routed", { requests: number; failed: number }>>;
  readonly gates: readonly Gate[];
  readonly pass: boolean;
}

/** One stage's records, from the moment its config took effect. */
export class RolloutStats {
  readonly since = new Date();
  private requests = 0;
  private labelled = 0;
  private unknownTask = 0;
  private readonly tokenError = new Window();
  private readonly sides: Record<"legacy" | "canary" | "routed", Side> = {
    legacy: { requests: 0, failed: 0, ttft: new Window() },
    canary: { requests: 0, failed: 0, ttft: new Window() },
    routed: { requests: 0, failed: 0, ttft: new Window() },
  };

  constructor(
    /** What makes two configs the same stage (a reload that leaves it keeps the records). */
    readonly signature: string,
  ) {}

  record(s: RolloutSample): void {
    if (s.rolloutSide === null) return;
    this.requests++;
    if (s.task !== null) {
      this.labelled++;
      if (!s.taskKnown) this.unknownTask++;
    }
    if (s.inputTokensEstimated !== null && s.inputTokensActual !== null && s.inputTokensActual > 0) {
      this.tokenError.add(Math.abs(s.inputTokensEstimated - s.inputTokensActual) / s.inputTokensActual);
    }
    const side = this.sides[s.rolloutSide];
    side.requests++;
    if (FAILED.has(s.status)) side.failed++;
    if (Number.isFinite(s.ttftMs)) side.ttft.add(s.ttftMs);
  }

  report(version: string, rollout: Rollout | null): RolloutReport {
    const stage = rollout?.stage ?? "none";
    const gates = rollout === null ? [] : this.gates(rollout);
    const side = (k: "legacy" | "canary" | "routed") => ({
      requests: this.sides[k].requests,
      failed: this.sides[k].failed,
    });
    return {
      version,
      stage,
      since: this.since.toISOString(),
      requests: this.requests,
      sides: { legacy: side("legacy"), canary: side("canary"), routed: side("routed") },
      gates,
      pass: gates.length > 0 && gates.every((g) => g.pass),
    };
  }

  private gates(rollout: Rollout): Gate[] {
    const g = rollout.gates;
    if (rollout.stage === "shadow-label") return this.shadowGates(g);
    if (rollout.stage === "canary") return this.canaryGates(g);
    return [];
  }

  private shadowGates(g: RolloutGates): Gate[] {
    const n = this.requests;
    const labelled = n > 0 ? this.labelled / n : null;
    const unknown = n > 0 ? this.unknownTask / n : null;
    const p90 = this.tokenError.quantile(0.9);
    return [
      countGate("requests", n, g.minRequests),
      {
        name: "labelled_ratio",
        value: labelled,
        threshold: `>= ${g.labelledRatioMin}`,
        pass: labelled !== null && labelled >= g.labelledRatioMin,
        detail: `${this.labelled} of ${n} requests carry a task label`,
      },
      {
        name: "token_estimate_p90_error",
        value: p90,
        threshold: `< ${g.tokenErrorP90Max}`,
        pass: p90 !== null && p90 < g.tokenErrorP90Max,
        detail: `|estimated − actual| / actual input tokens over ${this.tokenError.count} requests with usage`,
      },
      {
        name: "unknown_task_ratio",
        value: unknown,
        threshold: `< ${g.unknownTaskRatioMax}`,
        pass: unknown !== null && unknown < g.unknownTaskRatioMax,
        detail: `${this.unknownTask} of ${n} requests name a task the config does not know`,
      },
    ];
  }

  private canaryGates(g: RolloutGates): Gate[] {
    const c = this.sides.canary;
    const failed = c.requests > 0 ? c.failed / c.requests : null;
    const p95 = c.ttft.quantile(0.95);
    return [
      countGate("canary_requests", c.requests, g.minRequests),
      {
        name: "canary_failed_ratio",
        value: failed,
        threshold: `<= ${g.canaryErrorRatioMax}`,
        pass: failed !== null && failed <= g.canaryErrorRatioMax,
        detail: `${c.failed} of ${c.requests} canary requests failed (legacy: ${this.sides.legacy.failed} of ${this.sides.legacy.requests})`,
      },
      {
        name: "canary_ttft_p95_ms",
        value: p95,
        threshold: `<= ${g.canaryTtftP95MsMax}`,
        pass: p95 !== null && p95 <= g.canaryTtftP95MsMax,
        detail: `over the last ${c.ttft.count} canary first tokens (legacy P95: ${fmt(this.sides.legacy.ttft.quantile(0.95))} ms)`,
      },
    ];
  }
}

function countGate(name: string, n: number, min: number): Gate {
  return {
    name,
    value: n,
    threshold: `>= ${min}`,
    pass: n >= min,
    detail: n >= min ? "enough to judge" : `${min - n} more needed before the stage can be judged`,
  };
}

function fmt(v: number | null): string {
  return v === null ? "none" : String(Math.round(v));
}

/** The stage a pool's requests are under (no rollout: full). */
export function poolStage(rollout: Rollout | null, pool: string): RolloutStage {
  return rollout?.pools.get(pool) ?? rollout?.stage ?? "full";
}

/** Two configs with the same signature are the same stage: their records carry over a reload. */
export function rolloutSignature(route: RouteConfig): string {
  const r = route.rollout;
  if (r === null) return "none";
  return JSON.stringify({
    legacy: route.legacy?.url ?? null,
    stage: r.stage,
    pools: [...r.pools].sort(),
    canary: r.canary,
  });
}

const ORDER: Readonly<Record<RolloutStage, number>> = { "shadow-label": 0, canary: 1, full: 2 };

/**
 * Whether `next` moves the rollout forward from `now`: no pool goes back a stage, no canary shrinks,
 * and something moves on. Returns why not, or null when it is a promotion.
 */
export function notForward(now: RouteConfig, next: RouteConfig): string | null {
  const pools = new Set<string>();
  for (const route of [now, next])
    for (const a of route.aliases.values()) for (const p of a.pools) pools.add(p.name);
  let moved = false;
  for (const p of pools) {
    const a = poolStage(now.rollout, p);
    const b = poolStage(next.rollout, p);
    if (ORDER[b] < ORDER[a])
      return `pool ${p} would go back from ${a} to ${b} (that is a rollback: tokengate config rollback)`;
    if (ORDER[b] > ORDER[a]) moved = true;
  }
  const ca = now.rollout?.canary ?? null;
  const cb = next.rollout?.canary ?? null;
  const canaryLive = (r: RouteConfig, pool: string) => poolStage(r.rollout, pool) === "canary";
  if (ca && cb && ca.routeTo === cb.routeTo && canaryLive(now, ca.routeTo) && canaryLive(next, cb.routeTo)) {
    if (cb.percent < ca.percent) return `the canary would shrink from ${ca.percent}% to ${cb.percent}%`;
    if (cb.percent > ca.percent) moved = true;
  }
  return moved ? null : "nothing moves forward: no pool changes stage and no canary grows";
}
