// The bounds at which flow control counts an endpoint as full (`InferencePool.spec.flowControl`), and
// their defaults; `flow/saturation.ts` applies them.

/** Per-pool bounds; `InferencePool.spec.flowControl` sets them. */
export interface SaturationBounds {
  /** Soft: the engine's scraped `num_requests_waiting` at which it is full. */
  readonly maxWaiting: number;
  /**
   * Soft: the predicted wait for a first token on the endpoint (the prefill work the gateway sent it and
   * it has not answered yet, at the pool's learned rate: PrefillLoad.waitMs) at which it is full; null:
   * none. Sees a prefill backlog the scraped queue does not, at decision time rather than scrape time.
   * `"drain"` (the default): the endpoint is full while its queued prefill lasts at least one full
   * step of prefill plus twice the time a request sent now needs to reach its prefill
   * (PrefillLoad.refillMs, from the measured TTFT of an empty prompt and the pool's prefill rate): the
   * gateway holds a request only while every engine has work until it could start, so no engine idles
   * while the gateway holds one it could run. A number: that many ms, as
   * before (300 ms held the bursting tenant of a user's trace in the gateway while engines ran dry:
   * TTFT P90 1.8× least-request's). Applies once the pool's TTFT fit has learned from its streams. Off,
   * support-incident's original pods' live end-to-end P95 went from 4.2 to 8.5 s (batch prompts no
   * longer held out of the engines).
   */
  readonly maxPredictedWaitMs: number | "drain" | null;
  /** Soft: KV-cache use (0..1) at which the endpoint is full. */
  readonly maxKvCacheUsage: number;
  /**
   * Soft: with stale or missing metrics the endpoint counts as full, except that the gateway's own
   * in-flight count may still show room below this many requests (the fallback signal).
   */
  readonly staleMaxInflight: number;
  /** Hard: the gateway's in-flight requests per endpoint; null: none. */
  readonly maxInflight: number | null;
  /** Hard: in-flight tokens (input + max output) per endpoint; null: none. */
  readonly maxInflightTokens: number | null;
}

/**
 * Defaults that hold a pool's traffic only when its engines are really backed up. A low `maxWaiting`
 * on a busy single-class pool only makes requests wait for the next scrape (the scraped queue does not
 * change between scrapes): at 120 req/s a bound of 4 cost shared-prefix a third of its P90 advantage.
 * Pools that share engines with more important work set theirs low (a batch pool: 1).
 */
export const DEFAULT_SATURATION: SaturationBounds = {
  maxWaiting: 16,
  maxPredictedWaitMs: "drain",
  maxKvCacheUsage: 0.9,
  staleMaxInflight: 4,
  maxInflight: null,
  maxInflightTokens: null,
};

/** `InferencePool.spec.flowControl.longPrefill`: long prompts held back for short ones (flow/long-prefill.ts). */
export interface LongPrefillSettings {
  /** A prompt whose own prefill takes at least this long on its endpoint (by the learned fit) is long; null: off. */
  readonly minPrefillMs: number | null;
  /** Share of the pool's endpoints kept free of long prefills (rounded down); 0: off. */
  readonly shortReserve: number;
}

/** Off by default (flow/long-prefill.ts says what it trades); `{}` turns it on at 150 ms and a quarter. */
export const DEFAULT_LONG_PREFILL: LongPrefillSettings = { minPrefillMs: null, shortReserve: 0.25 };
export const LONG_PREFILL_ON_MS = 150;
