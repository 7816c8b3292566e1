// An engine dialect: everything tokengate must know of one engine's ways (vLLM, SGLang) in one object —
// where its /metrics page prints the numbers a router needs, and how it registers a LoRA adapter at run
// time. The OpenAI API itself is the same on every engine. A new dialect is one file in this folder and
// one line in dialects.ts.

/** An info metric: a constant series whose labels carry the values. */
export interface InfoMetric {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

/**
 * Sample names per signal. Lists are tried in order and the first name present on the page wins, so a
 * renamed metric (vLLM 0.9 renamed `gpu_cache_usage_perc`) keeps working on older engines.
 */
export interface DialectMetrics {
  readonly waiting: readonly string[];
  readonly running: readonly string[];
  /** KV cache in use, 0..1. */
  readonly kvUsage: readonly string[];
  /** Labels `blockSize` and `numBlocks` name the label keys on the info series. */
  readonly cacheConfig: InfoMetric | null;
  /** Gauges carrying the same two numbers, for engines that print them as plain gauges. */
  readonly blockSizeGauge: readonly string[];
  readonly numBlocksGauge: readonly string[];
  /** Labels `max`, `running`, `waiting` name the label keys on the LoRA info series. */
  readonly lora: InfoMetric | null;
  /** Counters of prefix-cache hits and queries, both in tokens. */
  readonly prefixHits: readonly string[];
  readonly prefixQueries: readonly string[];
  /** A hit-rate gauge the engine computes itself; used only when the counters are missing. */
  readonly prefixHitRateGauge: readonly string[];
  /** The `_bucket` samples of the time-to-first-token histogram. */
  readonly ttftBuckets: readonly string[];
}

/** How an engine registers a LoRA adapter while it runs (endpoints/adapter-loader.ts). */
export interface AdapterApi {
  /** The POST path. */
  readonly loadPath: string;
  /** The JSON body that asks for `name` from `path`. */
  loadBody(name: string, path: string): Record<string, unknown>;
  /**
   * Whether a refused load (a status other than 200) means the adapter is already registered — another
   * gateway replica loaded it first — rather than a failure.
   */
  alreadyLoaded(status: number, text: string, name: string): boolean;
}

export interface EngineDialect {
  readonly name: string;
  readonly metrics: DialectMetrics;
  /** Null: the engine cannot register adapters at run time; a pool's adapter paths cannot be used. */
  readonly adapters: AdapterApi | null;
}
