// Client records of one router's run for the bench's summary tests: a request of the trace with the
// fields a test cares about, and what the client measured of it.

import type { TraceRequest } from "../bench/trace-formats/trace.js";
import type { ReplayRecord } from "../bench/traffic/replay.js";

export interface RecordSpec {
  id?: string;
  tenant?: string;
  /** Arrival in the trace, s (the record is sent then too). */
  atS?: number;
  inputTokens?: number;
  inputText?: string;
  cls?: string;
  ttftMs?: number;
  e2eMs?: number;
  error?: string;
}

let next = 0;

/** One finished (or failed, with `error`) streamed request; ids are unique unless given. */
export function replayRecord(s: RecordSpec = {}): ReplayRecord {
  const req: TraceRequest = {
    t_ms: (s.atS ?? 0) * 1000,
    id: s.id ?? `rec-${++next}`,
    tenant: s.tenant ?? "t",
    task: null,
    request_class: s.cls ?? "interactive",
    ...(s.inputText !== undefined ? { input_text: s.inputText } : { input_tokens: s.inputTokens ?? 500 }),
    max_tokens: 10,
    stream: true,
  };
  return {
    req,
    sentAtMs: req.t_ms,
    result: {
      status: s.error ? 503 : 200,
      ttftMs: s.error ? Number.NaN : (s.ttftMs ?? 100),
      e2eMs: s.e2eMs ?? (s.ttftMs ?? 100) * 4,
      contentFrames: s.error ? 0 : 10,
      promptTokens: null,
      completionTokens: s.error ? null : 10,
      cachedTokens: null,
      error: s.error ?? null,
      headers: {},
      trailers: {},
      text: null,
    },
  };
}
