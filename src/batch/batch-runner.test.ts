// Pins what the runner does with each answer, on a real SQLite store and a scripted sender: 2xx goes to
// the output file; "wait" codes defer the line with its attempt given back, however often; engine
// failures retry with backoff up to maxAttempts, then the error file; other 4xx fail at once; at most
// `concurrency` lines run at once; a stop gives every line still held back for the next start.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type BatchSettings, DEFAULT_BATCHES } from "../config/batch-settings.js";
import { BatchRunner, type LineAnswer, type LineSender } from "./batch-runner.js";
import type { ClaimedLine } from "./batch-store.js";
import { SqliteBatchStore } from "./sqlite-batch-store.js";

const dir = mkdtempSync(join(tmpdir(), "tokengate-runner-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const SETTINGS: BatchSettings = {
  ...DEFAULT_BATCHES,
  concurrency: 4,
  pollMs: 10,
  leaseMs: 5000,
  maxAttempts: 3,
  backoffMs: 5,
  maxBackoffMs: 20,
};

async function setup(lines: number, settings: Partial<BatchSettings> = {}) {
  const store = SqliteBatchStore.open(join(dir, `r${n++}.db`));
  const file = await store.createFile({
    tenant: "t",
    purpose: "batch",
    filename: "in.jsonl",
    content: Buffer.from("x"),
  });
  const batch = await store.createBatch({
    tenant: "t",
    endpoint: "/v1/chat/completions",
    inputFileId: file.id,
    completionWindowMs: 3_600_000,
    lines: Array.from({ length: lines }, (_, i) => ({
      line: i + 1,
      customId: `c-${i + 1}`,
      body: { model: "m", messages: [{ role: "user", content: "hi" }] },
    })),
  });
  const events: { outcome: string; custom_id: string; attempt: number; error_code: string | null }[] = [];
  const make = (send: LineSender) =>
    new BatchRunner(
      store,
      send,
      { ...SETTINGS, ...settings },
      {
        line: (f) => events.push(f),
        finalized: () => {},
        storeError: (_w, e) => {
          throw e;
        },
      },
    );
  return { store, batch, events, make };
}

const ok = (): LineAnswer => ({
  status: 200,
  requestId: "r",
  body: { object: "chat.completion" },
  retryAfterSeconds: null,
});
const gatewayError = (status: number, code: string, retryAfterSeconds: number | null = null): LineAnswer => ({
  status,
  requestId: "r",
  body: { error: { code, message: code } },
  retryAfterSeconds,
});

async function ended(store: SqliteBatchStore, id: string) {
  for (let i = 0; i < 400; i++) {
    const b = (await store.batchById(id))!;
    if (["completed", "cancelled", "expired", "failed"].includes(b.status)) return b;
    await sleep(10);
  }
  throw new Error("the batch did not end");
}

async function outputOf(store: SqliteBatchStore, fileId: string | null) {
  if (fileId === null) return [];
  return (await store.fileContent("t", fileId))!
    .toString()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));
}

describe("the batch runner", () => {
  it("runs every line once, never more than `concurrency` at a time", async () => {
    const { store, batch, make } = await setup(20);
    let running = 0;
    let most = 0;
    const runner = make(async () => {
      most = Math.max(most, ++running);
      await sleep(5);
      running--;
      return ok();
    });
    runner.start();
    const b = await ended(store, batch.id);
    await runner.stop();
    assert.equal(b.status, "completed");
    assert.equal(most, 4);
    const out = await outputOf(store, b.output_file_id);
    assert.deepEqual(
      out.map((l) => l.custom_id),
      Array.from({ length: 20 }, (_, i) => `c-${i + 1}`),
    );
    assert.equal(out[0].response.status_code, 200);
  });

  it("defers a line told to wait, keeping its attempts, as often as it is told", async () => {
    const { store, batch, events, make } = await setup(1);
    let calls = 0;
    // Ten refusals: past maxAttempts (3) if deferrals counted.
    const runner = make(async () => (++calls <= 10 ? gatewayError(503, "inference_queue_paused", 0) : ok()));
    runner.start();
    const b = await ended(store, batch.id);
    await runner.stop();
    assert.equal(b.status, "completed");
    assert.equal(b.request_failed, 0);
    assert.equal(events.filter((e) => e.outcome === "deferred").length, 10);
    assert.ok(
      events.every((e) => e.attempt === 1),
      "every run was its first attempt",
    );
  });

  it("retries an engine failure with backoff, then gives up after maxAttempts into the error file", async () => {
    const { store, batch, events, make } = await setup(2);
    const seen = new Map<string, number>();
    const runner = make(async (l: ClaimedLine) => {
      const k = (seen.get(l.customId) ?? 0) + 1;
      seen.set(l.customId, k);
      if (l.customId === "c-1") return k < 3 ? gatewayError(502, "upstream_error") : ok();
      return { status: 0, requestId: "", body: null, retryAfterSeconds: null, error: "ECONNREFUSED" };
    });
    runner.start();
    const b = await ended(store, batch.id);
    await runner.stop();
    assert.deepEqual([b.request_completed, b.request_failed], [1, 1]);
    assert.equal(seen.get("c-1"), 3, "succeeded on its third run");
    assert.equal(seen.get("c-2"), 3, "maxAttempts runs, no more");
    const errors = await outputOf(store, b.error_file_id);
    assert.deepEqual(
      errors.map((e) => [e.custom_id, e.error?.code]),
      [["c-2", "upstream_unavailable"]],
    );
    assert.equal(events.filter((e) => e.outcome === "retried").length, 4);
  });

  it("fails a line the gateway refuses as wrong (4xx) at once, with its answer", async () => {
    const { store, batch, make } = await setup(1);
    let calls = 0;
    const runner = make(async () => {
      calls++;
      return gatewayError(400, "context_length_exceeded");
    });
    runner.start();
    const b = await ended(store, batch.id);
    await runner.stop();
    assert.equal(calls, 1);
    const [e] = await outputOf(store, b.error_file_id);
    assert.equal(e.response.status_code, 400);
    assert.equal(e.response.body.error.code, "context_length_exceeded");
  });

  it("at stop, gives back the lines it holds: the next runner finishes them, each once", async () => {
    const { store, batch, make } = await setup(6);
    let release: () => void = () => {};
    const hold = new Promise<void>((r) => {
      release = r;
    });
    const first = make(async () => {
      await hold;
      return ok();
    });
    first.start();
    while (first.inFlight < 4) await sleep(5);
    await first.stop(); // no drain time: the four in flight are abandoned and given back
    release();
    assert.equal((await store.batchById(batch.id))!.request_completed, 0);
    const second = make(async () => ok());
    second.start();
    const b = await ended(store, batch.id);
    await second.stop();
    const out = await outputOf(store, b.output_file_id);
    assert.equal(out.length, 6);
    assert.equal(new Set(out.map((l) => l.custom_id)).size, 6);
  });
});
