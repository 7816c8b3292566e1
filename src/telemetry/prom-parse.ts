// Reads the Prometheus text format as engines serve it on /metrics, fast enough to scrape every 50 ms,
// plus the histogram helpers a router needs (buckets from samples, deltas, PromQL's histogram_quantile).

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** Samples by sample name (`vllm:num_requests_waiting`, `…_bucket`); `malformed` counts skipped lines. */
export type ParsedMetrics = Map<string, Sample[]> & { malformed: number };

export interface ParseOptions {
  /**
   * Keep only these sample names. Other lines are skipped before their labels are read, and are not
   * checked, so they never count as malformed.
   */
  only?: ReadonlySet<string> | ((name: string) => boolean);
}

/** A cumulative histogram bucket: `count` observations were `<= le`. */
export interface HistogramBucket {
  le: number;
  count: number;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const TIMESTAMP = /^-?\d+$/;
const SPACE = 32;
const TAB = 9;
const HASH = 35;
const BRACE_OPEN = 123;
const BRACE_CLOSE = 125;
const QUOTE = 34;
const BACKSLASH = 92;
const EQUALS = 61;
const COMMA = 44;
const CR = 13;

/**
 * Parses text format 0.0.4. A malformed line is skipped and counted, never thrown: one bad line from an
 * engine must not blank out the rest of the scrape. Timestamps are accepted and ignored.
 * @example
 * const m = parsePrometheusText(body, { only: new Set(["vllm:num_requests_waiting"]) });
 * const waiting = m.get("vllm:num_requests_waiting")?.[0]?.value;
 */
export function parsePrometheusText(text: string, opts: ParseOptions = {}): ParsedMetrics {
  const out = new Map<string, Sample[]>() as ParsedMetrics;
  out.malformed = 0;
  const only = opts.only;
  const keepFn = typeof only === "function" ? only : undefined;
  const keepSet = typeof only === "object" ? only : undefined;
  // Hashing a name to look it up costs more than finding it, so first rule out names by length.
  const keptLengths = keepSet === undefined ? undefined : lengthMask(keepSet);
  const len = text.length;
  // Next `{`, space and tab at or after the cursor. Native indexOf is several times faster than a char
  // loop; caching the hits keeps a page without tabs (or without labels) from being rescanned per line.
  let brace = -1;
  let space = -1;
  let tab = -1;
  let pos = 0;
  while (pos < len) {
    let next = text.indexOf("\n", pos);
    if (next === -1) next = len;
    const end = next > pos && text.charCodeAt(next - 1) === CR ? next - 1 : next;
    const i = skipBlanks(text, pos, end);
    pos = next + 1;
    if (i === end || text.charCodeAt(i) === HASH) continue;

    if (brace < i) brace = indexOrEnd(text, "{", i);
    if (space < i) space = indexOrEnd(text, " ", i);
    if (tab < i) tab = indexOrEnd(text, "\t", i);
    const nameEnd = Math.min(brace, space, tab, end);
    if (keptLengths !== undefined && keptLengths[nameEnd - i] !== 1) continue;
    const name = text.slice(i, nameEnd);
    if (keepSet !== undefined && !keepSet.has(name)) continue;
    if (keepFn !== undefined && !keepFn(name)) continue;
    if (parseSample(text, name, nameEnd, end, out) === MALFORMED) out.malformed++;
  }
  return out;
}

function indexOrEnd(text: string, s: string, from: number): number {
  const at = text.indexOf(s, from);
  return at === -1 ? text.length : at;
}

function lengthMask(names: ReadonlySet<string>): Uint8Array {
  const mask = new Uint8Array(Math.max(0, ...[...names].map((n) => n.length)) + 1);
  for (const n of names) mask[n.length] = 1;
  return mask;
}

const MALFORMED = -1;

/** Parses the rest of a sample line after its name; returns MALFORMED or 0 and appends to `out`. */
function parseSample(
  text: string,
  name: string,
  nameEnd: number,
  end: number,
  out: Map<string, Sample[]>,
): number {
  const samples = out.get(name);
  // A name already in `out` was validated on its first line.
  if (samples === undefined && !METRIC_NAME.test(name)) return MALFORMED;
  let labels: Record<string, string> = {};
  let i = skipBlanks(text, nameEnd, end);
  if (i < end && text.charCodeAt(i) === BRACE_OPEN) {
    const parsed = parseLabels(text, i + 1, end);
    if (parsed === undefined) return MALFORMED;
    labels = parsed.labels;
    i = skipBlanks(text, parsed.next, end);
  }

  const valueStart = i;
  while (i < end && !isBlank(text.charCodeAt(i))) i++;
  const value = parseNumber(text.slice(valueStart, i));
  if (value === undefined) return MALFORMED;

  i = skipBlanks(text, i, end);
  if (i < end) {
    const tsStart = i;
    while (i < end && !isBlank(text.charCodeAt(i))) i++;
    if (!TIMESTAMP.test(text.slice(tsStart, i)) || skipBlanks(text, i, end) !== end) return MALFORMED;
  }

  if (samples === undefined) out.set(name, [{ labels, value }]);
  else samples.push({ labels, value });
  return 0;
}

/** Parses `a="x",b="y"}` from just after `{`; undefined when malformed. */
function parseLabels(
  text: string,
  start: number,
  end: number,
): { labels: Record<string, string>; next: number } | undefined {
  const labels: Record<string, string> = {};
  let i = start;
  for (;;) {
    i = skipBlanks(text, i, end);
    if (i >= end) return undefined;
    if (text.charCodeAt(i) === BRACE_CLOSE) return { labels, next: i + 1 };

    const nameStart = i;
    if (!isNameStart(text.charCodeAt(i))) return undefined;
    for (i++; i < end && isNameChar(text.charCodeAt(i)); i++);
    const name = text.slice(nameStart, i);

    i = skipBlanks(text, i, end);
    if (i >= end || text.charCodeAt(i) !== EQUALS) return undefined;
    i = skipBlanks(text, i + 1, end);
    if (i >= end || text.charCodeAt(i) !== QUOTE) return undefined;

    const valueStart = ++i;
    i = text.indexOf('"', valueStart);
    if (i === -1 || i >= end) return undefined;
    let value: string | undefined = text.slice(valueStart, i);
    if (value.includes("\\")) {
      // Escapes are rare; rescan so an escaped quote does not end the value.
      for (
        i = valueStart;
        i < end && text.charCodeAt(i) !== QUOTE;
        i += text.charCodeAt(i) === BACKSLASH ? 2 : 1
      );
      if (i >= end) return undefined;
      value = unescapeLabelValue(text.slice(valueStart, i));
    }
    if (value === undefined || Object.hasOwn(labels, name)) return undefined;
    if (name === "__proto__")
      Object.defineProperty(labels, name, { value, enumerable: true, writable: true });
    else labels[name] = value;

    i = skipBlanks(text, i + 1, end);
    if (i >= end) return undefined;
    const sep = text.charCodeAt(i);
    if (sep === COMMA) i++;
    else if (sep !== BRACE_CLOSE) return undefined;
  }
}

/** `\\`, `\"` and `\n` are the only escapes the format has; anything else makes the line malformed. */
function unescapeLabelValue(raw: string): string | undefined {
  let s = "";
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c !== BACKSLASH) {
      s += raw[i];
      continue;
    }
    const e = raw[++i];
    if (e === "\\" || e === '"') s += e;
    else if (e === "n") s += "\n";
    else return undefined;
  }
  return s;
}

/**
 * A sample value or `le`: decimal or scientific, `NaN`, `+Inf`/`-Inf` or `Infinity` (any case), as Go's
 * ParseFloat reads them for Prometheus; no hex, binary or octal.
 */
export function parseNumber(s: string): number | undefined {
  if (s.length === 0) return undefined;
  const v = Number(s);
  if (!Number.isNaN(v)) {
    // Number() also reads 0x1f, 0b11 and 0o7, which Go's ParseFloat (and so Prometheus) refuses.
    const c = s.charCodeAt(1) | 0x20;
    return s.charCodeAt(0) === 0x30 && (c === 0x78 || c === 0x62 || c === 0x6f) ? undefined : v;
  }
  switch (s.toLowerCase()) {
    case "nan":
      return Number.NaN;
    case "+inf":
    case "inf":
    case "+infinity":
    case "infinity":
      return Number.POSITIVE_INFINITY;
    case "-inf":
    case "-infinity":
      return Number.NEGATIVE_INFINITY;
    default:
      return undefined;
  }
}

function skipBlanks(text: string, i: number, end: number): number {
  while (i < end && isBlank(text.charCodeAt(i))) i++;
  return i;
}

function isBlank(c: number): boolean {
  return c === SPACE || c === TAB;
}

/** [a-zA-Z_]; metric names also allow `:` (checked by the caller). */
function isNameStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}

function isNameChar(c: number): boolean {
  return isNameStart(c) || (c >= 48 && c <= 57);
}

/**
 * Cumulative buckets from a histogram's `_bucket` samples, sorted by `le`. Samples whose labels do not
 * include all of `match` are left out; the rest are summed per `le`, like PromQL's `sum by (le)` (so
 * with no `match`, all engines on a page count as one histogram).
 */
export function histogramBuckets(
  bucketSamples: readonly Sample[] | undefined,
  match: Readonly<Record<string, string>> = {},
): HistogramBucket[] {
  const byLe = new Map<number, number>();
  const want = Object.entries(match);
  for (const s of bucketSamples ?? []) {
    if (!want.every(([k, v]) => s.labels[k] === v)) continue;
    const le = s.labels.le === undefined ? undefined : parseNumber(s.labels.le);
    if (le === undefined || Number.isNaN(le)) continue;
    byLe.set(le, (byLe.get(le) ?? 0) + s.value);
  }
  return [...byLe].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le);
}

/**
 * Observations between two scrapes of the same histogram (`now - before`, per `le`). If any count went
 * down the engine restarted or was reset, and `now` alone is the best estimate, as PromQL's rate assumes.
 */
export function subtractBuckets(
  now: readonly HistogramBucket[],
  before: readonly HistogramBucket[],
): HistogramBucket[] {
  const prev = new Map(before.map((b) => [b.le, b.count]));
  const out = now.map((b) => ({ le: b.le, count: b.count - (prev.get(b.le) ?? 0) }));
  return out.some((b) => b.count < 0) ? now.map((b) => ({ ...b })) : out;
}

/**
 * The q-quantile of a histogram from cumulative buckets, exactly as PromQL's `histogram_quantile`:
 * linear interpolation inside the bucket (from 0 for the lowest bucket), the second-highest bound when
 * the rank falls in `+Inf`, NaN without a `+Inf` bucket or without observations, -Inf/+Inf for q<0/q>1.
 * @example histogramQuantile([{ le: 0.1, count: 90 }, { le: 0.5, count: 100 }, { le: Infinity, count: 100 }], 0.95) // 0.3
 */
export function histogramQuantile(buckets: readonly HistogramBucket[], q: number): number {
  if (Number.isNaN(q)) return Number.NaN;
  if (q < 0) return Number.NEGATIVE_INFINITY;
  if (q > 1) return Number.POSITIVE_INFINITY;
  if (buckets.length === 0) return Number.NaN;
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  if (sorted.at(-1)!.le !== Number.POSITIVE_INFINITY) return Number.NaN;

  // Merge equal bounds, then force counts non-decreasing (PromQL's coalesceBuckets and ensureMonotonic).
  const bs: HistogramBucket[] = [];
  for (const b of sorted) {
    const last = bs.at(-1);
    if (last !== undefined && last.le === b.le) last.count += b.count;
    else bs.push({ le: b.le, count: b.count });
  }
  for (let i = 1; i < bs.length; i++) bs[i]!.count = Math.max(bs[i]!.count, bs[i - 1]!.count);
  if (bs.length < 2) return Number.NaN;

  const observations = bs.at(-1)!.count;
  if (observations === 0) return Number.NaN;
  let rank = q * observations;
  let b = 0;
  while (b < bs.length - 1 && bs[b]!.count < rank) b++;
  if (b === bs.length - 1) return bs[b - 1]!.le;
  if (b === 0 && bs[0]!.le <= 0) return bs[0]!.le;

  let start = 0;
  let count = bs[b]!.count;
  if (b > 0) {
    start = bs[b - 1]!.le;
    count -= bs[b - 1]!.count;
    rank -= bs[b - 1]!.count;
  }
  return start + (bs[b]!.le - start) * (rank / count);
}
