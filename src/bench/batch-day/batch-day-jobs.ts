// The batch-day workload: seed 004's incident as support-incident generates it (the same live summaries,
// the same backlog of 52k-token recomputes, for the same seed), and the backlog cut into Batch API jobs
// the way the recompute job sends it — one job per page of the backlog (a page split in jobs of at most
// `maxJobLines`), the batch-only tail as one more job — each submitted when its first line arrives in the
// synchronous trace. Each job's input file holds the very chat body the synchronous run sends.

import { BATCH_PAGE_INTERVAL_S, supportIncident } from "../scenarios/support-incident.js";
import { SUMMARY_ALIAS } from "../scenarios/support-topologies.js";
import type { TraceRequest } from "../trace-formats/trace.js";
import { buildMessages } from "../workload/messages.js";

export interface BatchDayWorkload {
  /** support-incident's whole trace: what the synchronous run replays. */
  readonly trace: readonly TraceRequest[];
  /** Its live summaries (interactive and long): what both runs replay. */
  readonly live: readonly TraceRequest[];
  /** Its batch recomputes. */
  readonly backlog: readonly TraceRequest[];
  /** The backlog as jobs, in submission order. */
  readonly jobs: readonly PlannedJob[];
  /** When live arrivals end, ms from the start. */
  readonly liveEndMs: number;
}

export interface PlannedJob {
  /** e.g. `page-1`, `page-1b`, `tail`. */
  readonly name: string;
  /** Submitted at this time, ms from the run's start: its first line's arrival in the synchronous trace. */
  readonly atMs: number;
  readonly lines: readonly TraceRequest[];
}

export function batchDayWorkload(o: {
  seed: number;
  quick: boolean;
  durationS: number;
  maxJobLines: number;
}): BatchDayWorkload {
  const opts = { seed: o.seed, quick: o.quick, durationS: o.durationS };
  const trace = supportIncident.generate(opts);
  const phases = supportIncident.phases(opts);
  const isBatch = (r: TraceRequest) => r.request_class === supportIncident.batchClass;
  const flood = phases.find((p) => p.name === "backlog-flood");
  if (!flood) throw new Error("support-incident has no backlog-flood phase");
  const backlog = trace.filter(isBatch);
  return {
    trace,
    live: trace.filter((r) => !isBatch(r)),
    backlog,
    jobs: backlogJobs(backlog, flood.startS, flood.endS, o.maxJobLines),
    liveEndMs: flood.endS * 1000,
  };
}

/**
 * Backlog lines (sorted by t_ms) as jobs: lines that arrive in the flood phase by page (the recompute
 * job submits a page every BATCH_PAGE_INTERVAL_S from the flood's start), later ones (the batch-only
 * tail) as one job; a group over `maxJobLines` is split in order.
 */
export function backlogJobs(
  backlog: readonly TraceRequest[],
  floodStartS: number,
  floodEndS: number,
  maxJobLines: number,
): PlannedJob[] {
  const groups = new Map<string, TraceRequest[]>();
  for (const r of [...backlog].sort((a, b) => a.t_ms - b.t_ms)) {
    const s = r.t_ms / 1000;
    const name =
      s < floodEndS
        ? `page-${Math.max(0, Math.floor((s - floodStartS) / BATCH_PAGE_INTERVAL_S)) + 1}`
        : "tail";
    const g = groups.get(name) ?? [];
    g.push(r);
    groups.set(name, g);
  }
  const jobs: PlannedJob[] = [];
  for (const [name, lines] of groups) {
    const parts = Math.ceil(lines.length / Math.max(1, maxJobLines));
    for (let i = 0; i < parts; i++) {
      const part = lines.slice(i * maxJobLines, (i + 1) * maxJobLines);
      jobs.push({
        name: parts > 1 ? `${name}${String.fromCharCode(97 + i)}` : name,
        atMs: part[0]!.t_ms,
        lines: part,
      });
    }
  }
  return jobs.sort((a, b) => a.atMs - b.atMs);
}

/** The chat body both runs send for a backlog line (the synchronous replay's own, replay.ts). */
export function lineBody(r: TraceRequest): Record<string, unknown> {
  return {
    model: r.model ?? SUMMARY_ALIAS,
    messages: buildMessages(r),
    max_tokens: r.max_tokens,
    ignore_eos: true,
  };
}

/** A job's input file: one Batch API request per line, its trace id as custom_id. */
export function jobInput(job: PlannedJob): Buffer {
  const lines = job.lines.map((r) =>
    JSON.stringify({ custom_id: r.id, method: "POST", url: "/v1/chat/completions", body: lineBody(r) }),
  );
  return Buffer.from(`${lines.join("\n")}\n`, "utf8");
}
