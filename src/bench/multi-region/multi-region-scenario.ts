// The multi-region benchmark's scenario, as data: three regions on loopback, the latency matrix between
// them (WAN round trips that loopback does not have: the figures add them to each measured TTFT), data
// residency for two tenants, who calls from where, the run's phases (steady, us-east degrading, failing,
// recovering), the director's tuning scaled to the run's length, and the seeded arrivals both passes
// replay. Pure: the processes, the load and the figures read it.

import { poissonArrivals, randomStream, uniformInt } from "../workload/distributions.js";

export const REGIONS = ["eu-west", "us-east", "ap-south"] as const;
/** The region that degrades, fails and recovers mid-run. */
export const FAILING_REGION = "us-east";
/** The alias every region's gateway serves and callers name. */
export const MODEL_ALIAS = "chat";
/** The model its engines serve under. */
export const ENGINE_MODEL = "llama-3.1-8b";
export const ENGINE_PROFILE = "h100-llama8b";
export const ENGINES_PER_REGION = 2;
/** The director's affinity header (its default). */
export const SESSION_HEADER = "x-session-id";

/** Round trip, ms, from a caller region (key) to a serving region (inner key); symmetric. */
export const LATENCY_MS: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  "eu-west": { "eu-west": 8, "us-east": 80, "ap-south": 140 },
  "us-east": { "eu-west": 80, "us-east": 8, "ap-south": 190 },
  "ap-south": { "eu-west": 140, "us-east": 190, "ap-south": 8 },
};

/** Tenants whose data may only be served in these regions; every other tenant may use any region. */
export const RESIDENCY: Readonly<Record<string, readonly string[]>> = {
  "eu-bank": ["eu-west"],
  "ap-health": ["ap-south"],
};

/**
 * Who calls from each region, as shares of that region's arrivals. The residency tenants also call from
 * us-east (staff travelling, a US office): a GeoDNS serves them there, outside their regions.
 */
export const CALLER_TENANTS: Readonly<Record<string, readonly { tenant: string; share: number }[]>> = {
  "eu-west": [
    { tenant: "acme", share: 0.4 },
    { tenant: "eu-bank", share: 0.4 },
    { tenant: "globex", share: 0.2 },
  ],
  "us-east": [
    { tenant: "acme", share: 0.45 },
    { tenant: "globex", share: 0.35 },
    { tenant: "eu-bank", share: 0.1 },
    { tenant: "ap-health", share: 0.1 },
  ],
  "ap-south": [
    { tenant: "ap-health", share: 0.5 },
    { tenant: "acme", share: 0.3 },
    { tenant: "globex", share: 0.2 },
  ],
};

export const PHASES = ["steady", "degrade", "fail", "recover"] as const;
export type Phase = (typeof PHASES)[number];

/** A phase of a pass, in ms from the pass's start. */
export interface PhaseWindow {
  readonly phase: Phase;
  readonly startMs: number;
  readonly endMs: number;
}

/** The RegionDirector's tuning for the run's time scale. */
export interface DirectorTuning {
  readonly dwellMs: number;
  readonly switchMargin: number;
  readonly errorRateToOpen: number;
  readonly failuresToOpen: number;
  readonly openMs: number;
  readonly halfOpenProbes: number;
  readonly minHeadroom: number;
  readonly maxShare: number;
  readonly affinityTtlMs: number;
  readonly intervalMs: number;
  readonly staleAfterMs: number;
  readonly timeoutMs: number;
}

export interface MultiRegionSettings {
  readonly quick: boolean;
  readonly phases: readonly PhaseWindow[];
  /** The last arrival is before this, ms from the pass's start. */
  readonly durationMs: number;
  /** Arrivals per second from each caller region (Poisson). */
  readonly ratePerCaller: Readonly<Record<string, number>>;
  readonly promptTokens: readonly [number, number];
  readonly maxTokens: readonly [number, number];
  /** Share of requests that carry a session header, and how many sessions each (caller, tenant) has. */
  readonly sessionShare: number;
  readonly sessionsPerStream: number;
  /** us-east's engines run this many times slower in the degrade phase. */
  readonly slowdown: number;
  /** A request still unanswered after this long is abandoned (counted as an error). */
  readonly requestTimeoutMs: number;
  /** Bins of the failover and return times. */
  readonly binMs: number;
  /** Each region's pool: flowControl.maxInflight per engine (the headroom a summary reports is its rest). */
  readonly maxInflightPerEngine: number;
  /** Requests sent to each gateway before a pass, to warm its TTFT fit. */
  readonly warmupRequests: number;
  /** Targets reported, not enforced. */
  readonly failoverTargetMs: number;
  readonly flappingTargetPerMin: number;
  readonly director: DirectorTuning;
}

function phasesOf(seconds: readonly [number, number, number, number]): PhaseWindow[] {
  const out: PhaseWindow[] = [];
  let at = 0;
  PHASES.forEach((phase, i) => {
    const ms = seconds[i]! * 1000;
    out.push({ phase, startMs: at, endMs: at + ms });
    at += ms;
  });
  return out;
}

/**
 * Quick: a minute per pass (15 s each phase), the director polling every 250 ms, a 4 s dwell, a breaker
 * open 3 s. Full: three minutes per pass (45 s each), polling every 500 ms, a 12 s dwell, open 6 s.
 */
export function multiRegionSettings(quick: boolean): MultiRegionSettings {
  const phases = phasesOf(quick ? [15, 15, 15, 15] : [45, 45, 45, 45]);
  return {
    quick,
    phases,
    durationMs: phases.at(-1)!.endMs,
    ratePerCaller: { "eu-west": 8, "us-east": 8, "ap-south": 6 },
    promptTokens: [150, 450],
    maxTokens: [32, 96],
    sessionShare: 0.3,
    sessionsPerStream: 4,
    slowdown: 6,
    requestTimeoutMs: 60_000,
    binMs: quick ? 1000 : 2000,
    maxInflightPerEngine: 12,
    warmupRequests: 12,
    failoverTargetMs: quick ? 5000 : 10_000,
    flappingTargetPerMin: 2,
    director: {
      dwellMs: quick ? 4000 : 12_000,
      switchMargin: 0.1,
      errorRateToOpen: 0.2,
      failuresToOpen: 3,
      openMs: quick ? 3000 : 6000,
      halfOpenProbes: 2,
      minHeadroom: 0.5,
      maxShare: 0.5,
      affinityTtlMs: quick ? 10_000 : 30_000,
      intervalMs: quick ? 250 : 500,
      staleAfterMs: quick ? 1500 : 3000,
      timeoutMs: quick ? 500 : 1000,
    },
  };
}

/** One request of the schedule both passes send. */
export interface Arrival {
  readonly id: string;
  /** ms from the pass's start. */
  readonly atMs: number;
  readonly callerRegion: string;
  readonly tenant: string;
  readonly session: string | null;
  readonly promptTokens: number;
  readonly maxTokens: number;
  /** The prompt text's seed. */
  readonly textSeed: number;
}

/** The arrivals of a pass, by time: each caller region's Poisson process, its tenants and sessions drawn. */
export function arrivals(s: MultiRegionSettings, seed: number): Arrival[] {
  const out: Omit<Arrival, "id">[] = [];
  for (const caller of REGIONS) {
    const times = poissonArrivals(s.ratePerCaller[caller] ?? 0, 0, s.durationMs, randomStream(seed, caller));
    const pick = randomStream(seed, `${caller}:tenant`);
    const sizes = randomStream(seed, `${caller}:sizes`);
    const tenants = CALLER_TENANTS[caller] ?? [];
    for (const atMs of times) {
      const tenant = drawShare(tenants, pick());
      const session =
        pick() < s.sessionShare ? `${caller}.${tenant}.s${uniformInt(pick, 1, s.sessionsPerStream)}` : null;
      out.push({
        atMs,
        callerRegion: caller,
        tenant,
        session,
        promptTokens: uniformInt(sizes, s.promptTokens[0], s.promptTokens[1]),
        maxTokens: uniformInt(sizes, s.maxTokens[0], s.maxTokens[1]),
        textSeed: Math.floor(sizes() * 2 ** 31),
      });
    }
  }
  out.sort((a, b) => a.atMs - b.atMs);
  return out.map((a, i) => ({ ...a, id: `mr-${String(i + 1).padStart(5, "0")}` }));
}

function drawShare(tenants: readonly { tenant: string; share: number }[], u: number): string {
  const total = tenants.reduce((n, t) => n + t.share, 0);
  let acc = 0;
  for (const t of tenants) {
    acc += t.share / total;
    if (u < acc) return t.tenant;
  }
  return tenants.at(-1)?.tenant ?? "anonymous";
}

/** The modeled WAN round trip from a caller region to the region that served it, ms (0 when unknown). */
export function wanMs(callerRegion: string, served: string): number {
  return LATENCY_MS[callerRegion]?.[served] ?? 0;
}

/** What a GeoDNS answers: the region with the lowest latency from the caller, whatever its state. */
export function nearestRegion(callerRegion: string): string {
  const row = LATENCY_MS[callerRegion] ?? {};
  let best: string = REGIONS[0];
  for (const r of REGIONS) if ((row[r] ?? Infinity) < (row[best] ?? Infinity)) best = r;
  return best;
}
