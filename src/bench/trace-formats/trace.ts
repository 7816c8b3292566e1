// The workload trace: one JSON object per line, one request per object. Scenarios generate traces;
// users replay their own. Documented in docs/benchmarks.md ("Trace format"); keep this file and that text in step.
// Production traces in other shapes (Mooncake's hash_ids JSONL, Azure's CSV) are read into this one by
// trace-formats/.

/** One request of a workload. Times are ms from the start of the run. */
export interface TraceRequest {
  /** Arrival time, ms after the run starts (open loop). For `session` turns after the first, the
   *  earliest send time; the turn also waits for the previous turn's reply plus `think_ms`. */
  t_ms: number;
  /** Unique within the trace. */
  id: string;
  tenant: string;
  /** The `model` the request names (a served model, an alias, a LoRA adapter); default: the router's model. */
  model?: string;
  task: string | null;
  /** Seed 004's classes: interactive, long, batch, … (free text; reports group by it). */
  request_class: string;
  /** The user message. Either this or `input_tokens`. */
  input_text?: string;
  /** Length of a generated user message, in tokens (the simulator's tokenizer), when no text is given. */
  input_tokens?: number;
  /** Requests of one prefix group share a system prompt of `prefix_tokens` tokens generated from the group id. */
  prefix_group?: string;
  prefix_tokens?: number;
  /** Language of generated text; default "en". */
  lang?: "en" | "zh";
  max_tokens: number;
  stream: boolean;
  /** Multi-turn chat: turns of one session run in order and each carries the conversation so far. */
  session?: string;
  turn?: number;
  think_ms?: number;
  /**
   * Prefix sharing as production traces give it (Mooncake's `hash_ids`): one id per block of
   * `hash_block_tokens` prompt tokens, in order; requests with the same leading ids share those blocks.
   * The user message is then generated per block id (workload/block-text.ts), `input_tokens` long.
   */
  hash_ids?: number[];
  /** Tokens per `hash_ids` block; default 512 (Mooncake's). The last block may be partial. */
  hash_block_tokens?: number;
}

/** Tokens per `hash_ids` block when a trace does not say: Mooncake's block size. */
export const DEFAULT_HASH_BLOCK_TOKENS = 512;

export function parseTraceLines(text: string, source = "trace"): TraceRequest[] {
  const out: TraceRequest[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line || line.startsWith("#")) continue;
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(line) as Record<string, unknown>;
    } catch (err) {
      throw new Error(`${source}:${i + 1}: not JSON: ${(err as Error).message}`);
    }
    const at = (field: string, msg: string) => new Error(`${source}:${i + 1}: ${field}: ${msg}`);
    if (typeof v.t_ms !== "number" || v.t_ms < 0) throw at("t_ms", "expected a number ≥ 0");
    if (typeof v.max_tokens !== "number" || v.max_tokens < 1) throw at("max_tokens", "expected a number ≥ 1");
    if (v.input_text === undefined && typeof v.input_tokens !== "number") {
      throw at("input_text", "give input_text or input_tokens");
    }
    if (v.hash_ids !== undefined) {
      if (!Array.isArray(v.hash_ids) || !v.hash_ids.every((id) => Number.isSafeInteger(id))) {
        throw at("hash_ids", "expected an array of integers");
      }
      if (typeof v.input_tokens !== "number" || v.input_text !== undefined) {
        throw at("hash_ids", "give input_tokens (the prompt's length), not input_text, with hash_ids");
      }
    }
    if (
      v.hash_block_tokens !== undefined &&
      (!Number.isSafeInteger(v.hash_block_tokens) || (v.hash_block_tokens as number) < 1)
    ) {
      throw at("hash_block_tokens", "expected an integer ≥ 1");
    }
    out.push({
      t_ms: v.t_ms,
      id: typeof v.id === "string" ? v.id : `r${i + 1}`,
      tenant: typeof v.tenant === "string" ? v.tenant : "default",
      ...(typeof v.model === "string" && v.model !== "" ? { model: v.model } : {}),
      task: typeof v.task === "string" ? v.task : null,
      request_class: typeof v.request_class === "string" ? v.request_class : "interactive",
      input_text: typeof v.input_text === "string" ? v.input_text : undefined,
      input_tokens: typeof v.input_tokens === "number" ? v.input_tokens : undefined,
      prefix_group: typeof v.prefix_group === "string" ? v.prefix_group : undefined,
      prefix_tokens: typeof v.prefix_tokens === "number" ? v.prefix_tokens : undefined,
      lang: v.lang === "zh" ? "zh" : "en",
      max_tokens: v.max_tokens,
      stream: v.stream !== false,
      session: typeof v.session === "string" ? v.session : undefined,
      turn: typeof v.turn === "number" ? v.turn : undefined,
      think_ms: typeof v.think_ms === "number" ? v.think_ms : undefined,
      ...(Array.isArray(v.hash_ids) ? { hash_ids: v.hash_ids as number[] } : {}),
      ...(typeof v.hash_block_tokens === "number" ? { hash_block_tokens: v.hash_block_tokens } : {}),
    });
  }
  return out.sort((a, b) => a.t_ms - b.t_ms);
}

export function formatTrace(reqs: readonly TraceRequest[]): string {
  return `${reqs.map((r) => JSON.stringify(r)).join("\n")}\n`;
}
