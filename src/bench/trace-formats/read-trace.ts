// Which trace format a file is in, and its requests: the native format (bench/trace.ts), a hash-ids
// JSONL (Mooncake's) or an arrival/context/generated CSV (Azure's). `tokengate bench <file>` reads
// traces through here.

import { readFileSync } from "node:fs";
import { parseHashIdsJsonl } from "./hash-ids-jsonl.js";
import { parseTokenCountsCsv } from "./token-counts-csv.js";
import { DEFAULT_HASH_BLOCK_TOKENS, parseTraceLines, type TraceRequest } from "./trace.js";

export type TraceFormat = "native" | "hash-ids-jsonl" | "token-counts-csv";

/** File names `tokengate bench` takes for a trace rather than a scenario. */
export function isTraceFile(name: string): boolean {
  return /\.(jsonl|csv)$/i.test(name);
}

/**
 * The format of `file` with contents `text`: `.csv` → the CSV; otherwise a first record (the first
 * line that is neither blank nor a `#` comment) with `hash_ids` or `input_length` and no `t_ms` →
 * hash-ids JSONL; anything else → native (whose parser then names what is wrong).
 */
export function traceFormatOf(file: string, text: string): TraceFormat {
  if (/\.csv$/i.test(file)) return "token-counts-csv";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    try {
      const v = JSON.parse(line) as unknown;
      // The native format may carry hash_ids too; its records have t_ms.
      if (typeof v === "object" && v !== null && !("t_ms" in v) && ("hash_ids" in v || "input_length" in v)) {
        return "hash-ids-jsonl";
      }
    } catch {
      // Not JSON: the native parser reports it with its line.
    }
    return "native";
  }
  return "native";
}

export interface TraceReadOptions {
  /** Prompt tokens per hash id, for a hash-ids trace (default 512, Mooncake's). */
  blockTokens?: number;
}

/** The requests of a trace's text, sorted by arrival, whichever format `file` is in. */
export function parseTraceFile(file: string, text: string, opts: TraceReadOptions = {}): TraceRequest[] {
  switch (traceFormatOf(file, text)) {
    case "token-counts-csv":
      return parseTokenCountsCsv(text, file);
    case "hash-ids-jsonl":
      return parseHashIdsJsonl(text, file, opts.blockTokens ?? DEFAULT_HASH_BLOCK_TOKENS);
    case "native":
      return parseTraceLines(text, file);
  }
}

/** Reads and parses the trace file `file`. */
export function readTraceFile(file: string, opts: TraceReadOptions = {}): TraceRequest[] {
  return parseTraceFile(file, readFileSync(file, "utf8"), opts);
}
