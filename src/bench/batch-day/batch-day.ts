// `tokengate bench batch-day` (issue 16): seed 004's incident day on seed 004's split pools with the
// weekend backlog of 52k-token recomputes sent two ways, back to back on the same simulated engines and
// under the same live load:
//   (a) synchronous: the backlog as synchronous batch-class calls, as support-incident sends them;
//   (b) batch jobs: the same lines uploaded with the official openai client as a few Batch API jobs
//       (files.create, batches.create, polled with batches.retrieve), and the gateway SIGKILLed once in
//       the middle of the jobs and started again on the same SQLite file and port.
// The gateway runs as `tokengate gateway` on a config folder (split pools, `batches: {path, leaseMs:
// 2000}`); the engines as `tokengate sim --fleet`; this process is the load client. Figures (live TTFT
// P95 in both runs, lines lost and twice in the output, batch tokens/s over the batch window, the
// restart's timing): batch-day-figures.ts; the two runs: batch-day-runs.ts. Writes batch-day.json and batch-day.md.

import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { splitTopology } from "../scenarios/support-topologies.js";
import type { PriorityMode } from "../services/router-priority.js";
import { type BatchDayFigures, batchDayFigures } from "./batch-day-figures.js";
import { type BatchDayWorkload, batchDayWorkload } from "./batch-day-jobs.js";
import {
  freePort,
  GatewayProcess,
  LEASE_MS,
  resetEngines,
  startFleet,
  writeConfig,
} from "./batch-day-processes.js";
import { batchDayMarkdown } from "./batch-day-report.js";
import { jobsRun, log, POLL_MS, type Settings, synchronousRun } from "./batch-day-runs.js";

export interface BatchDayOptions {
  readonly outDir: string;
  readonly quick?: boolean;
  readonly seed?: number;
}

/**
 * Quick: support-incident's quick workload over 16 s (a page of 10 recomputes with 150-token replies at
 * 3.6 s, live summaries until 14.2 s, no tail: a tail line arriving at the end would make the batch
 * window end with its arrival, not with the backlog), the page as jobs of 4, 4 and 2.
 * Full: its full workload over 120 s (pages of 24 at 12 s and 52 s, live until 84 s, 9 tail lines, replies
 * of 1,800 tokens), one job per page and the tail.
 */
const QUICK: Settings = {
  durationS: 16,
  maxJobLines: 4,
  killAfterLines: 3,
  restartDelayMs: 1000,
  finishTimeoutMs: 120_000,
};
const FULL: Settings = {
  durationS: 120,
  maxJobLines: 24,
  killAfterLines: 12,
  restartDelayMs: 1000,
  finishTimeoutMs: 600_000,
};

export async function runBatchDay(opts: BatchDayOptions): Promise<BatchDayFigures> {
  const s = opts.quick ? QUICK : FULL;
  const seed = opts.seed ?? 1;
  const w = batchDayWorkload({
    seed,
    quick: opts.quick === true,
    durationS: s.durationS,
    maxJobLines: s.maxJobLines,
  });
  mkdirSync(opts.outDir, { recursive: true });
  const dbPath = join(opts.outDir, "batches.db");
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${dbPath}${suffix}`, { force: true });
  const work = mkdtempSync(join(tmpdir(), "tokengate-batch-day-"));
  const fleet = await startFleet(splitTopology.fleet, work);
  try {
    const port = await freePort();
    const configDir = join(work, "config");
    writeConfig(configDir, dbPath, fleet.byGroup);
    const gw = new GatewayProcess(configDir, port, work, fleet.child.pid);
    log(
      `batch-day: ${w.live.length} live summaries, ${w.backlog.length} batch lines, on ${splitTopology.name}`,
    );

    log("batch-day: (a) the backlog as synchronous batch-class calls");
    const sync = await synchronousRun(w, gw, fleet);
    await resetEngines(fleet.urls);

    log(`batch-day: (b) the backlog as ${w.jobs.length} Batch API jobs, the gateway SIGKILLed mid-jobs`);
    const jobs = await jobsRun(w, s, gw, fleet);

    const figures = batchDayFigures(sync, jobs, opts.quick ? 1 : 5);
    const setup = setupText(w, s, seed, gw.priority);
    writeFileSync(
      join(opts.outDir, "batch-day.json"),
      `${JSON.stringify({ date: new Date().toISOString(), seed, quick: opts.quick === true, setup, ...figures }, null, 2)}\n`,
    );
    writeFileSync(join(opts.outDir, "batch-day.md"), batchDayMarkdown(figures, setup));
    // The gateway's request logs (one per start) beside the report, to study its decisions.
    for (const f of gw.logFiles) copyFileSync(f, join(opts.outDir, basename(f)));
    process.stdout.write(summary(figures));
    return figures;
  } finally {
    await fleet.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

function setupText(w: BatchDayWorkload, s: Settings, seed: number, priority: PriorityMode): string {
  const b = w.backlog;
  const maxTokens = b[0]?.max_tokens ?? 0;
  return (
    `support-incident's workload (seed 004's incident, seed ${seed}) over ${s.durationS} s on seed 004's split pools ` +
    `(summary-online 4 × 1 GPU, summary-long 1 × 2 GPUs, summary-batch 1 × 2 GPUs borrowing summary-long; ` +
    `simulated engines in a child process): ${w.live.length} live summaries until ${(w.liveEndMs / 1000).toFixed(1)} s, and a backlog of ` +
    `${b.length} batch recomputes of ~52,000 tokens (${maxTokens} output tokens each). Run (a) sends the backlog as ` +
    `synchronous batch-class calls at the trace's times; run (b) uploads the same lines with the openai client as ` +
    `${w.jobs.length} jobs (${w.jobs.map((j) => `${j.name}: ${j.lines.length} at ${(j.atMs / 1000).toFixed(1)} s`).join(", ")}), ` +
    `polls them every ${POLL_MS} ms, and SIGKILLs the gateway once ${s.killAfterLines} lines have finished (never during an ` +
    `upload), starting it again ${s.restartDelayMs} ms after it exited, on the same port and SQLite file ` +
    `(batches.leaseMs ${LEASE_MS}). The gateway is \`tokengate gateway\` (${priority}).`
  );
}

function summary(f: BatchDayFigures): string {
  const [s, j] = f.runs;
  const t = f.targets;
  return (
    `batch-day: live TTFT P95 ${s?.live.ttftP95Ms} ms synchronous, ${j?.live.ttftP95Ms} ms with jobs ` +
    `(${j?.live.ttftP95OutsideRestartMs} ms outside the restart window; ${j?.live.failedInRestartWindow} failed in it); ` +
    `batch lines ${j?.batch.submitted} submitted, ${j?.batch.inOutput} in output, ${j?.batch.inErrorFile} in error file, ` +
    `${j?.batch.lost} lost, ${j?.batch.duplicated} twice; batch tokens/s ${s?.batch.outputTokensPerS} → ` +
    `${j?.batch.outputTokensPerS}; restart: down ${j?.restart?.downMs} ms, progress after ${j?.restart?.progressAfterMs} ms; ` +
    `lines ${t.noLostLines && t.noDuplicatedLines && t.jobsCompleted ? "all accounted for once" : "NOT all accounted for once"}, ` +
    `live TTFT ${t.liveNoWorse ? "no worse" : "WORSE"} than synchronous (within ${Math.round((t.liveTtftTolerance - 1) * 100)}%)\n`
  );
}
