// The batch-day figures, from what the bench recorded: the live summaries as the client saw them, the
// backlog's lines as they went in and as the output and error files (or the synchronous answers) gave
// them back, and the restart's moments. Pure: batch-day.ts records, this computes, the test checks.
//
// Per run: live TTFT P95 over the requests that got an answer (and over those that were not in flight
// while the gateway was down or starting again), live requests that failed during the restart window
// apart from any other failure; batch lines submitted / in the output / in the error file / lost
// (submitted and in neither file) / duplicated (a custom_id more than once across the files); batch
// output tokens per second over the batch window (first line submitted to the last one answered).

import { percentile, round } from "../stats.js";

/** One live request as the client saw it; times in ms from the run's start. */
export interface LiveRecord {
  readonly id: string;
  /** `interactive` (the live summaries) or `long` (a long historical ticket). */
  readonly cls: string;
  readonly sentAtMs: number;
  readonly e2eMs: number;
  /** NaN when no content came. */
  readonly ttftMs: number;
  readonly error: string | null;
  /**
   * The hop's part of its TTFT: the client's TTFT less the engine's queue and prefill (from the gateway's
   * log line): the gateway's own work and event loop, the loopback, the client — whichever engine was
   * picked, as support-incident's "where TTFT went" splits it; NaN: no log line.
   */
  readonly hopMs: number;
}

/** One line's record in an output or error file (or a synchronous answer); tokens from its usage. */
export interface LineResult {
  readonly customId: string;
  readonly statusCode: number | null;
  readonly completionTokens: number;
  /** The error code of an error-file record, or the HTTP error of a synchronous call. */
  readonly error: string | null;
}

/** One Batch API job as the bench followed it. */
export interface JobRecord {
  readonly id: string;
  readonly lines: number;
  /** When batches.create answered / when a poll first saw it final; ms from the run's start. */
  readonly createdAtMs: number;
  readonly endedAtMs: number | null;
  readonly status: string;
  readonly completed: number;
  readonly failed: number;
  /**
   * How long files.create (the upload) and batches.create (validation and the lines' insert) took: the
   * attempt that got the answer (one sent while the gateway was down is tried again).
   */
  readonly uploadMs: number;
  readonly createMs: number;
}

/** The gateway's restart in the batch-jobs run; ms from the run's start. */
export interface RestartRecord {
  readonly signal: string;
  /** The signal was sent. */
  readonly killAtMs: number;
  /** The process was gone. */
  readonly exitedAtMs: number;
  /** The new process said it listens. */
  readonly listeningAtMs: number;
  /** Its /ready first answered 200. */
  readonly readyAtMs: number;
  /** The new process sent its first line to an engine (its log); null: none. */
  readonly sentAgainAtMs: number | null;
  /** The first poll after the restart that saw a line finish which had not before the kill; null: none. */
  readonly progressAtMs: number | null;
  /** Lines finished (completed + failed) as the last poll before the kill saw them. */
  readonly linesDoneAtKill: number;
  readonly linesSubmittedAtKill: number;
}

/** How often the engines ran each batch line: runs to the end and runs cut (the kill drops connections). */
export interface EngineRuns {
  readonly finished: number;
  readonly aborted: number;
}

export interface RunRecord {
  readonly name: string;
  readonly live: readonly LiveRecord[];
  /** custom_ids of every backlog line sent (synchronously) or uploaded (in a job). */
  readonly submitted: readonly string[];
  /** The output file's records (synchronous: the successful answers). */
  readonly output: readonly LineResult[];
  /** The error file's records (synchronous: the failed calls). */
  readonly errors: readonly LineResult[];
  /** The batch window: the first line submitted, the last one answered (the last job seen final). */
  readonly batchStartMs: number | null;
  readonly batchEndMs: number | null;
  readonly jobs: readonly JobRecord[];
  readonly restart: RestartRecord | null;
  /** By custom_id, from the engines' own record. */
  readonly engineRuns: ReadonlyMap<string, EngineRuns>;
  /** The runner's `batch.line` events by outcome (succeeded, deferred, retried, abandoned, failed). */
  readonly lineOutcomes: Readonly<Record<string, number>>;
  /** Live summaries the gateway logged, by the endpoint that served them. */
  readonly liveEndpoints: Readonly<Record<string, number>>;
  readonly wallMs: number;
}

export interface LiveFigures {
  readonly sent: number;
  readonly answered: number;
  /** In flight at some moment between the kill and the new process's first 200 on /ready. */
  readonly failedInRestartWindow: number;
  readonly failedOutsideRestartWindow: number;
  readonly inRestartWindow: number;
  readonly ttftP50Ms: number | null;
  readonly ttftP95Ms: number | null;
  readonly ttftP99Ms: number | null;
  /** Over the answered requests that were not in flight during the restart window. */
  readonly ttftP95OutsideRestartMs: number | null;
  /** The hop's part of TTFT (LiveRecord.hopMs), P95 over the answered requests. */
  readonly hopP95Ms: number | null;
  readonly e2eP95Ms: number | null;
  readonly failures: readonly string[];
}

export interface BatchFigures {
  readonly submitted: number;
  readonly inOutput: number;
  readonly inErrorFile: number;
  /** Submitted, and in neither the output nor the error file. */
  readonly lost: number;
  /** custom_ids more than once across the output and error files. */
  readonly duplicated: number;
  /** In a file, never submitted (should not happen). */
  readonly unexpected: number;
  readonly lostIds: readonly string[];
  readonly duplicatedIds: readonly string[];
  readonly errorCodes: Readonly<Record<string, number>>;
  readonly outputTokens: number;
  readonly windowS: number | null;
  readonly outputTokensPerS: number | null;
  /** Lines the engines ran to the end more than once (work done twice; at most one of them recorded). */
  readonly ranTwiceOnEngines: number;
  /** Engine runs cut before the end (the kill's connections). */
  readonly engineRunsAborted: number;
  readonly lineOutcomes: Readonly<Record<string, number>>;
}

export interface RestartFigures {
  readonly signal: string;
  readonly atS: number;
  /** Kill → the new process listening (the gateway was down). */
  readonly downMs: number;
  /** Kill → /ready 200. */
  readonly readyMs: number;
  /** Kill → the new process sent its first line to an engine. */
  readonly sentAgainAfterMs: number | null;
  /** Kill → the jobs progressed again; null: they did not. */
  readonly progressAfterMs: number | null;
  readonly linesDoneAtKill: number;
  readonly linesSubmittedAtKill: number;
}

/** Live summaries by when they were sent: a bin of the run. */
export interface LiveBin {
  readonly fromS: number;
  readonly sent: number;
  readonly failed: number;
  readonly ttftP95Ms: number | null;
  readonly hopP95Ms: number | null;
}

export interface RunFigures {
  readonly name: string;
  readonly wallS: number;
  readonly live: LiveFigures;
  /** Live TTFT P95 and failures over the run, by when the requests were sent. */
  readonly liveTimeline: readonly LiveBin[];
  /** Live summaries by the endpoint that served them (the gateway's log), busiest first. */
  readonly liveEndpoints: Readonly<Record<string, number>>;
  readonly long: { readonly sent: number; readonly answered: number; readonly ttftP95Ms: number | null };
  readonly batch: BatchFigures;
  readonly jobs: readonly {
    readonly id: string;
    readonly lines: number;
    readonly status: string;
    readonly completed: number;
    readonly failed: number;
    readonly createdAtS: number;
    readonly endedAtS: number | null;
    readonly uploadMs: number;
    readonly createMs: number;
  }[];
  readonly restart: RestartFigures | null;
}

export interface BatchDayFigures {
  readonly runs: readonly RunFigures[];
  /** Batch jobs' live TTFT P95 over the synchronous run's (answered requests; outside the restart window). */
  readonly liveTtftP95Ratio: number | null;
  readonly liveTtftP95OutsideRestartRatio: number | null;
  readonly targets: {
    /** The batch-jobs run's live TTFT P95 outside the restart window at most this × the synchronous run's. */
    readonly liveTtftTolerance: number;
    readonly liveNoWorse: boolean;
    readonly noLostLines: boolean;
    readonly noDuplicatedLines: boolean;
    readonly jobsCompleted: boolean;
  };
}

/** "No worse" within the machine's run-to-run noise: 10% (both runs share 2 cores with the harness). */
export const LIVE_TTFT_TOLERANCE = 1.1;
const LIVE_CLASS = "interactive";

function ms(x: number): number | null {
  return Number.isFinite(x) ? round(x) : null;
}

function overlaps(r: LiveRecord, from: number, to: number): boolean {
  return r.sentAtMs <= to && r.sentAtMs + r.e2eMs >= from;
}

export function liveFigures(live: readonly LiveRecord[], restart: RestartRecord | null): LiveFigures {
  const mine = live.filter((r) => r.cls === LIVE_CLASS);
  const inWindow = (r: LiveRecord) => restart !== null && overlaps(r, restart.killAtMs, restart.readyAtMs);
  const answered = mine.filter((r) => r.error === null);
  const failed = mine.filter((r) => r.error !== null);
  const ttft = answered.map((r) => r.ttftMs);
  const outside = answered.filter((r) => !inWindow(r)).map((r) => r.ttftMs);
  const failedIn = failed.filter(inWindow);
  const failedOut = failed.filter((r) => !inWindow(r));
  return {
    sent: mine.length,
    answered: answered.length,
    failedInRestartWindow: failedIn.length,
    failedOutsideRestartWindow: failedOut.length,
    inRestartWindow: mine.filter(inWindow).length,
    ttftP50Ms: ms(percentile(ttft, 50)),
    ttftP95Ms: ms(percentile(ttft, 95)),
    ttftP99Ms: ms(percentile(ttft, 99)),
    ttftP95OutsideRestartMs: ms(percentile(outside, 95)),
    hopP95Ms: ms(
      percentile(
        answered.map((r) => r.hopMs),
        95,
      ),
    ),
    e2eP95Ms: ms(
      percentile(
        answered.map((r) => r.e2eMs),
        95,
      ),
    ),
    failures: [...failedOut, ...failedIn].slice(0, 10).map((r) => `${r.id}: ${r.error}`),
  };
}

export function batchFigures(run: RunRecord): BatchFigures {
  const submitted = new Set(run.submitted);
  const seen = new Map<string, number>();
  for (const l of [...run.output, ...run.errors]) seen.set(l.customId, (seen.get(l.customId) ?? 0) + 1);
  const lostIds = run.submitted.filter((id) => !seen.has(id));
  const duplicatedIds = [...seen].filter(([, n]) => n > 1).map(([id]) => id);
  const errorCodes: Record<string, number> = {};
  for (const e of run.errors) {
    const code = e.error ?? "unknown";
    errorCodes[code] = (errorCodes[code] ?? 0) + 1;
  }
  const outputTokens = run.output.reduce((n, l) => n + l.completionTokens, 0);
  const windowMs =
    run.batchStartMs !== null && run.batchEndMs !== null ? run.batchEndMs - run.batchStartMs : null;
  let ranTwice = 0;
  let aborted = 0;
  for (const r of run.engineRuns.values()) {
    if (r.finished > 1) ranTwice++;
    aborted += r.aborted;
  }
  return {
    submitted: run.submitted.length,
    inOutput: run.output.length,
    inErrorFile: run.errors.length,
    lost: lostIds.length,
    duplicated: duplicatedIds.length,
    unexpected: [...seen.keys()].filter((id) => !submitted.has(id)).length,
    lostIds: lostIds.slice(0, 20),
    duplicatedIds: duplicatedIds.slice(0, 20),
    errorCodes,
    outputTokens,
    windowS: windowMs === null ? null : round(windowMs / 1000),
    outputTokensPerS: windowMs !== null && windowMs > 0 ? round(outputTokens / (windowMs / 1000)) : null,
    ranTwiceOnEngines: ranTwice,
    engineRunsAborted: aborted,
    lineOutcomes: run.lineOutcomes,
  };
}

export function restartFigures(r: RestartRecord | null): RestartFigures | null {
  if (r === null) return null;
  return {
    signal: r.signal,
    atS: round(r.killAtMs / 1000),
    downMs: round(r.listeningAtMs - r.killAtMs),
    readyMs: round(r.readyAtMs - r.killAtMs),
    sentAgainAfterMs: r.sentAgainAtMs === null ? null : round(r.sentAgainAtMs - r.killAtMs),
    progressAfterMs: r.progressAtMs === null ? null : round(r.progressAtMs - r.killAtMs),
    linesDoneAtKill: r.linesDoneAtKill,
    linesSubmittedAtKill: r.linesSubmittedAtKill,
  };
}

export function liveTimeline(live: readonly LiveRecord[], binS: number): LiveBin[] {
  const mine = live.filter((r) => r.cls === LIVE_CLASS);
  const bins = new Map<number, LiveRecord[]>();
  for (const r of mine) {
    const b = Math.floor(r.sentAtMs / 1000 / binS);
    const list = bins.get(b) ?? [];
    list.push(r);
    bins.set(b, list);
  }
  return [...bins]
    .sort(([a], [b]) => a - b)
    .map(([b, rs]) => ({
      fromS: round(b * binS),
      sent: rs.length,
      failed: rs.filter((r) => r.error !== null).length,
      ttftP95Ms: ms(
        percentile(
          rs.filter((r) => r.error === null).map((r) => r.ttftMs),
          95,
        ),
      ),
      hopP95Ms: ms(
        percentile(
          rs.filter((r) => r.error === null).map((r) => r.hopMs),
          95,
        ),
      ),
    }));
}

/** `binS`: the live timeline's bin, seconds. */
export function runFigures(run: RunRecord, binS = 2): RunFigures {
  const long = run.live.filter((r) => r.cls !== LIVE_CLASS);
  const longAnswered = long.filter((r) => r.error === null);
  return {
    name: run.name,
    wallS: round(run.wallMs / 1000),
    live: liveFigures(run.live, run.restart),
    liveTimeline: liveTimeline(run.live, binS),
    liveEndpoints: Object.fromEntries(Object.entries(run.liveEndpoints).sort(([, a], [, b]) => b - a)),
    long: {
      sent: long.length,
      answered: longAnswered.length,
      ttftP95Ms: ms(
        percentile(
          longAnswered.map((r) => r.ttftMs),
          95,
        ),
      ),
    },
    batch: batchFigures(run),
    jobs: run.jobs.map((j) => ({
      id: j.id,
      lines: j.lines,
      status: j.status,
      completed: j.completed,
      failed: j.failed,
      createdAtS: round(j.createdAtMs / 1000),
      endedAtS: j.endedAtMs === null ? null : round(j.endedAtMs / 1000),
      uploadMs: round(j.uploadMs),
      createMs: round(j.createMs),
    })),
    restart: restartFigures(run.restart),
  };
}

function ratio(a: number | null, b: number | null): number | null {
  return a !== null && b !== null && b > 0 ? round(a / b, 2) : null;
}

/** `sync`: the backlog as synchronous calls; `jobs`: the same backlog as Batch API jobs, with the restart. */
export function batchDayFigures(sync: RunRecord, jobs: RunRecord, binS = 2): BatchDayFigures {
  const s = runFigures(sync, binS);
  const j = runFigures(jobs, binS);
  const outsideRatio = ratio(j.live.ttftP95OutsideRestartMs, s.live.ttftP95Ms);
  return {
    runs: [s, j],
    liveTtftP95Ratio: ratio(j.live.ttftP95Ms, s.live.ttftP95Ms),
    liveTtftP95OutsideRestartRatio: outsideRatio,
    targets: {
      liveTtftTolerance: LIVE_TTFT_TOLERANCE,
      liveNoWorse: outsideRatio !== null && outsideRatio <= LIVE_TTFT_TOLERANCE,
      noLostLines: j.batch.lost === 0 && j.batch.unexpected === 0,
      noDuplicatedLines: j.batch.duplicated === 0,
      jobsCompleted: j.jobs.length > 0 && j.jobs.every((x) => x.status === "completed"),
    },
  };
}
