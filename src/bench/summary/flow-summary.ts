// Flow-control figures of one router's run (issue 6): batch requests sent, completed and lost; batch
// throughput per scenario phase; gateway queue waits; and for tokengate the batch pause — when the live
// pool's TTFT P95 passed the threshold as the clients saw it, when the gateway paused, and when the last
// batch request left for an engine after that (the pause is effective from then).

import type { PauseWhen } from "../../config/route-types.js";
import type { BatchFlowResult, PauseResult } from "../results.js";
import type { ScenarioPhase } from "../scenarios/shipped.js";
import { percentile, round } from "../stats.js";
import type { ReplayRecord } from "../traffic/replay.js";

/** How far apart the client's and the gateway's clocks may place one moment (s). */
const CLOCK_SLACK_S = 0.25;

export interface FlowSummaryInput {
  records: readonly ReplayRecord[];
  batchClass: string;
  phases: readonly ScenarioPhase[];
  /** The gateway's log (lines and events), tokengate only. */
  log: Record<string, unknown>[] | null;
  /** Date.now() when the replay started: aligns the log's timestamps with the records'. */
  startedAtEpochMs: number;
  /** The batch rule's pause, when the router has one. */
  pauseWhen: PauseWhen | null;
}

export function summarizeFlow(input: FlowSummaryInput): BatchFlowResult {
  const batch = input.records.filter((r) => r.req.request_class === input.batchClass);
  const done = batch.filter((r) => !r.result.error);
  const endS = (r: ReplayRecord) => (r.sentAtMs + r.result.e2eMs) / 1000;
  const byPhase: BatchFlowResult["batch_throughput_by_phase"] = {};
  for (const p of input.phases) {
    const inPhase = done.filter((r) => endS(r) >= p.startS && endS(r) < p.endS);
    const secs = Math.max(1e-9, p.endS - p.startS);
    byPhase[p.name] = {
      requests_per_s: round(inPhase.length / secs, 3),
      output_tokens_per_s: round(inPhase.reduce((a, r) => a + (r.result.completionTokens ?? 0), 0) / secs, 1),
    };
  }
  const lines = logLines(input.log);
  const queueP95: Record<string, number | null> = {};
  if (lines.size > 0) {
    const classes = new Set(input.records.map((r) => r.req.request_class));
    for (const cls of classes) {
      const waits = input.records
        .filter((r) => r.req.request_class === cls)
        .map((r) => lines.get(r.req.id)?.gateway_queue_ms)
        .filter((v): v is number => typeof v === "number");
      queueP95[cls] = waits.length > 0 ? round(percentile(waits, 95)) : null;
    }
  }
  return {
    batch_sent: batch.length,
    batch_completed: done.length,
    batch_lost: batch.length - done.length,
    batch_last_completion_s: done.length > 0 ? round(Math.max(...done.map(endS)), 1) : null,
    batch_throughput_by_phase: byPhase,
    gateway_queue_p95_ms: queueP95,
    pause: input.pauseWhen && input.log ? pauseFigures(input, lines, batch) : null,
  };
}

function logLines(log: Record<string, unknown>[] | null): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const l of log ?? []) {
    if (typeof l.trace_id === "string" && String(l.event).startsWith("inference.")) out.set(l.trace_id, l);
  }
  return out;
}

function pauseFigures(
  input: FlowSummaryInput,
  lines: Map<string, Record<string, unknown>>,
  batch: readonly ReplayRecord[],
): PauseResult {
  const when = input.pauseWhen!;
  const atS = (ts: unknown) => (Date.parse(String(ts)) - input.startedAtEpochMs) / 1000;
  const events = (name: string) =>
    (input.log ?? []).filter((l) => l.event === name).map((l) => round(atS(l.ts), 2));
  const pausedAt = events("queue.paused");
  const resumedAt = events("queue.resumed");

  // Client-side: first-token times of streamed requests the gateway sent to the watched pool.
  const firstTokens = input.records
    .filter((r) => r.req.stream && !r.result.error && lines.get(r.req.id)?.route_pool === when.pool)
    .map((r) => ({ t: (r.sentAtMs + r.result.ttftMs) / 1000, ms: r.result.ttftMs }))
    .filter((x) => Number.isFinite(x.t))
    .sort((a, b) => a.t - b.t);
  const passed = firstPassing(firstTokens, when);

  // Batch dispatches: when each batch request left the gateway queue for an engine.
  const dispatches = batch
    .map((r) => {
      const wait = lines.get(r.req.id)?.gateway_queue_ms;
      const endpoint = lines.get(r.req.id)?.endpoint;
      return typeof wait === "number" && endpoint ? (r.sentAtMs + wait) / 1000 : null;
    })
    .filter((t): t is number => t !== null);
  let effectiveAfter: number | null = null;
  let whilePaused = 0;
  // Dispatch times come from the client's clock plus the logged queue wait, event times from the
  // gateway's wall clock: a dispatch within this much of a resume counts as made at the resume.
  const slack = CLOCK_SLACK_S;
  for (let i = 0; i < pausedAt.length; i++) {
    const from = pausedAt[i]!;
    const to = (resumedAt.find((t) => t > from) ?? Number.POSITIVE_INFINITY) - slack;
    whilePaused += dispatches.filter((t) => t > from + slack && t < to).length;
  }
  if (passed !== null) {
    const pause = pausedAt.find((t) => t >= passed - when.windowSeconds) ?? null;
    if (pause !== null) {
      const resume = (resumedAt.find((t) => t > pause) ?? Number.POSITIVE_INFINITY) - slack;
      const lastLeft = Math.max(pause, ...dispatches.filter((t) => t >= passed && t < resume));
      effectiveAfter = round(Math.max(0, lastLeft - passed), 2);
    }
  }
  return {
    watched_pool: when.pool,
    threshold_ms: when.ttftP95MsGt,
    window_s: when.windowSeconds,
    threshold_passed_s: passed === null ? null : round(passed, 2),
    paused_at_s: pausedAt,
    resumed_at_s: resumedAt,
    effective_after_s: effectiveAfter,
    batch_dispatched_while_paused: whilePaused,
  };
}

/** The first moment the P95 over the trailing window passes the threshold, with enough samples. */
function firstPassing(samples: { t: number; ms: number }[], when: PauseWhen): number | null {
  let lo = 0;
  for (let hi = 0; hi < samples.length; hi++) {
    const now = samples[hi]!.t;
    while (samples[lo]!.t < now - when.windowSeconds) lo++;
    const n = hi - lo + 1;
    if (n < when.minSamples) continue;
    const window = samples.slice(lo, hi + 1).map((s) => s.ms);
    if (percentile(window, 95) > when.ttftP95MsGt) return now;
  }
  return null;
}
