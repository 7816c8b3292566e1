// The director's decision core (`tokengate director`): picks a region for each request from region
// summaries alone — hard filters (residency first, never violated), a weighted score, hysteresis, breaker
// probes, spillover of the excess and session affinity. Pure state and time, no I/O: the service around
// it polls, forwards and feeds back what it sees.

import { AffinityTable } from "./affinity.js";
import type {
  DirectorConfig,
  DirectorCore,
  DirectorDecision,
  DirectorQuery,
  DirectorReason,
  DirectorRegion,
  RegionState,
  RegionSummary,
} from "./director-types.js";
import { chooseHome, type HomeState, nextHomeState, noteFilteredOut } from "./hysteresis.js";
import { refusal } from "./refusal-decision.js";
import { RegionRecord } from "./region-record.js";
import { candidateList, type RegionView, type Scored, type Screened, scoreRegions, screen } from "./score.js";
import { spillShare, spillStep } from "./spillover.js";

/** A decision and the state change a real send records (explain drops it). */
interface Plan {
  readonly decision: DirectorDecision;
  readonly commit: () => void;
}

type RegionDecision = Extract<DirectorDecision, { kind: "region" }>;

/** What every stage of one decision reads. */
interface Context {
  readonly q: DirectorQuery;
  readonly allowed: ReadonlySet<string> | null;
  readonly screened: readonly Screened[];
  readonly indexed: readonly { screened: Screened; index: number }[];
  /** The regions that passed, best first. */
  readonly ranked: readonly Scored[];
  readonly key: string;
  readonly state: HomeState | undefined;
  /** The session's affinity key and the region it holds (null: none, or expired). */
  readonly session: string | null;
  readonly held: string | null;
  /** Regions filtered out, but not by residency. */
  readonly out: readonly string[];
}

/**
 * Decides where each request goes, in this order:
 * 1. Filters, per configured region: `residency` (the tenant's allowed regions), `stale_summary` (none,
 *    or older than polling.staleAfterMs), `draining`, `breaker_open` (open or half-open),
 *    `model_unavailable` (alias not ready, or the pinned version not ready), `no_headroom` (≤ 0).
 *    The breaker (breaker.ts) opens on a summary's error rate over ≥ 20 requests, or failuresToOpen
 *    failed polls/requests in a row; half-open after openMs. The score: score.ts; a caller's round trip
 *    is the latency matrix's plus the measured RTT's rise above its lowest (region-record.ts).
 *    No region left and no probe due: a refusal (refusal-decision.ts) — `residency_unavailable` names
 *    the tenant, its regions and why each is out. Residency holds for every stage below, probes included.
 * 2. Probes: a half-open region that fails nothing else and is where this stream's traffic would be —
 *    its current region, the one it failed over from, or the best-scored with it counted — takes the
 *    request as one of its `halfOpenProbes` probes (before affinity; the decision's affinity is null).
 * 3. Affinity: a session (per model) that has a region passing the filters stays there (`kept`); one
 *    whose region fails is moved at once (`broken`, reason `failover`); a new one takes the decision's
 *    region (`new`). Entries live affinity.ttlMs, refreshed on use.
 * 4. Hysteresis (hysteresis.ts) per stream — caller region, model, version and residency set.
 * 5. Spillover (spillover.ts): while home's headroom is below minHeadroom, a share of requests without a
 *    kept session goes to the next best region (reason `spillover`).
 * Reason `compliance` whenever the tenant's residency allows exactly one region.
 */
export class RegionDirectorCore implements DirectorCore {
  private readonly records = new Map<string, RegionRecord>();
  private readonly homes = new Map<string, HomeState>();
  private readonly affinity: AffinityTable;
  private readonly residency = new Map<string, ReadonlySet<string>>();

  constructor(readonly config: DirectorConfig) {
    for (const r of config.regions) {
      this.records.set(r.name, new RegionRecord(r.name, config.polling.staleAfterMs, config.breaker));
    }
    for (const [tenant, regions] of Object.entries(config.residency)) {
      this.residency.set(tenant, new Set(regions));
    }
    this.affinity = new AffinityTable(config.affinity.ttlMs);
  }

  /** A summary of a configured region (others are ignored); one older than the one held is dropped. */
  observeSummary(summary: RegionSummary, now: number, rttMs?: number): void {
    this.records.get(summary.region)?.observe(summary, now, rttMs);
  }

  observePollFailure(region: string, now: number, why: string): void {
    this.records.get(region)?.breaker.onPollFailure(why, now);
  }

  observeOutcome(region: string, ok: boolean, now: number): void {
    this.records.get(region)?.breaker.onOutcome(ok, now);
  }

  decide(q: DirectorQuery, now: number): DirectorDecision {
    const plan = this.plan(q, now);
    plan.commit();
    return plan.decision;
  }

  /** decide() without recording anything: no hysteresis move, spill step, affinity write or probe. */
  explain(q: DirectorQuery, now: number): DirectorDecision {
    return this.plan(q, now).decision;
  }

  regions(now: number): readonly RegionState[] {
    return this.config.regions.map((r) => this.record(r.name).state(now));
  }

  /** The stages of a decision: the first that decides wins. */
  private plan(q: DirectorQuery, now: number): Plan {
    const c = this.context(q, now);
    return (
      this.probePlan(c, now) ?? this.refusalPlan(c, now) ?? this.keptPlan(c, now) ?? this.homePlan(c, now)
    );
  }

  /** Filters and scores, and the stream's state. */
  private context(q: DirectorQuery, now: number): Context {
    const allowed = this.residency.get(q.tenant) ?? null;
    const screened = this.config.regions.map((r) => screen(this.view(r, q.callerRegion, now), allowed, q));
    const indexed = screened.map((s, index) => ({ screened: s, index }));
    const key = this.streamKey(q, allowed);
    const session = q.session === null ? null : AffinityTable.key(q.session, q.model);
    return {
      q,
      allowed,
      screened,
      indexed,
      ranked: this.score(indexed.filter((s) => s.screened.filtered === null)),
      key,
      state: this.homes.get(key),
      session,
      held: session === null ? null : this.affinity.lookup(session, now),
      out: names(screened.filter((s) => s.filtered !== null && s.filtered !== "residency")),
    };
  }

  /** Notes which regions were out now, for an existing stream (a move to one waits for a healthy dwell). */
  private noteOut(c: Context, now: number): void {
    if (c.state !== undefined) this.homes.set(c.key, noteFilteredOut(c.state, c.out, now));
  }

  private probePlan(c: Context, now: number): Plan | null {
    const probe = this.probe(c.indexed, c.state, now);
    if (probe === null) return null;
    const region = probe.target.screened.view.name;
    return {
      decision: regionDecision(c, region, "home", probe.ranked, null),
      commit: () => this.record(region).breaker.takeProbe(now),
    };
  }

  private refusalPlan(c: Context, now: number): Plan | null {
    if (c.ranked.length > 0) return null;
    const candidates = candidateList(c.screened, []);
    return {
      decision: refusal(c.q, c.allowed, c.screened, this.records, candidates, now),
      commit: () => this.noteOut(c, now),
    };
  }

  /** A session whose region passes stays there. */
  private keptPlan(c: Context, now: number): Plan | null {
    const { session, held } = c;
    const kept = held === null ? undefined : c.ranked.find((s) => s.screened.view.name === held);
    if (session === null || kept === undefined) return null;
    const region = kept.screened.view.name;
    return {
      decision: regionDecision(c, region, "home", c.ranked, "kept"),
      // Not refreshed: affinity is short (seed 000: 短时间内保持 Region 亲和), so a session follows its
      // stream's home again once its TTL from the first send has run out.
      commit: () => this.noteOut(c, now),
    };
  }

  /** The stream's home (hysteresis), or for part of the requests while it is short, the next (spillover). */
  private homePlan(c: Context, now: number): Plan {
    const { state, ranked, session, held } = c;
    const goodSince = (region: string): number | null => {
      const healthy = this.record(region).healthySince(now);
      return healthy === null ? null : Math.max(healthy, state?.outAt.get(region) ?? healthy);
    };
    const choice = chooseHome(state, ranked, goodSince, this.config.hysteresis, now);
    let next = nextHomeState(state, choice, c.out, now);
    let chosen = choice.home;
    const from = next.failedFrom;
    const fromOut = from !== null && !ranked.some((s) => s.screened.view.name === from);
    let reason: DirectorReason = choice.move === "failover" || fromOut ? "failover" : "home";
    if (held !== null) {
      reason = "failover"; // the session's region failed: moved, and not spilled on top
    } else {
      const second = ranked.find((s) => s !== choice.home);
      if (second !== undefined) {
        const step = spillStep(next.spill, spillShare(choice.home.screened.headroom, this.config.spillover));
        next = { ...next, spill: step.acc };
        if (step.spill) {
          chosen = second;
          reason = "spillover";
        }
      }
    }
    const region = chosen.screened.view.name;
    const affinity = session === null ? null : held === null ? "new" : "broken";
    return {
      decision: regionDecision(c, region, reason, ranked, affinity),
      commit: () => {
        this.homes.set(c.key, next);
        if (session !== null) this.affinity.write(session, region, now);
      },
    };
  }

  /**
   * A half-open region to send this request to as a probe: one that fails no filter but its breaker, has
   * a probe left, and is this stream's current region, the one it failed over from, or the best of the
   * regions passing with it counted in. Scored with the passing regions (`ranked`) for the decision.
   */
  private probe(
    indexed: readonly { screened: Screened; index: number }[],
    state: HomeState | undefined,
    now: number,
  ): { target: Scored; ranked: Scored[] } | null {
    const probeable = indexed.filter(
      (s) => s.screened.probeable && this.record(s.screened.view.name).breaker.canProbe(now),
    );
    if (probeable.length === 0) return null;
    const ranked = this.score(indexed.filter((s) => s.screened.filtered === null || probeable.includes(s)));
    const target = ranked.find((s, i) => {
      if (!s.screened.probeable) return false;
      const name = s.screened.view.name;
      return i === 0 || name === state?.current || name === state?.failedFrom;
    });
    return target === undefined ? null : { target, ranked };
  }

  private score(passing: readonly { screened: Screened; index: number }[]): Scored[] {
    return scoreRegions(passing, this.config.weights, this.config.breaker.errorRateToOpen);
  }

  /**
   * A region as this caller sees it. Its round trip is the latency matrix's (defaultLatencyMs for a pair
   * it lacks) plus how far the director's measured round trip to it runs above its lowest (RegionRecord
   * `rttExcessMs`); null for a caller of unknown region.
   */
  private view(r: DirectorRegion, caller: string | null, now: number): RegionView {
    const rec = this.record(r.name);
    const stale = rec.stale(now);
    const matrix =
      caller === null ? null : (this.config.latencyMs[caller]?.[r.name] ?? this.config.defaultLatencyMs);
    return {
      name: r.name,
      cost: r.cost,
      summary: stale ? null : rec.summary,
      stale,
      breaker: rec.breaker.state(now),
      rttMs: matrix === null ? null : matrix + rec.rttExcessMs,
    };
  }

  /**
   * One stream of requests for hysteresis: requests that see the regions alike share a home — the same
   * model and version, the same residency set (tenants share it), and the same latency row (callers of
   * regions the matrix lacks share the default row, so a caller-chosen header cannot grow the table).
   */
  private streamKey(q: DirectorQuery, allowed: ReadonlySet<string> | null): string {
    const c = q.callerRegion;
    const caller = c === null ? "\u0001none" : Object.hasOwn(this.config.latencyMs, c) ? c : "\u0001default";
    const residency = allowed === null ? "*" : [...allowed].sort().join(",");
    return [caller, q.model, q.version ?? "", residency].join("\u0000");
  }

  private record(name: string): RegionRecord {
    return this.records.get(name)!;
  }
}

function names(list: readonly Screened[]): string[] {
  return list.map((s) => s.view.name);
}

/** A region decision; reason `compliance` whenever the tenant may use exactly one region. */
function regionDecision(
  c: Context,
  region: string,
  reason: DirectorReason,
  ranked: readonly Scored[],
  affinity: RegionDecision["affinity"],
): RegionDecision {
  return {
    kind: "region",
    region,
    reason: c.allowed?.size === 1 ? "compliance" : reason,
    candidates: candidateList(c.screened, ranked),
    affinity,
  };
}
