// The bounds at which flow control counts an endpoint as full (`InferencePool.spec.flowControl`), and
// their defaults; `flow/saturation.ts` applies them.

/** Per-pool bounds; `InferencePool.spec.flowControl` sets them. */
export interface SaturationBounds {
  /** Soft: the engine's scraped `num_requests_waiting` at which it is full. */
  readonly maxWaiting: number;
  /**
   * Soft: the predicted wait for a first token on the endpoint (the prefill work the gateway sent it and
   * it has not answered yet, at its learned rate: PrefillLoad.waitMs) at which it is full; null: none.
   * Sees a prefill backlog the scraped queue does not, at decision time rather than scrape time. Applies
   * once the endpoint's TTFT fit has learned from its streams (a non-streaming request shows no first
   * token). On by default: off, support-incident's original pods' live end-to-end P95 went from 4.2 to
   * 8.5 s (batch prompts no longer held out of the engines).
   */
  readonly maxPredictedWaitMs: number | null;
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
  maxPredictedWaitMs: 300,
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
