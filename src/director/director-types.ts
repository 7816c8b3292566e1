// The vocabulary of the global layer (`tokengate director`, seed 000's first scope): what a region's
// gateway publishes about itself (its summary — never per-pod queues or KV state, which go stale across a
// WAN), what the director is configured with (the RegionDirector document), and what it decides for a
// request (a region and why). Shared by the gateway's summary endpoint, the director's poller, its
// decision, its three front doors and the multi-region benchmark, so that each reads one definition.

/** A model (alias) a region serves, and whether it can take traffic now. */
export interface RegionModel {
  /** The model alias callers name (`model` in the request). */
  readonly alias: string;
  /** Versions its pools run, each with whether an endpoint serving it is routable. */
  readonly versions: readonly { readonly version: string; readonly ready: boolean }[];
  /** Some pool of the alias has a routable endpoint. */
  readonly ready: boolean;
}

/** One pool's room for more work, as a number two regions can compare. */
export interface PoolHeadroom {
  readonly pool: string;
  /**
   * The share of the pool's capacity still free, 0..1: over all its endpoints (one not routable counts
   * as full), 1 − the endpoint's highest use of a saturation bound (in flight, in-flight tokens, waiting,
   * KV use, predicted wait, each over its bound), times 1 − queued over the pool's queue bound; 0 when
   * none is routable.
   */
  readonly headroom: number;
  /** Routable endpoints with room now: no saturation bound reached (flow control's own test). */
  readonly freeSlots: number;
  readonly routableEndpoints: number;
  readonly endpoints: number;
  readonly queued: number;
}

/** What a region's gateway says about itself at `GET /admin/region/summary` (and pushes to a director). */
export interface RegionSummary {
  /** The region's name, as the director's config names it (GatewayConfig `region.name`). */
  readonly region: string;
  /** When it was computed, epoch ms; a director treats a summary older than its `staleAfterMs` as unknown. */
  readonly computedAt: number;
  /** The gateway is draining (SIGTERM): take no new traffic there. */
  readonly draining: boolean;
  /** The config version in force. */
  readonly configVersion: string;
  readonly models: readonly RegionModel[];
  readonly pools: readonly PoolHeadroom[];
  /** The region's headroom for a model: the best of its pools' (0 when none is ready). */
  readonly headroomByModel: Readonly<Record<string, number>>;
  /** Over the last `windowS` seconds of requests the gateway answered. */
  readonly window: {
    readonly windowS: number;
    readonly requests: number;
    /** TTFT P95 of streamed requests, ms; null with fewer than a handful. */
    readonly ttftP95Ms: number | null;
    /** Share of requests that failed for the gateway's or the engines' fault (5xx, not 4xx), 0..1. */
    readonly errorRate: number;
  };
}

/** A region as the director's config lists it. */
export interface DirectorRegion {
  readonly name: string;
  /** The region's gateway: where the L7 mode forwards and redirects go, `http://host:port`. */
  readonly gatewayUrl: string;
  /** Where its summary is polled; default `<gatewayUrl's admin>/admin/region/summary`. */
  readonly summaryUrl: string;
  /** The admin token the summary endpoint needs (from an env variable), or null. */
  readonly summaryToken: string | null;
  /** Relative cost of serving here, ≥ 0 (1 = baseline); cheaper regions win ties. */
  readonly cost: number;
}

/** Weights of the scored choice, after the hard filters. Each term is normalised to 0..1. */
export interface DirectorWeights {
  /** Lower latency from the caller's region (the matrix, refined by measured round trips). */
  readonly latency: number;
  /** More headroom for the model. */
  readonly headroom: number;
  /** Lower recent error rate. */
  readonly errors: number;
  /** Lower cost. */
  readonly cost: number;
}

export interface HysteresisSettings {
  /** Traffic stays on a region at least this long after moving there, unless it fails. */
  readonly dwellMs: number;
  /** Another region must score this much better (0..1 of the score scale) before traffic moves to it. */
  readonly switchMargin: number;
}

export interface BreakerSettings {
  /** Opens when the region's error rate (its summary's) is at or above this, 0..1. */
  readonly errorRateToOpen: number;
  /** …or after this many failed polls (or forwarded requests failing at connect) in a row. */
  readonly failuresToOpen: number;
  /** Open for this long, then half-open. */
  readonly openMs: number;
  /** Half-open: this many probe requests (or good polls) in a row close it again. */
  readonly halfOpenProbes: number;
}

export interface SpilloverSettings {
  /** The home region is short when its headroom for the model is below this, 0..1. */
  readonly minHeadroom: number;
  /**
   * Of the traffic that would go home while it is short, the share moved to the next choice grows with
   * the shortfall: (minHeadroom − headroom) / minHeadroom, capped at this, 0..1.
   */
  readonly maxShare: number;
}

/** The validated `RegionDirector` document (`kind: RegionDirector`, apiVersion tokengate.dev/v1alpha1). */
export interface DirectorConfig {
  readonly name: string;
  readonly listen: { readonly host: string; readonly port: number };
  readonly regions: readonly DirectorRegion[];
  /** Round-trip ms from a caller region (key) to a serving region (inner key); missing pairs: `defaultLatencyMs`. */
  readonly latencyMs: Readonly<Record<string, Readonly<Record<string, number>>>>;
  readonly defaultLatencyMs: number;
  /** Regions each tenant's data may be served in; a tenant not listed may use every region. */
  readonly residency: Readonly<Record<string, readonly string[]>>;
  readonly weights: DirectorWeights;
  readonly hysteresis: HysteresisSettings;
  readonly breaker: BreakerSettings;
  readonly spillover: SpilloverSettings;
  readonly affinity: {
    /** The request header that names a session (lower-case); null: by tenant only. */
    readonly header: string | null;
    readonly ttlMs: number;
  };
  readonly polling: {
    readonly intervalMs: number;
    /** A summary older than this is unknown, not healthy. */
    readonly staleAfterMs: number;
    readonly timeoutMs: number;
  };
  /** How the director answers requests: forward (L7), redirect (307 to the region's gateway). */
  readonly mode: "forward" | "redirect";
  /** The answer API's TTL for DNS/GSLB callers, seconds. */
  readonly answerTtlS: number;
}

/** What a decision is asked: who, which model, from where. */
export interface DirectorQuery {
  readonly tenant: string;
  readonly model: string;
  /** The model version pinned, if any; null: any ready version. */
  readonly version: string | null;
  /** The caller's region (a header, or the director's own); null: unknown (latency ignored). */
  readonly callerRegion: string | null;
  /** The session key for affinity (header value, else the tenant); null: none. */
  readonly session: string | null;
}

/** Why a region was chosen. */
export type DirectorReason =
  /** The best region for the caller, or where traffic already was (hysteresis, affinity). */
  | "home"
  /** Home is short of headroom: this request is part of the excess moved to the next choice. */
  | "spillover"
  /** Home failed (breaker open, stale, not ready, draining): the next choice. */
  | "failover"
  /** Only one region is allowed for the tenant's data. */
  | "compliance";

/** One candidate region as the decision saw it. */
export interface RegionCandidate {
  readonly region: string;
  /** Why it was filtered out (`residency`, `model_unavailable`, `breaker_open`, `stale_summary`, `draining`, `no_headroom`), or null. */
  readonly filtered: string | null;
  /** Its weighted score, 0..1 (higher is better); null when filtered. */
  readonly score: number | null;
  readonly terms: {
    readonly latency: number | null;
    readonly headroom: number | null;
    readonly errors: number | null;
    readonly cost: number | null;
  };
}

/** A decision: the region, or a refusal that names the constraint. */
export type DirectorDecision =
  | {
      readonly kind: "region";
      readonly region: string;
      readonly reason: DirectorReason;
      readonly candidates: readonly RegionCandidate[];
      /** The session's region was kept (affinity), or null when there was no session entry. */
      readonly affinity: "kept" | "broken" | "new" | null;
    }
  | {
      readonly kind: "refuse";
      /** `residency_unavailable` (every allowed region is down), `model_unavailable`, `no_region`. */
      readonly code: string;
      readonly message: string;
      readonly candidates: readonly RegionCandidate[];
    };

/** A region's state as the director holds it, for explain, metrics and logs. */
export interface RegionState {
  readonly region: string;
  readonly breaker: "closed" | "open" | "half-open";
  /** Why the breaker last opened (`error_rate 0.31 ≥ 0.2`, `3 failed polls`), or null. */
  readonly breakerReason: string | null;
  /** Age of the last summary, ms; null before the first. */
  readonly summaryAgeMs: number | null;
  /** The summary is older than `staleAfterMs` (or never came): unknown, not healthy. */
  readonly stale: boolean;
  readonly summary: RegionSummary | null;
  /** Measured round trip to its gateway (polls), ms; null before one. */
  readonly measuredRttMs: number | null;
}

/**
 * The director's decision core: pure state and time (every method takes `now`), no I/O. The service
 * around it (polling, pushes, the three front doors) feeds it what it sees and asks it where to send.
 */
export interface DirectorCore {
  /** A region's summary arrived (a poll or a push), with the poll's round trip if measured. */
  observeSummary(summary: RegionSummary, now: number, rttMs?: number): void;
  /** A poll of the region failed (timeout, refused, bad answer). */
  observePollFailure(region: string, now: number, why: string): void;
  /** A request sent to the region ended: ok, or failed for the region's fault (connect, 5xx). */
  observeOutcome(region: string, ok: boolean, now: number): void;
  /** Where this request goes. Records affinity and hysteresis state as a real send would. */
  decide(q: DirectorQuery, now: number): DirectorDecision;
  /** The same decision without recording anything (explain, the answer API's dry runs). */
  explain(q: DirectorQuery, now: number): DirectorDecision;
  /** Every region's state. */
  regions(now: number): readonly RegionState[];
}
