// The two runs of `tokengate bench batch-day` (batch-day.ts): (a) the backlog as synchronous batch-class
// calls, (b) the same lines as Batch API jobs through the official openai client, with the gateway
// SIGKILLed once mid-jobs and started again on the same SQLite file and port. Each returns what it saw
// for batch-day-figures.ts.

import { setTimeout as sleep } from "node:timers/promises";
import OpenAI, { toFile } from "openai";
import type { RequestTiming } from "../../sim/request-timings.js";
import { BATCH_TASK, SUMMARY_ALIAS } from "../scenarios/support-topologies.js";
import { type ReplayRecord, replay } from "../traffic/replay.js";
import { makeAgent } from "../traffic/stream-client.js";
import type {
  EngineRuns,
  JobRecord,
  LineResult,
  LiveRecord,
  RestartRecord,
  RunRecord,
} from "./batch-day-figures.js";
import { type BatchDayWorkload, jobInput, type PlannedJob } from "./batch-day-jobs.js";
import { readLogs } from "./batch-day-logs.js";
import { engineTimings, type Fleet, type GatewayProcess } from "./batch-day-processes.js";

export interface Settings {
  /** support-incident's durationS: its phases scaled to this many seconds (the live load ends at the flood's end). */
  readonly durationS: number;
  /** A page of the backlog is split in jobs of at most this many lines. */
  readonly maxJobLines: number;
  /** The kill comes once this many lines have finished (and no upload or create is under way). */
  readonly killAfterLines: number;
  /** Between the old process's exit and the new one's start (a supervisor's restart delay). */
  readonly restartDelayMs: number;
  /** The jobs run gives up waiting for its jobs after this long. */
  readonly finishTimeoutMs: number;
}

export const POLL_MS = 250;

export function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

// --- The two runs ----------------------------------------------------------------------------------------

/** The client's records, each with the hop's part of its TTFT (less the engine's part, from the log by trace id). */
function liveRecords(records: readonly ReplayRecord[], engineMs: ReadonlyMap<string, number>): LiveRecord[] {
  return records.map((r) => ({
    id: r.req.id,
    cls: r.req.request_class ?? "interactive",
    sentAtMs: r.sentAtMs,
    e2eMs: r.result.e2eMs,
    ttftMs: r.result.ttftMs,
    error: r.result.error,
    hopMs: r.result.ttftMs - (engineMs.get(r.req.id) ?? Number.NaN),
  }));
}

export async function synchronousRun(
  w: BatchDayWorkload,
  gw: GatewayProcess,
  fleet: Fleet,
): Promise<RunRecord> {
  await gw.start("sync");
  await gw.waitReady();
  const agent = makeAgent(4096);
  const t0 = performance.now();
  let records: ReplayRecord[];
  try {
    records = await replay(w.trace, { url: gw.url, agent, model: SUMMARY_ALIAS });
  } finally {
    await agent.close();
  }
  const wallMs = performance.now() - t0;
  const engine = await engineTimings(fleet.urls);
  await gw.stop();
  const batch = records.filter((r) => r.req.request_class === "batch");
  const live = records.filter((r) => r.req.request_class !== "batch");
  const result = (r: ReplayRecord): LineResult => ({
    customId: r.req.id,
    statusCode: r.result.status || null,
    completionTokens: r.result.completionTokens ?? 0,
    error: r.result.error,
  });
  const engineRuns = new Map<string, EngineRuns>();
  for (const t of engine) if (t.id.startsWith("batch-")) countRun(engineRuns, t.id, t);
  const logs = readLogs(gw.logsOf("sync"));
  return {
    name: "synchronous",
    live: liveRecords(live, logs.engineMs),
    submitted: batch.map((r) => r.req.id),
    output: batch.filter((r) => r.result.error === null).map(result),
    errors: batch.filter((r) => r.result.error !== null).map(result),
    batchStartMs: batch.length > 0 ? Math.min(...batch.map((r) => r.sentAtMs)) : null,
    batchEndMs: batch.length > 0 ? Math.max(...batch.map((r) => r.sentAtMs + r.result.e2eMs)) : null,
    jobs: [],
    restart: null,
    engineRuns,
    lineOutcomes: logs.lineOutcomes,
    liveEndpoints: logs.liveEndpoints,
    wallMs,
  };
}

function countRun(runs: Map<string, EngineRuns>, customId: string, t: RequestTiming): void {
  const r = runs.get(customId) ?? { finished: 0, aborted: 0 };
  runs.set(
    customId,
    t.finish === "abort" ? { ...r, aborted: r.aborted + 1 } : { ...r, finished: r.finished + 1 },
  );
}

interface JobState {
  readonly planned: PlannedJob;
  readonly id: string;
  readonly createdAtMs: number;
  readonly uploadMs: number;
  readonly createMs: number;
  status: string;
  completed: number;
  failed: number;
  endedAtMs: number | null;
  outputFileId: string | null;
  errorFileId: string | null;
}

const FINAL = new Set(["completed", "failed", "expired", "cancelled"]);

export async function jobsRun(
  w: BatchDayWorkload,
  s: Settings,
  gw: GatewayProcess,
  fleet: Fleet,
): Promise<RunRecord> {
  const inputs = w.jobs.map((j) => ({ planned: j, bytes: jobInput(j) }));
  await gw.start("jobs-1");
  await gw.waitReady();
  const tenant = w.backlog[0]?.tenant ?? "quality-job";
  const client = new OpenAI({
    baseURL: `${gw.url}/v1`,
    apiKey: "batch-day",
    maxRetries: 0,
    timeout: 60_000,
    // The bench gateway trusts loopback to name the tenant (scenarios/gateway-yaml.ts), as support-incident's client does.
    defaultHeaders: { "X-AI-Tenant": tenant },
  });
  const agent = makeAgent(4096);
  const t0 = performance.now();
  const t0Epoch = Date.now();
  const now = () => performance.now() - t0;
  const liveDone = replay(w.live, { url: gw.url, agent, model: SUMMARY_ALIAS });

  const jobs: JobState[] = [];
  let creating = false;
  let firstSubmitMs: number | null = null;
  let restart: RestartRecord | null = null;
  let restarting: Promise<void> | null = null;
  let doneAtKill = -1;
  let killAtMs = 0;
  let progressAtMs: number | null = null;
  let restartError: Error | null = null;

  const submitter = (async () => {
    for (const { planned, bytes } of inputs) {
      const wait = planned.atMs - now();
      if (wait > 0) await sleep(wait);
      creating = true;
      try {
        firstSubmitMs ??= now();
        const file = await untilUp(async () =>
          client.files.create({ file: await toFile(bytes, `${planned.name}.jsonl`), purpose: "batch" }),
        );
        const created = await untilUp(() =>
          client.batches.create({
            input_file_id: file.value.id,
            endpoint: "/v1/chat/completions",
            completion_window: "24h",
            metadata: { task: BATCH_TASK, job: `recompute-${planned.name}` },
          }),
        );
        const b = created.value;
        if (b.status === "failed")
          throw new Error(`job ${planned.name} failed validation: ${JSON.stringify(b.errors)}`);
        jobs.push({
          planned,
          id: b.id,
          createdAtMs: now(),
          uploadMs: file.ms,
          createMs: created.ms,
          status: b.status,
          completed: 0,
          failed: 0,
          endedAtMs: null,
          outputFileId: null,
          errorFileId: null,
        });
      } finally {
        creating = false;
      }
    }
  })();

  const restartGateway = async (done: number, submittedLines: number) => {
    doneAtKill = done;
    killAtMs = now();
    await gw.kill("SIGKILL");
    const exitedAtMs = now();
    log(
      `batch-day: SIGKILL at ${(killAtMs / 1000).toFixed(1)} s (${done} of ${submittedLines} lines finished)`,
    );
    await sleep(s.restartDelayMs);
    await gw.start("jobs-2");
    const listeningAtMs = now();
    await gw.waitReady();
    const readyAtMs = now();
    restart = {
      signal: "SIGKILL",
      killAtMs,
      exitedAtMs,
      listeningAtMs,
      readyAtMs,
      sentAgainAtMs: null,
      progressAtMs: null,
      linesDoneAtKill: done,
      linesSubmittedAtKill: submittedLines,
    };
  };

  const deadline = performance.now() + s.finishTimeoutMs + w.liveEndMs;
  let submitDone = false;
  void submitter.then(
    () => {
      submitDone = true;
    },
    () => {
      submitDone = true;
    },
  );
  for (;;) {
    await sleep(POLL_MS);
    for (const j of jobs) {
      if (FINAL.has(j.status)) continue;
      try {
        const b = await client.batches.retrieve(j.id);
        j.status = b.status;
        j.completed = b.request_counts?.completed ?? 0;
        j.failed = b.request_counts?.failed ?? 0;
        if (FINAL.has(b.status)) {
          j.endedAtMs = now();
          j.outputFileId = b.output_file_id ?? null;
          j.errorFileId = b.error_file_id ?? null;
        }
      } catch {
        // the gateway is down: the next poll asks again
      }
    }
    const done = jobs.reduce((n, j) => n + j.completed + j.failed, 0);
    const submittedLines = jobs.reduce((n, j) => n + j.planned.lines.length, 0);
    if (restarting === null && done >= s.killAfterLines && done < submittedLines && !creating) {
      restarting = restartGateway(done, submittedLines).catch((err: unknown) => {
        restartError = err as Error;
      });
    }
    if (restartError) break;
    if (restarting !== null && progressAtMs === null && doneAtKill >= 0 && done > doneAtKill)
      progressAtMs = now();
    if (submitDone && jobs.every((j) => FINAL.has(j.status))) break;
    if (performance.now() > deadline) {
      log("batch-day: gave up waiting for the jobs");
      break;
    }
  }
  await submitter;
  if (restarting) await restarting;
  if (restartError) throw restartError;
  const records = await liveDone;
  await agent.close();
  const wallMs = now();
  const engine = await engineTimings(fleet.urls);

  const output: LineResult[] = [];
  const errors: LineResult[] = [];
  for (const j of jobs) {
    output.push(...(await fileLines(client, j.outputFileId)));
    errors.push(...(await fileLines(client, j.errorFileId)));
  }
  await gw.stop();

  // Engine requests carry the runner's trace id, `<batch_id>.<line>.<attempt>`.
  const customIds = new Map<string, string>();
  for (const j of jobs) {
    for (const [i, r] of j.planned.lines.entries()) customIds.set(`${j.id}.${i + 1}`, r.id);
  }
  const engineRuns = new Map<string, EngineRuns>();
  for (const t of engine) {
    const m = /^(batch_[0-9a-f]+\.\d+)\.\d+$/.exec(t.id);
    const id = m ? customIds.get(m[1]!) : undefined;
    if (id) countRun(engineRuns, id, t);
  }
  const jobRecords: JobRecord[] = jobs.map((j) => ({
    id: j.id,
    lines: j.planned.lines.length,
    createdAtMs: j.createdAtMs,
    endedAtMs: j.endedAtMs,
    status: j.status,
    completed: j.completed,
    failed: j.failed,
    uploadMs: j.uploadMs,
    createMs: j.createMs,
  }));
  const ends = jobs.map((j) => j.endedAtMs);
  const r = restart as RestartRecord | null;
  const logs = readLogs(gw.logsOf("jobs"));
  // The restarted process's first line sent to an engine: the earliest dispatch among its batch lines.
  const again = readLogs(gw.logsOf("jobs-2")).batchSentAtEpochMs;
  const sentAgainAtMs = again.length > 0 ? Math.min(...again) - t0Epoch : null;
  return {
    name: "batch-jobs",
    live: liveRecords(records, logs.engineMs),
    submitted: jobs.flatMap((j) => j.planned.lines.map((l) => l.id)),
    output,
    errors,
    batchStartMs: firstSubmitMs,
    batchEndMs: ends.length > 0 && ends.every((e) => e !== null) ? Math.max(...(ends as number[])) : null,
    jobs: jobRecords,
    restart: r ? { ...r, progressAtMs, sentAgainAtMs } : null,
    engineRuns,
    lineOutcomes: logs.lineOutcomes,
    liveEndpoints: logs.liveEndpoints,
    wallMs,
  };
}

/**
 * Calls `f` again while the gateway does not answer (it is down or starting): nothing reached it. Its
 * answer, and how long the attempt that got it took.
 */
async function untilUp<T>(f: () => Promise<T>, ms = 60_000): Promise<{ value: T; ms: number }> {
  const end = performance.now() + ms;
  for (;;) {
    const at = performance.now();
    try {
      const value = await f();
      return { value, ms: performance.now() - at };
    } catch (err) {
      if (!(err instanceof OpenAI.APIConnectionError) || performance.now() > end) throw err;
      await sleep(100);
    }
  }
}

/** The records of an output or error file. */
async function fileLines(client: OpenAI, fileId: string | null): Promise<LineResult[]> {
  if (fileId === null) return [];
  const text = await (await client.files.content(fileId)).text();
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const rec = JSON.parse(l) as {
        custom_id: string;
        response: { status_code: number; body: { usage?: { completion_tokens?: number } } } | null;
        error: { code: string } | null;
      };
      const status = rec.response?.status_code ?? null;
      return {
        customId: rec.custom_id,
        statusCode: status,
        completionTokens: rec.response?.body?.usage?.completion_tokens ?? 0,
        error: rec.error?.code ?? (status !== null && status >= 300 ? `HTTP ${status}` : null),
      };
    });
}
