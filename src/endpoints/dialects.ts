// Where each engine dialect (vLLM, SGLang) prints the numbers a router needs, and one function that turns
// a scraped /metrics page into an EngineReading. A metric the page does not carry reads as null.

import type { EngineDialect } from "../config/inference-pool.js";
import {
  type HistogramBucket,
  histogramBuckets,
  type ParsedMetrics,
  parseNumber,
  parsePrometheusText,
  type Sample,
} from "../telemetry/prom-parse.js";

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

export const DIALECT_METRICS: Readonly<Record<EngineDialect, DialectMetrics>> = {
  vllm: {
    waiting: ["vllm:num_requests_waiting"],
    running: ["vllm:num_requests_running"],
    kvUsage: ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"],
    cacheConfig: {
      name: "vllm:cache_config_info",
      labels: { blockSize: "block_size", numBlocks: "num_gpu_blocks" },
    },
    blockSizeGauge: [],
    numBlocksGauge: [],
    lora: {
      name: "vllm:lora_requests_info",
      labels: { max: "max_lora", running: "running_lora_adapters", waiting: "waiting_lora_adapters" },
    },
    prefixHits: ["vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"],
    prefixQueries: ["vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"],
    prefixHitRateGauge: [],
    ttftBuckets: ["vllm:time_to_first_token_seconds_bucket"],
  },
  sglang: {
    waiting: ["sglang:num_queue_reqs"],
    running: ["sglang:num_running_reqs"],
    kvUsage: ["sglang:token_usage"],
    // GIE's model-server protocol names the info series; recent SGLang prints plain gauges instead.
    cacheConfig: {
      name: "sglang:cache_config_info",
      labels: { blockSize: "page_size", numBlocks: "num_pages" },
    },
    blockSizeGauge: ["sglang:page_size"],
    numBlocksGauge: ["sglang:num_pages"],
    lora: null,
    // SGLang's prompt counter includes cached tokens, so cached/prompt is the hit rate in tokens.
    prefixHits: ["sglang:cached_tokens_total"],
    prefixQueries: ["sglang:prompt_tokens_total"],
    prefixHitRateGauge: ["sglang:cache_hit_rate"],
    ttftBuckets: ["sglang:time_to_first_token_seconds_bucket"],
  },
};

export interface LoraState {
  /** Adapters the engine can hold at once (`max_lora`). */
  readonly max: number | null;
  readonly running: readonly string[];
  readonly waiting: readonly string[];
}

/** One scrape, as cumulative values; the windowed rates are computed by EndpointState between two of them. */
export interface EngineReading {
  waiting: number | null;
  running: number | null;
  kvUsage: number | null;
  blockSize: number | null;
  numGpuBlocks: number | null;
  loras: LoraState | null;
  prefixHits: number | null;
  prefixQueries: number | null;
  prefixHitRateGauge: number | null;
  ttftBuckets: HistogramBucket[] | null;
}

const ONLY = new Map<EngineDialect, ReadonlySet<string>>();

/** Every sample name the dialect reads, for the parser's `only` filter. */
export function sampleNames(dialect: EngineDialect): ReadonlySet<string> {
  let names = ONLY.get(dialect);
  if (names === undefined) {
    const d = DIALECT_METRICS[dialect];
    names = new Set([
      ...d.waiting,
      ...d.running,
      ...d.kvUsage,
      ...(d.cacheConfig ? [d.cacheConfig.name] : []),
      ...d.blockSizeGauge,
      ...d.numBlocksGauge,
      ...(d.lora ? [d.lora.name] : []),
      ...d.prefixHits,
      ...d.prefixQueries,
      ...d.prefixHitRateGauge,
      ...d.ttftBuckets,
    ]);
    ONLY.set(dialect, names);
  }
  return names;
}

/**
 * Parses a /metrics page in the given dialect, reading only the families it needs.
 * @example
 * const r = readEngineMetrics(await body.text(), "vllm");
 * r.waiting // 3, or null when the page has no vllm:num_requests_waiting
 */
export function readEngineMetrics(text: string, dialect: EngineDialect): EngineReading {
  return readParsedMetrics(parsePrometheusText(text, { only: sampleNames(dialect) }), dialect);
}

/**
 * Series of one name are combined per signal: queue and running counts and counters are summed (several
 * data-parallel engines behind one endpoint all queue there); KV usage takes the fullest engine, since
 * that one runs out first.
 */
export function readParsedMetrics(m: ParsedMetrics, dialect: EngineDialect): EngineReading {
  const d = DIALECT_METRICS[dialect];
  const cache = d.cacheConfig ? firstInfo(m.get(d.cacheConfig.name)) : undefined;
  const cacheLabel = (key: string): number | null =>
    cache === undefined || d.cacheConfig === null ? null : count(cache.labels[d.cacheConfig.labels[key]!]);
  const ttft = first(m, d.ttftBuckets);
  return {
    waiting: sum(first(m, d.waiting)),
    running: sum(first(m, d.running)),
    kvUsage: max(first(m, d.kvUsage)),
    blockSize: cacheLabel("blockSize") ?? count(first(m, d.blockSizeGauge)?.[0]?.value),
    numGpuBlocks: cacheLabel("numBlocks") ?? count(first(m, d.numBlocksGauge)?.[0]?.value),
    loras: d.lora ? readLora(m.get(d.lora.name), d.lora) : null,
    prefixHits: sum(first(m, d.prefixHits)),
    prefixQueries: sum(first(m, d.prefixQueries)),
    prefixHitRateGauge: max(first(m, d.prefixHitRateGauge)),
    ttftBuckets: ttft === undefined ? null : histogramBuckets(ttft),
  };
}

function first(m: ParsedMetrics, names: readonly string[]): Sample[] | undefined {
  for (const n of names) {
    const s = m.get(n);
    if (s !== undefined && s.length > 0) return s;
  }
  return undefined;
}

function sum(samples: Sample[] | undefined): number | null {
  if (samples === undefined) return null;
  let total = 0;
  for (const s of samples) {
    if (!Number.isFinite(s.value)) return null;
    total += s.value;
  }
  return total;
}

function max(samples: Sample[] | undefined): number | null {
  if (samples === undefined) return null;
  let m = Number.NEGATIVE_INFINITY;
  for (const s of samples) {
    if (!Number.isFinite(s.value)) return null;
    if (s.value > m) m = s.value;
  }
  return m;
}

/** A non-negative whole number from a label or gauge, else null. */
function count(v: string | number | undefined): number | null {
  const n = typeof v === "string" ? parseNumber(v) : v;
  return n !== undefined && Number.isInteger(n) && n >= 0 ? n : null;
}

/** Info series are set to 1; a value of 0 marks a series the engine has retired. */
function firstInfo(samples: Sample[] | undefined): Sample | undefined {
  return samples?.find((s) => s.value !== 0);
}

/**
 * vLLM sets the LoRA series to the current time and, in some versions, leaves older series behind, so
 * the newest (largest value) is the present state, as GIE reads it.
 */
function readLora(samples: Sample[] | undefined, info: InfoMetric): LoraState | null {
  if (samples === undefined || samples.length === 0) return null;
  let latest = samples[0]!;
  for (const s of samples) if (s.value > latest.value) latest = s;
  const names = (key: string) =>
    (latest.labels[info.labels[key]!] ?? "")
      .split(",")
      .map((a) => a.trim())
      .filter((a) => a !== "");
  return {
    max: count(latest.labels[info.labels.max!]),
    running: names("running"),
    waiting: names("waiting"),
  };
}
