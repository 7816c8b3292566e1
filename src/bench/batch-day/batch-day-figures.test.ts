import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  batchDayFigures,
  type LineResult,
  type LiveRecord,
  type RestartRecord,
  type RunRecord,
} from "./batch-day-figures.js";
import { batchDayMarkdown } from "./batch-day-report.js";

function live(
  id: string,
  sentAtMs: number,
  ttftMs: number,
  e2eMs = 500,
  error: string | null = null,
): LiveRecord {
  return {
    id,
    cls: "interactive",
    sentAtMs,
    e2eMs,
    ttftMs: error ? Number.NaN : ttftMs,
    error,
    hopMs: error ? Number.NaN : 5,
  };
}

function out(customId: string, completionTokens = 100): LineResult {
  return { customId, statusCode: 200, completionTokens, error: null };
}

function run(over: Partial<RunRecord>): RunRecord {
  return {
    name: "synchronous",
    live: [],
    submitted: [],
    output: [],
    errors: [],
    batchStartMs: null,
    batchEndMs: null,
    jobs: [],
    restart: null,
    engineRuns: new Map(),
    lineOutcomes: {},
    liveEndpoints: {},
    wallMs: 10_000,
    ...over,
  };
}

const restart: RestartRecord = {
  signal: "SIGKILL",
  killAtMs: 5000,
  exitedAtMs: 5010,
  listeningAtMs: 6900,
  readyAtMs: 7000,
  sentAgainAtMs: 7200,
  progressAtMs: 9500,
  linesDoneAtKill: 2,
  linesSubmittedAtKill: 4,
};

// 20 answered live summaries (TTFT 100..290 ms: the P95, nearest rank, is the 19th, 280 ms), none in
// flight between the kill (5 s) and ready (7 s).
const steady = Array.from({ length: 20 }, (_, i) =>
  live(`live-${i}`, i < 10 ? 1000 + i * 300 : 8000 + i * 300, 100 + i * 10, 100),
);

describe("batch-day figures", () => {
  it("reports a lost line and a line twice in the files, and splits live failures by the restart window", () => {
    const sync = run({
      live: steady,
      submitted: ["a", "b", "c", "d"],
      output: ["a", "b", "c", "d"].map((id) => out(id)),
      batchStartMs: 1000,
      batchEndMs: 9000,
    });
    const jobs = run({
      name: "batch-jobs",
      live: [
        ...steady,
        // in flight across the kill (sent 4.8 s, would end 5.3 s): cut
        live("cut", 4800, 0, 500, "SocketError: other side closed"),
        // sent while the gateway was down
        live("refused", 6000, 0, 1, "connect ECONNREFUSED"),
        // answered after the window but slow: counts in both P95s; sent in the window: only in the first
        live("slow-in-window", 6500, 5000, 6000),
        // failed well outside the window: an "other" failure
        live("other", 9000, 0, 10, "HTTP 500"),
      ],
      submitted: ["a", "b", "c", "d"],
      // "b" twice (in the output and in the error file), "d" in neither: lost
      output: [out("a", 120), out("b", 80), out("c", 100)],
      errors: [{ customId: "b", statusCode: null, completionTokens: 0, error: "upstream_unavailable" }],
      batchStartMs: 1000,
      batchEndMs: 11_000,
      jobs: [
        {
          id: "batch_1",
          lines: 4,
          createdAtMs: 1000,
          endedAtMs: 11_000,
          status: "completed",
          completed: 3,
          failed: 1,
          uploadMs: 40,
          createMs: 12,
        },
      ],
      restart,
      engineRuns: new Map([
        ["a", { finished: 1, aborted: 0 }],
        ["b", { finished: 2, aborted: 1 }],
      ]),
      lineOutcomes: { succeeded: 3, failed: 1 },
    });
    const f = batchDayFigures(sync, jobs);
    const [s, j] = f.runs;
    assert.ok(s && j);
    assert.equal(s.live.ttftP95Ms, 280);
    assert.equal(s.batch.lost, 0);
    assert.equal(s.batch.outputTokensPerS, 50); // 400 tokens over 8 s

    assert.equal(j.live.sent, 24);
    assert.equal(j.live.answered, 21);
    assert.equal(j.live.failedInRestartWindow, 2);
    assert.equal(j.live.failedOutsideRestartWindow, 1);
    assert.equal(j.live.inRestartWindow, 3);
    assert.equal(j.live.ttftP95Ms, 290); // 21 answered: the 20th of them
    assert.equal(j.live.ttftP95OutsideRestartMs, 280);
    assert.equal(j.live.hopP95Ms, 5);
    assert.equal(j.batch.submitted, 4);
    assert.equal(j.batch.inOutput, 3);
    assert.equal(j.batch.inErrorFile, 1);
    assert.equal(j.batch.lost, 1);
    assert.deepEqual(j.batch.lostIds, ["d"]);
    assert.equal(j.batch.duplicated, 1);
    assert.deepEqual(j.batch.duplicatedIds, ["b"]);
    assert.deepEqual(j.batch.errorCodes, { upstream_unavailable: 1 });
    assert.equal(j.batch.outputTokens, 300);
    assert.equal(j.batch.windowS, 10);
    assert.equal(j.batch.outputTokensPerS, 30);
    assert.equal(j.batch.ranTwiceOnEngines, 1);
    assert.equal(j.batch.engineRunsAborted, 1);
    assert.deepEqual(j.restart, {
      signal: "SIGKILL",
      atS: 5,
      downMs: 1900,
      readyMs: 2000,
      sentAgainAfterMs: 2200,
      progressAfterMs: 4500,
      linesDoneAtKill: 2,
      linesSubmittedAtKill: 4,
    });

    assert.equal(f.liveTtftP95Ratio, 1.04);
    assert.equal(f.liveTtftP95OutsideRestartRatio, 1);
    assert.equal(f.targets.liveNoWorse, true);
    assert.equal(f.targets.noLostLines, false);
    assert.equal(f.targets.noDuplicatedLines, false);
    assert.equal(f.targets.jobsCompleted, true);

    const md = batchDayMarkdown(f, "setup");
    assert.match(md, /\| \*\*batch lines lost\*\* \| \*\*0\*\* \| \*\*1\*\* \|/);
    assert.match(md, /\| \*\*lines twice in the output\*\* \| \*\*0\*\* \| \*\*1\*\* \|/);
    assert.match(md, /- lost: `d`/);
    assert.match(md, /- more than once in the files: `b`/);
    assert.match(md, /no batch line lost — NOT met/);
    assert.match(md, /- live failure: other: HTTP 500/);
  });

  it("meets the targets on a clean restart, and misses the live one when TTFT got worse", () => {
    const ids = ["a", "b"];
    const sync = run({ live: steady, submitted: ids, output: ids.map((id) => out(id)) });
    const slower = steady.map((r) => ({ ...r, ttftMs: r.ttftMs * 1.5 }));
    const job = {
      id: "batch_1",
      lines: 2,
      createdAtMs: 0,
      endedAtMs: 5000,
      status: "completed",
      completed: 2,
      failed: 0,
      uploadMs: 40,
      createMs: 12,
    };
    const clean = run({
      name: "batch-jobs",
      live: steady,
      submitted: ids,
      output: ids.map((id) => out(id)),
      jobs: [job],
      restart,
    });
    const ok = batchDayFigures(sync, clean).targets;
    assert.deepEqual(
      [ok.liveNoWorse, ok.noLostLines, ok.noDuplicatedLines, ok.jobsCompleted],
      [true, true, true, true],
    );
    const worse = batchDayFigures(sync, { ...clean, live: slower, jobs: [{ ...job, status: "expired" }] });
    assert.equal(worse.liveTtftP95OutsideRestartRatio, 1.5);
    assert.equal(worse.targets.liveNoWorse, false);
    assert.equal(worse.targets.jobsCompleted, false);
  });
});
