// Mooncake's (Kimi's) production trace: one JSON object per line with `timestamp` (ms from the start),
// `input_length` and `output_length` (tokens) and `hash_ids`, one id per block of prompt tokens, equal
// ids across requests meaning a shared prefix. Other fields are ignored. Documented in
// docs/benchmarks.md ("Trace format").

import { DEFAULT_HASH_BLOCK_TOKENS, type TraceRequest } from "./trace.js";

/**
 * The requests of a hash-ids trace, sorted by arrival, as the native format carries them: the user
 * message is generated per block id (`hash_ids` with `hash_block_tokens`), tenant `default`, class
 * `interactive`, streamed, `max_tokens` the output length (at least 1), ids `r<line>`.
 * @param blockTokens prompt tokens per hash id (Mooncake: 512); the last block may be partial.
 * @throws Error naming `source:line` and the field at fault.
 */
export function parseHashIdsJsonl(
  text: string,
  source = "trace",
  blockTokens = DEFAULT_HASH_BLOCK_TOKENS,
): TraceRequest[] {
  if (!Number.isSafeInteger(blockTokens) || blockTokens < 1) {
    throw new Error(`block tokens: expected an integer ≥ 1, got ${blockTokens}`);
  }
  const out: TraceRequest[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line || line.startsWith("#")) continue;
    const at = (field: string, msg: string) => new Error(`${source}:${i + 1}: ${field}: ${msg}`);
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (err) {
      throw new Error(`${source}:${i + 1}: not JSON: ${(err as Error).message}`);
    }
    if (typeof v !== "object" || v === null || Array.isArray(v)) {
      throw new Error(`${source}:${i + 1}: expected a JSON object`);
    }
    const r = v as Record<string, unknown>;
    if (typeof r.timestamp !== "number" || !Number.isFinite(r.timestamp) || r.timestamp < 0) {
      throw at("timestamp", "expected a number of ms ≥ 0");
    }
    const input = count(r.input_length);
    if (input === null) throw at("input_length", "expected an integer ≥ 0");
    const output = count(r.output_length);
    if (output === null) throw at("output_length", "expected an integer ≥ 0");
    const ids = r.hash_ids;
    if (ids !== undefined && (!Array.isArray(ids) || !ids.every((id) => Number.isSafeInteger(id)))) {
      throw at("hash_ids", "expected an array of integers");
    }
    out.push({
      t_ms: r.timestamp,
      id: `r${i + 1}`,
      tenant: "default",
      task: null,
      request_class: "interactive",
      input_tokens: input,
      lang: "en",
      max_tokens: Math.max(1, output),
      stream: true,
      ...(ids !== undefined ? { hash_ids: ids as number[], hash_block_tokens: blockTokens } : {}),
    });
  }
  return out.sort((a, b) => a.t_ms - b.t_ms);
}

function count(v: unknown): number | null {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : null;
}
