// The Files and Batch API end to end with the official openai client, simulated engines and a real
// SQLite file: a job completes with every custom_id once, its lines run through the batch pool as class
// `batch` (one log line each, with the job id); a job with bad lines fails naming each line; another
// tenant cannot see a job or its files; a cancelled job ends with every custom_id in the output or the
// error file exactly once; an upload over the cap gets 413 and leaves nothing behind.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type OpenAI from "openai";
import { toFile } from "openai";
import { fileLines, finished, jsonl, until } from "../testing/batch-jobs.js";
import { KEYS, openaiClient, type Platform, startPlatform } from "../testing/platform.js";

const chatLine = (i: number, maxTokens = 8) => ({
  custom_id: `req-${i}`,
  method: "POST",
  url: "/v1/chat/completions",
  body: {
    model: "summary-default",
    messages: [{ role: "user", content: `请总结第${i}条工单：客户反馈订单未到。` }],
    max_tokens: maxTokens,
  },
});

describe("the Files and Batch API", () => {
  let p: Platform;
  let dir: string;
  let quality: OpenAI;
  let basic: OpenAI;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "tg-batch-"));
    p = await startPlatform({
      profile: "h100-llama8b",
      gatewayExtra: `  batches: { path: "${join(dir, "batches.db")}", pollMs: 50, maxFileBytes: 65536, maxLineBytes: 16384 }`,
    });
    quality = openaiClient(p, {}, KEYS.quality);
    basic = openaiClient(p, {}, KEYS.basic);
  });
  after(async () => {
    await p.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs a job through the batch pool: every custom_id once in the output, one log line per line", async () => {
    const file = await quality.files.create({
      file: await toFile(Buffer.from(jsonl(12, (i) => chatLine(i))), "input.jsonl"),
      purpose: "batch",
    });
    assert.equal(file.purpose, "batch");
    assert.equal((await quality.files.retrieve(file.id)).bytes, file.bytes);
    const created = await quality.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
      metadata: { job: "recompute", task: "batch_recompute_summary" },
    });
    assert.equal(created.status, "in_progress");
    assert.deepEqual(created.metadata, { job: "recompute", task: "batch_recompute_summary" });
    const done = await finished(quality, created.id);
    assert.equal(done.status, "completed");
    assert.deepEqual(done.request_counts, { total: 12, completed: 12, failed: 0 });
    const out = await fileLines(quality, done.output_file_id);
    assert.deepEqual(
      out.map((l) => l.custom_id).sort(),
      Array.from({ length: 12 }, (_, i) => `req-${i}`).sort(),
    );
    for (const l of out) {
      assert.equal(l.response.status_code, 200);
      assert.equal(l.response.body.object, "chat.completion");
      assert.equal(l.error, null);
    }
    assert.equal(done.error_file_id ?? null, null);
    const logged = p.lines.filter((l) => l.batch_id === created.id);
    assert.equal(logged.length, 12, "one request log line per line run");
    for (const l of logged) {
      assert.equal(l.route_pool, "summary-batch");
      assert.equal(l.request_class, "batch");
      assert.equal(l.tenant, "quality-job");
      assert.equal(l.task, "batch_recompute_summary", "the job's metadata.task");
      assert.equal(l.task_known, true);
    }
    assert.ok(p.events.some((e) => e.event === "batch.finalized" && e.fields.batch_id === created.id));
  });

  it("fails a job with bad lines, naming every line, and runs none of it", async () => {
    const text = [
      JSON.stringify(chatLine(0)),
      "{not json",
      JSON.stringify({ ...chatLine(2), custom_id: "req-0" }),
      JSON.stringify({ ...chatLine(3), url: "/v1/completions" }),
      JSON.stringify({ ...chatLine(4), body: { ...chatLine(4).body, model: "no-such-model" } }),
    ].join("\n");
    const file = await quality.files.create({
      file: await toFile(Buffer.from(text), "bad.jsonl"),
      purpose: "batch",
    });
    const before = p.lines.length;
    const b = await quality.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const done = await finished(quality, b.id);
    assert.equal(done.status, "failed");
    const errs = done.errors!.data!;
    assert.deepEqual(
      errs.map((e) => [e.line, e.code]),
      [
        [2, "invalid_json"],
        [3, "duplicate_custom_id"],
        [4, "invalid_url"],
        [5, "model_not_found"],
      ],
    );
    assert.equal(p.lines.length, before, "nothing ran");
  });

  it("keeps jobs and files to their tenant: another gets 404 and an empty list", async () => {
    const file = await quality.files.create({
      file: await toFile(Buffer.from(jsonl(2, (i) => chatLine(i))), "mine.jsonl"),
      purpose: "batch",
    });
    const b = await quality.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const done = await finished(quality, b.id);
    for (const attempt of [
      () => basic.batches.retrieve(b.id),
      () => basic.batches.cancel(b.id),
      () => basic.files.retrieve(file.id),
      () => basic.files.content(file.id),
      () => basic.files.content(done.output_file_id!),
      () => basic.files.delete(file.id),
      () =>
        basic.batches.create({
          input_file_id: file.id,
          endpoint: "/v1/chat/completions",
          completion_window: "24h",
        }),
    ]) {
      await assert.rejects(attempt, (e: any) => e.status === 404);
    }
    assert.equal((await basic.batches.list()).data.length, 0);
    assert.equal((await basic.files.list()).data.length, 0);
    assert.ok((await quality.files.retrieve(file.id)).id, "still there for its owner");
    await assert.rejects(
      () => quality.batches.cancel(b.id),
      (e: any) => e.status === 409 && e.code === "batch_not_cancellable",
      "a completed job cannot be cancelled",
    );
  });

  it("cancels a job: nothing new starts, every custom_id ends up exactly once in output or error file", async () => {
    const file = await quality.files.create({
      file: await toFile(Buffer.from(jsonl(200, (i) => chatLine(i, 64))), "big.jsonl"),
      purpose: "batch",
    });
    const b = await quality.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    await until("some lines to finish", async () => {
      const r = await quality.batches.retrieve(b.id);
      return r.request_counts!.completed > 0 ? r : null;
    });
    const cancelling = await quality.batches.cancel(b.id);
    assert.ok(["cancelling", "cancelled"].includes(cancelling.status));
    const done = await finished(quality, b.id);
    assert.equal(done.status, "cancelled");
    const out = await fileLines(quality, done.output_file_id);
    const errs = await fileLines(quality, done.error_file_id);
    const ids = [...out, ...errs].map((l) => l.custom_id);
    assert.equal(ids.length, 200);
    assert.equal(new Set(ids).size, 200, "each custom_id once");
    assert.ok(errs.length > 0 && errs.every((l) => l.error?.code === "batch_cancelled"));
    assert.equal(done.request_counts!.completed, out.length);
    assert.equal((await quality.batches.cancel(b.id)).status, "cancelled", "a second cancel changes nothing");
  });

  it("refuses an upload over the cap with 413 file_too_large and keeps nothing", async () => {
    const count = (await quality.files.list()).data.length;
    const huge = await toFile(Buffer.alloc(200_000, 97), "huge.jsonl");
    await assert.rejects(
      () => quality.files.create({ file: huge, purpose: "batch" }),
      (e: any) => e.status === 413 && e.code === "file_too_large",
    );
    assert.equal((await quality.files.list()).data.length, count);
  });

  it("keeps nothing of an upload the client abandons half-way, and refuses bad uploads by field", async () => {
    const count = (await quality.files.list()).data.length;
    const boundary = "tgboundary";
    await new Promise<void>((resolve) => {
      const req = http.request(`${p.url}/v1/files`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${KEYS.quality}`,
          "content-type": `multipart/form-data; boundary=${boundary}`,
          "content-length": "100000",
        },
      });
      req.on("error", () => resolve());
      req.write(
        `--${boundary}\r\ncontent-disposition: form-data; name="purpose"\r\n\r\nbatch\r\n` +
          `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="x.jsonl"\r\n\r\n{"custom_id":`,
      );
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 100);
    });
    await sleep(100);
    assert.equal((await quality.files.list()).data.length, count, "nothing kept");
    await assert.rejects(
      async () =>
        quality.files.create({ file: await toFile(Buffer.from("{}"), "x.jsonl"), purpose: "fine-tune" }),
      (e: any) => e.status === 400 && e.param === "purpose",
    );
    const res = await fetch(`${p.url}/v1/files`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEYS.quality}`, "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as any).error.code, "invalid_multipart");
    await assert.rejects(
      () =>
        quality.batches.create({
          input_file_id: "file-nope",
          endpoint: "/v1/chat/completions",
          completion_window: "24h",
        }),
      (e: any) => e.status === 404 && e.param === "input_file_id",
    );
    await assert.rejects(
      () =>
        quality.batches.create({
          input_file_id: "file-nope",
          endpoint: "/v1/embeddings" as any,
          completion_window: "24h",
        }),
      (e: any) => e.status === 400 && e.param === "endpoint",
    );
    // Refused before its body is read: the client, still sending, gets the answer, not a reset.
    const stranger = openaiClient(p, {}, "sk-not-a-key");
    const body = await toFile(Buffer.alloc(60_000, 97), "big.jsonl");
    for (let i = 0; i < 3; i++) {
      await assert.rejects(
        () => stranger.files.create({ file: body, purpose: "batch" }),
        (e: any) => e.status === 401 && e.code === "invalid_api_key",
      );
    }
    assert.equal((await quality.files.list()).data.length, count);
  });

  it("lists a tenant's jobs newest first, a page at a time", async () => {
    const all = await quality.batches.list({ limit: 2 });
    assert.equal(all.data.length, 2);
    assert.ok(all.has_more !== false);
    const next = await quality.batches.list({ limit: 2, after: all.data[1]!.id });
    assert.notEqual(next.data[0]?.id, all.data[0]!.id);
    const ids = [];
    for await (const b of quality.batches.list({ limit: 1 })) ids.push(b.id);
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(ids.length >= 4);
  });
});

describe("the Files and Batch API, off", () => {
  it("answers 404 batches_disabled, naming the setting, when no batches.path is configured", async () => {
    const p = await startPlatform();
    try {
      await assert.rejects(
        () => openaiClient(p, {}, KEYS.quality).batches.list(),
        (e: any) => e.status === 404 && e.code === "batches_disabled" && /batches\.path/.test(e.message),
      );
    } finally {
      await p.stop();
    }
  });
});
