// The Batch API's durability end to end, with the official openai client, simulated engines and a real
// SQLite file: a `tokengate gateway` process SIGKILLed mid-job and started again on the same file ends
// the job with every custom_id exactly once (lines finished before the kill are not run again); a job
// submitted while the batch pool is paused makes no progress until the pause lifts, then completes; a
// job outside its tenant's allowed window waits (deferred, never failed) until the window opens; lines
// the engine fails are retried with exponential backoff and the job still completes.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI, { toFile } from "openai";
import { loadConfigTexts } from "../config/index.js";
import { makeEngineConfig } from "../sim/engine-config.js";
import { SimReplica } from "../sim/replica.js";
import { sampleText } from "../sim/sample-text.js";
import { SqliteFile } from "../sqlite/sqlite-file.js";
import { fileLines, finished, jsonl, until } from "../testing/batch-jobs.js";
import { CLI_MAIN, type CliGateway, onePoolConfig, spawnGateway } from "../testing/cli-gateway.js";
import { KEYS, openaiClient, type Platform, startPlatform } from "../testing/platform.js";

const ids = (n: number) => Array.from({ length: n }, (_, i) => `req-${i}`);

const chatLine = (model: string, maxTokens: number) => (i: number) => ({
  custom_id: `req-${i}`,
  method: "POST",
  url: "/v1/chat/completions",
  body: {
    model,
    messages: [{ role: "user", content: `请总结第${i}条工单：客户反馈订单未到。` }],
    max_tokens: maxTokens,
  },
});

async function submit(client: OpenAI, n: number, line: (i: number) => object): Promise<OpenAI.Batches.Batch> {
  const file = await client.files.create({
    file: await toFile(Buffer.from(jsonl(n, line)), "input.jsonl"),
    purpose: "batch",
  });
  const b = await client.batches.create({
    input_file_id: file.id,
    endpoint: "/v1/chat/completions",
    completion_window: "24h",
  });
  assert.equal(b.status, "in_progress");
  return b;
}

/** The job ended completed with every custom_id exactly once in its output, each a 200, and no error file. */
async function assertCompletedOnce(client: OpenAI, done: OpenAI.Batches.Batch, n: number): Promise<any[]> {
  assert.equal(done.status, "completed");
  assert.deepEqual(done.request_counts, { total: n, completed: n, failed: 0 });
  const out = await fileLines(client, done.output_file_id);
  const got = out.map((l) => l.custom_id);
  assert.equal(got.length, n, "one output line per input line");
  assert.deepEqual([...new Set(got)].sort(), ids(n).sort(), "every custom_id, none twice");
  for (const l of out) {
    assert.equal(l.error, null);
    assert.equal(l.response.status_code, 200);
    assert.equal(l.response.body.object, "chat.completion");
  }
  assert.deepEqual(await fileLines(client, done.error_file_id), [], "no error file, or an empty one");
  return out;
}

interface LineEvent {
  at: number;
  batch_id: string;
  custom_id: string;
  line: number;
  attempt: number;
  outcome: string;
  http_status: number;
  error_code: string | null;
  retry_in_ms: number | null;
  retry_at: string | null;
}

/** A platform's `batch.line` events of one batch, with the time each was logged. */
function lineEvents(p: Platform): (batchId: string) => LineEvent[] {
  const all: LineEvent[] = [];
  const listener = p.gateway.log.eventListener;
  p.gateway.log.eventListener = (event, fields) => {
    if (event === "batch.line") all.push({ at: Date.now(), ...(fields as Omit<LineEvent, "at">) });
    listener?.(event, fields);
  };
  return (batchId) => all.filter((e) => e.batch_id === batchId);
}

// --- 1. SIGKILL mid-job --------------------------------------------------------------------------------

const CLI_KEY = "sk-batch-durability";
const KILL_LINES = 150;
const KILL_CONCURRENCY = 8;

function cliConfig(engine: SimReplica, db: string): string {
  return onePoolConfig({
    endpoints: [engine.url],
    version: "batch-kill-1",
    maxOutputTokens: 400,
    gateway: `  auth:
    apiKeys: [{ key: ${CLI_KEY}, tenant: batch-tenant }]
  shutdown: { drainMs: 2000 }
  batches: { path: "${db}", pollMs: 50, leaseMs: 1000, concurrency: ${KILL_CONCURRENCY} }`,
  });
}

describe("a gateway process SIGKILLed mid-job", () => {
  let engine: SimReplica;
  let dir: string;
  const procs: CliGateway[] = [];
  before(async () => {
    engine = new SimReplica({
      name: "e0",
      port: 0,
      engine: makeEngineConfig("h100-llama8b", "m-base", { maxModelLen: 4096 }),
      seed: 1,
    });
    await engine.start();
    dir = mkdtempSync(join(tmpdir(), "tg-batch-kill-"));
  });
  after(async () => {
    for (const g of procs) g.proc.kill("SIGKILL");
    await Promise.all(procs.map((g) => g.exited));
    await engine.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (n: number): Promise<{ gw: CliGateway; client: OpenAI }> => {
    const gw = await spawnGateway(CLI_MAIN, [
      "gateway",
      "--config",
      join(dir, "config"),
      "--no-watch",
      "--log",
      "none",
      "--history",
      join(dir, `history-${n}.db`),
    ]);
    procs.push(gw);
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: CLI_KEY, maxRetries: 0, timeout: 15_000 });
    return { gw, client };
  };

  it("restarted on the same SQLite file, ends the job with every custom_id exactly once", async () => {
    const db = join(dir, "batches.db");
    mkdirSync(join(dir, "config"));
    writeFileSync(join(dir, "config", "config.yaml"), cliConfig(engine, db));
    const first = await start(1);
    const b = await submit(first.client, KILL_LINES, chatLine("m", 48));
    // Mid-way: more lines finished than could be in flight at once, so a rerun of them would show.
    const mid = await until("a third of the lines to finish", async () => {
      const r = await first.client.batches.retrieve(b.id);
      return r.request_counts!.completed >= 3 * KILL_CONCURRENCY ? r : null;
    });
    first.gw.proc.kill("SIGKILL");
    assert.equal((await first.gw.exited).signal, "SIGKILL");
    assert.ok(mid.request_counts!.completed < KILL_LINES, "killed before the job ended");

    // What the dead process left in the file: lines it finished (their records), lines it held.
    const file = SqliteFile.open(db, { readOnly: true });
    const rows = file
      .prepare<[string], { custom_id: string; state: string; result: string | null }>(
        "SELECT custom_id, state, result FROM batch_lines WHERE batch_id = ?",
      )
      .all(b.id);
    file.close();
    const before = new Map(
      rows.filter((r) => r.state === "succeeded").map((r) => [r.custom_id, JSON.parse(r.result!)]),
    );
    const heldAtKill = rows.filter((r) => r.state === "running").length;
    assert.ok(before.size >= mid.request_counts!.completed && before.size < KILL_LINES);
    assert.ok(heldAtKill > 0 && heldAtKill <= KILL_CONCURRENCY, `${heldAtKill} lines held at the kill`);
    const engineServedBeforeRestart = engine.engine.stats.finished.length;

    const second = await start(2);
    const done = await finished(second.client, b.id);
    const out = await assertCompletedOnce(second.client, done, KILL_LINES);
    // The lines finished before the kill are in the output as they were recorded then: not run again.
    for (const l of out.filter((x) => before.has(x.custom_id))) {
      const was = before.get(l.custom_id);
      assert.equal(l.id, was.id, `${l.custom_id} kept its record`);
      assert.equal(l.response.request_id, was.response.request_id, `${l.custom_id} was not rerun`);
    }
    // The engine ran each line once, plus at most the lines in flight when the process died (their
    // answers were lost with it): well under a rerun of the lines finished before the kill.
    const served = engine.engine.stats.finished.length;
    assert.ok(served >= KILL_LINES, `the engine served ${served}`);
    assert.ok(
      served <= KILL_LINES + KILL_CONCURRENCY,
      `the engine served ${served} for ${KILL_LINES} lines (${before.size} done before the kill, ${engineServedBeforeRestart} served by then)`,
    );
  });
});

// --- 2..4. One gateway in this process -----------------------------------------------------------------

const LIVE = { "x-ai-task": "live_ticket_summary", "x-ai-request-class": "interactive" };

describe("a job while its batch pool is paused", () => {
  let p: Platform;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "tg-batch-pause-"));
    p = await startPlatform({
      profile: "h100-llama8b",
      // The pause as examples/support-summary configures it (refused callers told to come back in 900 s),
      // on a short window so it lifts within the test once the live load stops.
      batchQueuePolicy:
        "{ pauseWhen: { pool: summary-online, ttftP95MsGt: 60, windowSeconds: 4, minSamples: 3, resumeAfterSeconds: 0, retryAfterSeconds: 900 }, fallbackOptions: [retry_later] }",
      batchMaxQueueMs: 300,
      gatewayExtra: `  batches: { path: "${join(dir, "batches.db")}", pollMs: 50, backoffMs: 100, maxBackoffMs: 500 }`,
    });
  });
  after(async () => {
    await p?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("makes no progress while paused, then completes with every custom_id once and none failed", async () => {
    const events = lineEvents(p);
    const gate = p.gateway.flow.gates.get("quality-batch")!;
    const live = openaiClient(p, LIVE);
    // Live summaries of ~7k tokens: each prefill alone is ~130 ms on this profile, past 60 ms.
    const summary = async (seed: number) => {
      const s = await live.chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: sampleText("en", 5200, seed) }],
        max_tokens: 5,
        stream: true,
      });
      for await (const _ of s);
    };
    await Promise.all(Array.from({ length: 4 }, (_, i) => summary(30 + i)));
    await until("the batch pause", () => (gate.paused ? true : null), 30_000);
    // More of them, one at a time, keep the pause on for as long as the checks below take on this
    // machine; it lifts a window (4 s) after they stop.
    let slowLive = true;
    const keepPaused = (async () => {
      for (let i = 0; slowLive; i++) await summary(100 + i);
    })();
    const client = openaiClient(p, {}, KEYS.quality);
    const n = 16;
    const b = await submit(client, n, chatLine("summary-default", 8));

    // While paused: lines go to the queue, wait their maxQueueMs, are told to wait, and are deferred —
    // each more than once (the 900 s Retry-After is capped by maxBackoffMs); nothing completes.
    await until(
      "every line deferred twice",
      () => {
        const d = events(b.id).filter((e) => e.outcome === "deferred");
        return ids(n).every((c) => d.filter((e) => e.custom_id === c).length >= 2) ? d : null;
      },
      30_000,
    ).catch((err) => {
      throw new Error(`${(err as Error).message} (paused: ${gate.paused})`);
    });
    assert.ok(gate.paused, "still paused: the live pool's slow first tokens are still in the window");
    const during = await client.batches.retrieve(b.id);
    assert.equal(during.status, "in_progress");
    assert.deepEqual(during.request_counts, { total: n, completed: 0, failed: 0 });
    assert.equal(p.replicas.batch[0]!.engine.stats.finished.length, 0, "nothing reached the batch engine");
    slowLive = false;
    await keepPaused;

    const done = await finished(client, b.id);
    const resumedAt = p.events.findIndex((e) => e.event === "queue.resumed");
    assert.ok(resumedAt >= 0, "the pause lifted");
    await assertCompletedOnce(client, done, n);
    const all = events(b.id);
    const deferred = all.filter((e) => e.outcome === "deferred");
    for (const e of deferred) {
      assert.equal(e.error_code, "inference_queue_paused");
      assert.equal(e.http_status, 503);
      assert.ok(e.retry_in_ms! <= 500, `deferred ${e.retry_in_ms} ms`);
      assert.equal(e.attempt, 1, "a deferral gives its attempt back");
    }
    assert.deepEqual(
      all.filter((e) => e.outcome !== "deferred").map((e) => e.outcome),
      Array(n).fill("succeeded"),
      "one run per line after the pause, none retried or failed",
    );
    // Each line's success came after its deferrals.
    for (const c of ids(n)) {
      const mine = all.filter((e) => e.custom_id === c);
      assert.equal(mine.at(-1)!.outcome, "succeeded");
    }
    assert.equal(p.lines.filter((l) => l.batch_id === b.id && l.status === "ok").length, n);
  });
});

function windowFrom(now: Date, startHours: number, lengthHours: number): string {
  const at = (h: number) => {
    const d = new Date(now.getTime() + h * 3_600_000);
    return `${String(d.getUTCHours()).padStart(2, "0")}:${String(d.getUTCMinutes()).padStart(2, "0")}`;
  };
  return `${at(startHours)}-${at(startHours + lengthHours)}`;
}

const budget = (window: string) => `apiVersion: ai.example.com/v1alpha1
kind: InferenceBudget
metadata: { name: windows }
spec:
  timeZone: UTC
  tenants:
    - { name: quality-job, allowedWindows: ["${window}"] }
`;

describe("a job outside its tenant's allowed window", () => {
  let p: Platform;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "tg-batch-window-"));
    p = await startPlatform({
      profile: "instant",
      budgetYaml: budget(windowFrom(new Date(), 2, 1)),
      gatewayExtra: `  batches: { path: "${join(dir, "batches.db")}", pollMs: 50, backoffMs: 100, maxBackoffMs: 300 }`,
    });
  });
  after(async () => {
    await p?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("waits, deferred and never failed, until the window opens; then completes", async () => {
    const events = lineEvents(p);
    const client = openaiClient(p, {}, KEYS.quality);
    const n = 20;
    const b = await submit(client, n, chatLine("summary-default", 8));
    await until("every line deferred twice", () => {
      const d = events(b.id).filter((e) => e.outcome === "deferred");
      return ids(n).every((c) => d.filter((e) => e.custom_id === c).length >= 2) ? d : null;
    });
    const during = await client.batches.retrieve(b.id);
    assert.equal(during.status, "in_progress");
    assert.deepEqual(during.request_counts, { total: n, completed: 0, failed: 0 });
    const outside = events(b.id);
    assert.ok(outside.every((e) => e.outcome === "deferred"));
    for (const e of outside) {
      assert.equal(e.error_code, "outside_allowed_window");
      assert.equal(e.http_status, 429);
      assert.equal(e.attempt, 1, "a deferral gives its attempt back");
      assert.ok(e.retry_in_ms! <= 300, `deferred ${e.retry_in_ms} ms, not the hours until the window`);
    }
    assert.equal(p.replicas.batch[0]!.engine.stats.finished.length, 0, "nothing reached the engine");

    // The window opens (a budget whose window holds now, put in force as any reload is).
    const loaded = loadConfigTexts({
      ...p.configTexts,
      "budget.yaml": budget(windowFrom(new Date(), -1, 2)),
    });
    assert.ok(loaded.ok);
    await p.gateway.reload(loaded.config);
    const done = await finished(client, b.id);
    await assertCompletedOnce(client, done, n);
    const ran = events(b.id).filter((e) => e.outcome !== "deferred");
    assert.deepEqual(
      ran.map((e) => e.outcome),
      Array(n).fill("succeeded"),
    );
  });
});

describe("lines the engine fails", () => {
  let p: Platform;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "tg-batch-retry-"));
    p = await startPlatform({
      profile: "instant",
      // The engine is taken out (ejected, its breaker open) as by default, for a fraction of the time.
      batchPoolExtra:
        "  outlierDetection: { baseEjectionMs: 200, maxEjectionMs: 200 }\n  circuitBreaker: { openMs: 200, maxOpenMs: 200 }",
      // Attempts enough that no line runs out while the others get their first tries: the line that is
      // the breaker's half-open probe spends one each time, and on a loaded machine (a clean-clone CI
      // run beside other work) one line reached 10 before every line had been retried once.
      gatewayExtra: `  batches: { path: "${join(dir, "batches.db")}", pollMs: 50, maxAttempts: 40, backoffMs: 50, maxBackoffMs: 400 }`,
    });
  });
  after(async () => {
    await p?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("are retried with exponential backoff, and the job completes with every custom_id once", async () => {
    const events = lineEvents(p);
    const engine = p.replicas.batch[0]!;
    engine.setFaults({ errorRate: 1, errorStatus: 500 });
    const client = openaiClient(p, {}, KEYS.quality);
    const n = 12;
    const b = await submit(client, n, chatLine("summary-default", 8));
    // Every line has failed on the engine, some more than once, before the engine recovers. (Once the
    // engine's breaker opens, lines wait, deferred, and only its half-open probe reaches the engine.)
    await until(
      "every line retried, some twice",
      () => {
        const r = events(b.id).filter((e) => e.outcome === "retried");
        const each = ids(n).map((c) => r.filter((e) => e.custom_id === c).length);
        return each.every((k) => k >= 1) && each.filter((k) => k >= 2).length >= 2 ? r : null;
      },
      60_000,
    );
    const during = await client.batches.retrieve(b.id);
    assert.deepEqual(during.request_counts, { total: n, completed: 0, failed: 0 });
    engine.setFaults({ errorRate: 0 });

    const done = await finished(client, b.id);
    await assertCompletedOnce(client, done, n);
    const all = events(b.id);
    const retried = all.filter((e) => e.outcome === "retried");
    for (const e of retried) {
      assert.ok(e.http_status >= 500, `retried after ${e.http_status}`);
      assert.equal(e.retry_in_ms, Math.min(400, 50 * 2 ** (e.attempt - 1)), "doubling from backoffMs");
    }
    for (const c of ids(n)) {
      const mine = all.filter((e) => e.custom_id === c && e.outcome !== "deferred");
      // Attempts 1, 2, 3, … each retried, then one success, the last attempt.
      assert.deepEqual(
        mine.map((e) => e.attempt),
        mine.map((_, i) => i + 1),
        `${c}: ${mine.map((e) => `${e.attempt}:${e.outcome}`).join(" ")}`,
      );
      assert.equal(mine.at(-1)!.outcome, "succeeded");
      // The next run came no sooner than the backoff said: it ended after the time the line was given
      // (the runner's own clock, so however slow the machine).
      const all2 = all.filter((e) => e.custom_id === c);
      for (let i = 0; i + 1 < all2.length; i++) {
        const e = all2[i]!;
        if (e.retry_at === null) continue;
        const early = Date.parse(e.retry_at) - all2[i + 1]!.at;
        assert.ok(early <= 0, `${c}: ran again ${early} ms before its backoff of ${e.retry_in_ms} ms ended`);
      }
    }
    assert.ok(retried.length > n);
    assert.ok(new Set(retried.map((e) => e.retry_in_ms)).size >= 2, "the backoff grew");
  });
});
