// Batch jobs shared by replicas through Redis, end to end: three `tokengate gateway` processes with
// `batches.store: redis` on one real redis-server (started by the test; skipped without one) in front of
// one simulated engine. A job created through one replica is the same job through the others (status,
// counts, files), and still invisible to another tenant; its lines are run by every replica, none by two
// at once; the replica the job was created on is SIGKILLed mid-job, its claims run out and return to
// the others, and the job completes with every custom_id exactly once.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI, { toFile } from "openai";
import { type RedisServer, startRedis } from "../bench/services/redis-server.js";
import { makeEngineConfig } from "../sim/engine-config.js";
import { SimReplica } from "../sim/replica.js";
import { fileLines, finished, jsonl, until } from "../testing/batch-jobs.js";
import { CLI_MAIN, type CliGateway, onePoolConfig, spawnGateway } from "../testing/cli-gateway.js";
import { missingService } from "../testing/system-services.js";

const SKIP = missingService("redis-server");
const KEY = "sk-batch-replicas-0001";
const OTHER_KEY = "sk-batch-replicas-0002";
const LINES = 120;
const CONCURRENCY = 4;

function config(engine: SimReplica, redisUrl: string): string {
  return onePoolConfig({
    endpoints: [engine.url],
    version: "batch-replicas-1",
    maxOutputTokens: 400,
    gateway: `  auth:
    apiKeys: [{ key: ${KEY}, tenant: batch-tenant }, { key: ${OTHER_KEY}, tenant: someone-else }]
  shutdown: { drainMs: 2000 }
  budgets: { redis: { url: "${redisUrl}", namespace: "tg:replicas" } }
  batches: { store: redis, pollMs: 50, leaseMs: 1000, concurrency: ${CONCURRENCY} }`,
  });
}

const line = (i: number) => ({
  custom_id: `req-${i}`,
  method: "POST",
  url: "/v1/chat/completions",
  body: { model: "m", messages: [{ role: "user", content: `请总结第${i}条工单。` }], max_tokens: 48 },
});

/** Lines each replica's log says it ran to success. */
function succeededBy(logFile: string): string[] {
  return readFileSync(logFile, "utf8")
    .split("\n")
    .filter((l) => l.includes('"batch.line"'))
    .map((l) => JSON.parse(l) as { outcome: string; custom_id: string })
    .filter((e) => e.outcome === "succeeded")
    .map((e) => e.custom_id);
}

describe("batch jobs shared by replicas through Redis", { skip: SKIP ?? false }, () => {
  let redis: RedisServer;
  let engine: SimReplica;
  let dir: string;
  const gws: CliGateway[] = [];

  before(async () => {
    redis = await startRedis();
    engine = new SimReplica({
      name: "e0",
      port: 0,
      engine: makeEngineConfig("h100-llama8b", "m-base", { maxModelLen: 4096 }),
      seed: 1,
    });
    await engine.start();
    dir = mkdtempSync(join(tmpdir(), "tg-batch-replicas-"));
    writeFileSync(join(dir, "config.yaml"), config(engine, redis.url));
    for (let i = 0; i < 3; i++) {
      gws.push(
        await spawnGateway(CLI_MAIN, [
          "gateway",
          "--config",
          dir,
          "--no-watch",
          "--log",
          join(dir, `gateway-${i}.log`),
          "--history",
          join(dir, `history-${i}.db`),
        ]),
      );
    }
  });
  after(async () => {
    for (const g of gws) g.proc.kill("SIGKILL");
    await Promise.all(gws.map((g) => g.exited));
    await engine?.stop();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const client = (i: number, key = KEY) =>
    new OpenAI({ baseURL: `${gws[i]!.url}/v1`, apiKey: key, maxRetries: 0, timeout: 15_000 });

  it("one job across three replicas: the same through each, run by all, finished once after one is killed", async () => {
    const a = client(0);
    const file = await a.files.create({
      file: await toFile(Buffer.from(jsonl(LINES, line)), "input.jsonl"),
      purpose: "batch",
    });
    const job = await a.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    assert.equal(job.status, "in_progress");

    // The same job and file through another replica; another tenant sees neither.
    const b = client(1);
    assert.equal((await b.batches.retrieve(job.id)).input_file_id, file.id);
    assert.equal((await b.files.retrieve(file.id)).bytes, file.bytes);
    const stranger = client(2, OTHER_KEY);
    await assert.rejects(
      stranger.batches.retrieve(job.id),
      (e: unknown) => e instanceof OpenAI.NotFoundError,
    );
    await assert.rejects(stranger.files.content(file.id), (e: unknown) => e instanceof OpenAI.NotFoundError);
    assert.deepEqual((await stranger.batches.list()).data, []);

    // Mid-job, the replica the job was created on dies; its claims run out and return to the others.
    await until("a fifth of the lines to finish", async () => {
      const r = await b.batches.retrieve(job.id);
      return r.request_counts!.completed >= LINES / 5 ? r : null;
    });
    gws[0]!.proc.kill("SIGKILL");
    await gws[0]!.exited;

    const done = await finished(client(2), job.id, 60_000);
    assert.equal(done.status, "completed");
    assert.deepEqual(done.request_counts, { total: LINES, completed: LINES, failed: 0 });
    const out = await fileLines(b, done.output_file_id);
    const ids = out.map((l) => l.custom_id as string);
    assert.equal(ids.length, LINES, "one output line per input line");
    assert.equal(new Set(ids).size, LINES, "no custom_id twice");
    assert.deepEqual(await fileLines(b, done.error_file_id), []);

    // Every replica ran lines; no line succeeded on two of them (a late answer would be refused and
    // logged as abandoned, not succeeded); the engine ran each line once, plus at most the lines the
    // dead replica had in flight.
    const by = [0, 1, 2].map((i) => succeededBy(join(dir, `gateway-${i}.log`)));
    for (const [i, got] of by.entries()) assert.ok(got.length > 0, `replica ${i} ran lines`);
    const all = by.flat();
    assert.equal(new Set(all).size, all.length, "no line succeeded on two replicas");
    const served = engine.engine.stats.finished.length;
    assert.ok(served >= LINES && served <= LINES + CONCURRENCY, `the engine served ${served}`);
  });
});
