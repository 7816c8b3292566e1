// One function that turns a scraped /metrics page into an EngineReading, by the names its engine dialect
// prints (engines/). A metric the page does not carry reads as null.

import { DIALECTS, type EngineDialectName } from "../engines/dialects.js";
import type { DialectMetrics, InfoMetric } from "../engines/engine-dialect.js";
import {
  type HistogramBucket,
  histogramBuckets,
  type ParsedMetrics,
  parseNumber,
  parsePrometheusText,
  type Sample,
} from "../telemetry/prom-parse.js";

/** Each dialect's metric names, by dialect. */
export const DIALECT_METRICS: Readonly<Record<EngineDialectName, DialectMetrics>> = {
  vllm: DIALECTS.vllm.metrics,
  sglang: DIALECTS.sglang.metrics,
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

const ONLY = new Map<EngineDialectName, ReadonlySet<string>>();

/** Every sample name the dialect reads, for the parser's `only` filter. */
export function sampleNames(dialect: EngineDialectName): ReadonlySet<string> {
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
export function readEngineMetrics(text: string, dialect: EngineDialectName): EngineReading {
  return readParsedMetrics(parsePrometheusText(text, { only: sampleNames(dialect) }), dialect);
}

/**
 * Series of one name are combined per signal: queue and running counts and counters are summed (several
 * data-parallel engines behind one endpoint all queue there); KV usage takes the fullest engine, since
 * that one runs out first.
 */
export function readParsedMetrics(m: ParsedMetrics, dialect: EngineDialectName): EngineReading {
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
