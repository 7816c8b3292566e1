// The batch-day bench's reading of the gateway's request logs (one per gateway process of a run):
// what each line's runs did, and where the live requests went.

import { readFileSync } from "node:fs";

export interface LogLine {
  event?: string;
  ts?: string;
  outcome?: string;
  request_class?: string;
  endpoint?: string | null;
  trace_id?: string;
  batch_id?: string;
  latency_ms?: number;
  runtime_queue_ms?: number | null;
  prefill_ms?: number | null;
}

/**
 * From the gateway's request logs: the runner's `batch.line` events by outcome, live summaries by
 * endpoint, the engine's part of each live TTFT (its queue and prefill) by trace id, and when each batch line was dispatched
 * (epoch ms: its log line's time less its latency).
 */
export function readLogs(files: readonly string[]): {
  lineOutcomes: Record<string, number>;
  liveEndpoints: Record<string, number>;
  engineMs: Map<string, number>;
  batchSentAtEpochMs: number[];
} {
  const lineOutcomes: Record<string, number> = {};
  const liveEndpoints: Record<string, number> = {};
  const engineMs = new Map<string, number>();
  const batchSentAtEpochMs: number[] = [];
  for (const f of files) {
    let text = "";
    try {
      text = readFileSync(f, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n")) {
      if (!line.startsWith("{")) continue;
      let e: LogLine;
      try {
        e = JSON.parse(line) as LogLine;
      } catch {
        continue; // a line torn by the kill
      }
      if (e.event === "batch.line" && e.outcome) lineOutcomes[e.outcome] = (lineOutcomes[e.outcome] ?? 0) + 1;
      if (e.event !== "inference.completed") continue;
      if (e.request_class === "interactive" && e.endpoint) {
        liveEndpoints[e.endpoint] = (liveEndpoints[e.endpoint] ?? 0) + 1;
        if (e.trace_id && typeof e.prefill_ms === "number")
          engineMs.set(e.trace_id, (e.runtime_queue_ms ?? 0) + e.prefill_ms);
      }
      if (e.batch_id && e.ts && typeof e.latency_ms === "number")
        batchSentAtEpochMs.push(Date.parse(e.ts) - e.latency_ms);
    }
  }
  return { lineOutcomes, liveEndpoints, engineMs, batchSentAtEpochMs };
}
