// A CSV of arrival time, context tokens and generated tokens: the Azure LLM inference traces'
// `TIMESTAMP,ContextTokens,GeneratedTokens`, or the same with a numeric arrival time whose unit the
// column name gives. Documented in docs/benchmarks.md ("Trace format").
//
// Arrival times become ms after the earliest row (the first, in a file sorted by time):
// - date-times, `2023-11-16 18:15:46.6805900` (any number of fractional digits, `T` or a space, an
//   optional `Z` or ±hh:mm offset; without one, read as UTC: only differences matter);
// - numbers, in a column named with its unit: `timestamp_s`, `arrival_time_ms`, `time (s)`, …
//   A bare `timestamp` or `arrival_time` holding numbers is ambiguous (Mooncake counts ms, many
//   others seconds) and refused, with the names that would settle it.

import type { TraceRequest } from "./trace.js";

const TIME_BASES = ["timestamp", "arrival_time", "arrival_timestamp", "arrived_at", "arrival", "time"];
/** ms per unit, by the unit's names in a column name. */
const UNITS: ReadonlyMap<string, number> = new Map([
  ["ms", 1],
  ["msec", 1],
  ["millis", 1],
  ["milliseconds", 1],
  ["s", 1000],
  ["sec", 1000],
  ["secs", 1000],
  ["seconds", 1000],
]);
/** Header names, lower case without spaces, `_` or `-`. */
const CONTEXT_NAMES = ["contexttokens", "inputtokens", "inputlength", "prompttokens"];
const GENERATED_NAMES = ["generatedtokens", "outputtokens", "outputlength", "completiontokens"];

interface TimeColumn {
  index: number;
  name: string;
  /** ms per unit for numeric times; null: the name gives no unit, so the values must be date-times. */
  msPerUnit: number | null;
}

/**
 * The requests of an arrival/context/generated CSV, sorted by arrival: `input_tokens` the context
 * tokens (text generated from the request id), `max_tokens` the generated tokens (at least 1), tenant
 * `default`, class `interactive`, streamed, ids `r<line>`. Header names match case-insensitively;
 * other columns are ignored.
 * @throws Error naming `source:line` and the column at fault.
 */
export function parseTokenCountsCsv(text: string, source = "trace"): TraceRequest[] {
  const lines = text.replace(/^\uFEFF/, "").split("\n");
  let h = 0;
  while (h < lines.length && lines[h]!.trim() === "") h++;
  if (h === lines.length) throw new Error(`${source}: empty: expected a header row, then rows`);
  const header = splitCsvLine(lines[h]!).map((c) => c.trim());
  const headerError = (msg: string) => new Error(`${source}:${h + 1}: header: ${msg}`);
  const time = timeColumn(header);
  if (time === null) {
    throw headerError(
      `no arrival-time column (expected TIMESTAMP, arrival_time, timestamp_s, timestamp_ms, …)`,
    );
  }
  const context = findColumn(header, CONTEXT_NAMES);
  if (context < 0) throw headerError("no context-token column (expected ContextTokens or input_tokens)");
  const generated = findColumn(header, GENERATED_NAMES);
  if (generated < 0)
    throw headerError("no generated-token column (expected GeneratedTokens or output_tokens)");

  const rows: { line: number; atMs: number; input: number; output: number }[] = [];
  let epochSec: number | null = null;
  for (let i = h + 1; i < lines.length; i++) {
    if (lines[i]!.trim() === "") continue;
    const cells = splitCsvLine(lines[i]!);
    const at = (column: string, msg: string) => new Error(`${source}:${i + 1}: ${column}: ${msg}`);
    const cell = (index: number, column: string) => {
      const c = cells[index]?.trim();
      if (c === undefined || c === "") throw at(column, "missing value");
      return c;
    };
    const raw = cell(time.index, time.name);
    let atMs: number;
    if (time.msPerUnit !== null) {
      const n = Number(raw);
      if (!Number.isFinite(n)) throw at(time.name, `expected a number, got "${raw}"`);
      atMs = n * time.msPerUnit;
    } else {
      const d = parseDateTime(raw);
      if (d === null) {
        const ambiguous = Number.isFinite(Number(raw));
        throw at(
          time.name,
          ambiguous
            ? `"${raw}" is a number but the column name gives no unit: name it ${time.name}_s (seconds) or ${time.name}_ms (ms)`
            : `expected a date-time like 2023-11-16 18:15:46.6805900, got "${raw}"`,
        );
      }
      // Whole seconds from the first row's and the fraction apart, so 7 fractional digits survive.
      epochSec ??= d.sec;
      atMs = (d.sec - epochSec) * 1000 + d.fracMs;
    }
    const input = tokenCount(cell(context, header[context]!));
    if (input === null)
      throw at(header[context]!, `expected an integer ≥ 0, got "${cells[context]!.trim()}"`);
    const output = tokenCount(cell(generated, header[generated]!));
    if (output === null) {
      throw at(header[generated]!, `expected an integer ≥ 0, got "${cells[generated]!.trim()}"`);
    }
    rows.push({ line: i + 1, atMs, input, output });
  }
  let start = Number.POSITIVE_INFINITY;
  for (const r of rows) start = Math.min(start, r.atMs);
  return rows
    .map(
      (r): TraceRequest => ({
        t_ms: Math.round((r.atMs - start) * 1e4) / 1e4,
        id: `r${r.line}`,
        tenant: "default",
        task: null,
        request_class: "interactive",
        input_tokens: r.input,
        lang: "en",
        max_tokens: Math.max(1, r.output),
        stream: true,
      }),
    )
    .sort((a, b) => a.t_ms - b.t_ms);
}

/**
 * `2023-11-16 18:15:46.6805900` as whole seconds since the epoch and the fraction in ms; null when the
 * text is not such a date-time.
 */
export function parseDateTime(text: string): { sec: number; fracMs: number } | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))? ?(Z|[+-]\d{2}:?\d{2})?$/i.exec(
    text.trim(),
  );
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return null;
  let offsetMin = 0;
  const zone = m[8];
  if (zone !== undefined && zone.toUpperCase() !== "Z") {
    const digits = zone.replace(":", "");
    offsetMin =
      (zone.startsWith("-") ? -1 : 1) * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5)));
  }
  const sec = Date.UTC(year, month - 1, day, hour, minute, second) / 1000 - offsetMin * 60;
  return { sec, fracMs: m[7] === undefined ? 0 : Number(`0.${m[7]}`) * 1000 };
}

/** The arrival-time column: the first named as one (`timestamp`, `arrival_time`, …), with or without a unit. */
function timeColumn(header: readonly string[]): TimeColumn | null {
  for (let index = 0; index < header.length; index++) {
    const name = header[index]!;
    const lower = name.toLowerCase();
    for (const base of TIME_BASES) {
      if (lower === base) return { index, name, msPerUnit: null };
      if (!lower.startsWith(base)) continue;
      // timestamp_ms, timestamp (s), timestamp(ms), timestamp_(s)
      const m = /^(?:_(\w+)|[ _]?\((\w+)\))$/.exec(lower.slice(base.length));
      const msPerUnit = m ? UNITS.get((m[1] ?? m[2])!) : undefined;
      if (msPerUnit !== undefined) return { index, name, msPerUnit };
    }
  }
  return null;
}

function findColumn(header: readonly string[], names: readonly string[]): number {
  return header.findIndex((h) => names.includes(h.toLowerCase().replace(/[\s_-]/g, "")));
}

function tokenCount(text: string): number | null {
  if (!/^\d+(\.0*)?$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

/** Cells of one CSV line: commas separate, double quotes enclose (a doubled quote inside is one). */
function splitCsvLine(line: string): string[] {
  const text = line.endsWith("\r") ? line.slice(0, -1) : line;
  const cells: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c === '"') {
      quoted = true;
    } else if (c === ",") {
      cells.push(cell);
      cell = "";
    } else {
      cell += c;
    }
  }
  cells.push(cell);
  return cells;
}
