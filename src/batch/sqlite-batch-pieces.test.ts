// The SQLite batch store's big writes: files and a job's lines go in pieces with the event loop free in
// between, a job being written is never claimed, and what a process that died mid-write leaves (a
// creation's or a finalization's lease, pieces of a file never committed) is cleaned up after it.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { setImmediate as nextTurn } from "node:timers/promises";
import { SqliteFile } from "../sqlite/sqlite-file.js";
import type { NewBatchLine } from "./batch-store.js";
import type { BatchRequestOutput } from "./batch-types.js";
import { FILE_PIECE_BYTES } from "./sqlite-batch-files.js";
import { SqliteBatchStore } from "./sqlite-batch-store.js";

const T0 = 1_700_000_000_000;
const LEASE = 30_000;
const dir = mkdtempSync(join(tmpdir(), "tokengate-pieces-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `p-${++n}.db`);

/** `count` lines whose bodies are about `bytes` each. */
function bigLines(count: number, bytes: number): NewBatchLine[] {
  const text = "x".repeat(bytes);
  return Array.from({ length: count }, (_, i) => ({
    line: i + 1,
    customId: `c-${i + 1}`,
    body: { model: "m", messages: [{ role: "user", content: text }] },
  }));
}

const batchOf = (lines: NewBatchLine[]) => ({
  tenant: "acme",
  endpoint: "/v1/chat/completions",
  inputFileId: "file-in",
  completionWindowMs: 86_400_000,
  metadata: null,
  lines,
});

function ok(customId: string, pad = ""): BatchRequestOutput {
  return {
    id: `batch_req_${customId}`,
    custom_id: customId,
    response: { status_code: 200, request_id: "r", body: { answer: pad } },
    error: null,
  };
}

/** Counts turns of the event loop while `work` runs. */
async function turnsDuring<T>(work: Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let done = false;
  const spin = (async () => {
    while (!done) {
      await nextTurn();
      turns++;
    }
  })();
  const value = await work.finally(() => {
    done = true;
  });
  await spin;
  return { value, turns };
}

describe("sqlite batch store: big writes in pieces", () => {
  it("stores a file over several pieces, reads it back whole, and deletes every piece", async () => {
    const path = file();
    const s = SqliteBatchStore.open(path);
    const content = Buffer.alloc(FILE_PIECE_BYTES * 3 + 12_345);
    for (let i = 0; i < content.length; i++) content[i] = (i * 7) % 251;
    const { value: f, turns } = await turnsDuring(
      s.createFile({ tenant: "acme", purpose: "batch", filename: "big.jsonl", content }, T0),
    );
    assert.ok(turns >= 3, `the loop ran between pieces (${turns} turns)`);
    assert.equal(f.bytes, content.length);
    const raw = SqliteFile.open(path, { readOnly: true });
    const chunks = () =>
      (raw.prepare("SELECT COUNT(*) AS n FROM file_chunks WHERE file_id = ?").get(f.id) as { n: number }).n;
    assert.equal(chunks(), 3, "the first piece in the file's row, three more apart");
    assert.ok((await s.fileContent("acme", f.id))!.equals(content));
    assert.equal(await s.fileContent("other", f.id), null);
    assert.equal(await s.deleteFile("acme", f.id), true);
    assert.equal(chunks(), 0);
    raw.close();
    await s.close();
  });

  it("writes a job's lines in pieces, validating and unclaimable until the last", async () => {
    const s = SqliteBatchStore.open(file());
    const creating = s.createBatch(batchOf(bigLines(24, 100_000)), T0);
    await nextTurn();
    await nextTurn();
    const [seen] = (await s.listBatches("acme")).data;
    assert.equal(seen?.status, "validating");
    assert.deepEqual(await s.claimLines("w", 100, LEASE, T0), [], "nothing of it is claimed yet");
    const { value: b, turns } = await turnsDuring(creating);
    assert.ok(turns >= 3, `the loop ran between pieces (${turns} turns)`);
    assert.equal(b.status, "in_progress");
    assert.equal(b.in_progress_at, T0 / 1000);
    assert.equal((await s.claimLines("w", 100, LEASE, T0)).length, 24);
    await s.close();
  });

  it("writes an output file over several pieces, in line order", async () => {
    const s = SqliteBatchStore.open(file());
    const b = await s.createBatch(batchOf(bigLines(6, 10)), T0);
    const pad = "y".repeat(FILE_PIECE_BYTES / 2);
    for (const c of await s.claimLines("w", 6, LEASE, T0)) {
      await s.finishLine("w", c.batchId, c.line, { state: "succeeded", result: ok(c.customId, pad) }, T0);
    }
    assert.deepEqual(await s.finalizeReady(T0 + 1), [b.id]);
    const done = (await s.getBatch("acme", b.id))!;
    const text = (await s.fileContent("acme", done.output_file_id!))!.toString("utf8");
    const ids = text
      .trimEnd()
      .split("\n")
      .map((l) => (JSON.parse(l) as BatchRequestOutput).custom_id);
    assert.deepEqual(ids, ["c-1", "c-2", "c-3", "c-4", "c-5", "c-6"]);
    assert.ok(text.length > FILE_PIECE_BYTES * 3);
    assert.equal(done.error_file_id, null);
    await s.close();
  });

  it("fails a job whose creator died mid-write once its lease ran out, and removes its lines", async () => {
    const path = file();
    const s = SqliteBatchStore.open(path);
    const b = await s.createBatch(batchOf(bigLines(3, 10)), T0);
    // As a creator that died after the first piece leaves it: validating, its writer's lease running.
    const raw = SqliteFile.open(path);
    raw.prepare("UPDATE batches SET status = 'validating', in_progress_at = NULL WHERE id = ?").run(b.id);
    raw
      .prepare(
        "INSERT INTO batch_writers (batch_id, phase, owner, lease_until) VALUES (?, 'create', 'dead', ?)",
      )
      .run(b.id, T0 + 1000);
    assert.deepEqual(await s.claimLines("w", 10, LEASE, T0 + 10), []);
    assert.deepEqual(await s.finalizeReady(T0 + 999), []);
    assert.equal((await s.getBatch("acme", b.id))!.status, "validating", "the lease still runs");
    assert.deepEqual(await s.finalizeReady(T0 + 1001), [b.id]);
    const failed = (await s.getBatch("acme", b.id))!;
    assert.equal(failed.status, "failed");
    assert.equal(failed.failed_at, Math.floor((T0 + 1001) / 1000));
    assert.deepEqual(
      (JSON.parse(failed.errors!) as { data: { code: string }[] }).data.map((e) => e.code),
      ["batch_creation_interrupted"],
    );
    assert.equal(await s.getLine(b.id, 1), null);
    raw.close();
    await s.close();
  });

  it("redoes a finalization whose finalizer died once its lease ran out; its stray pieces are swept", async () => {
    const path = file();
    const s = SqliteBatchStore.open(path);
    const b = await s.createBatch(batchOf(bigLines(2, 10)), T0);
    for (const c of await s.claimLines("w", 2, LEASE, T0)) {
      await s.finishLine("w", c.batchId, c.line, { state: "succeeded", result: ok(c.customId) }, T0);
    }
    // As a finalizer that died after its seal and one piece of the output leaves it.
    const raw = SqliteFile.open(path);
    raw
      .prepare("UPDATE batches SET status = 'finalizing', finalizing_at = ? WHERE id = ?")
      .run(T0 / 1000, b.id);
    raw
      .prepare(
        "INSERT INTO batch_writers (batch_id, phase, owner, lease_until, ending) VALUES (?, 'finalize', 'dead', ?, 'completed')",
      )
      .run(b.id, T0 + 1000);
    raw
      .prepare("INSERT INTO file_chunks (file_id, seq, data, written_at) VALUES ('file-stray', 1, x'00', 0)")
      .run();
    assert.deepEqual(await s.finalizeReady(T0 + 500), [], "another finalizer holds it");
    assert.deepEqual(await s.finalizeReady(T0 + 1001), [b.id]);
    const done = (await s.getBatch("acme", b.id))!;
    assert.equal(done.status, "completed");
    assert.equal(
      (await s.fileContent("acme", done.output_file_id!))!.toString().trimEnd().split("\n").length,
      2,
    );
    await s.close();
    SqliteBatchStore.open(path).close();
    const stray = raw.prepare("SELECT COUNT(*) AS n FROM file_chunks WHERE file_id = 'file-stray'").get() as {
      n: number;
    };
    assert.equal(stray.n, 0, "a file's pieces never committed are gone after the next open");
    raw.close();
  });

  it("ends each job once when two stores on one file finalize at the same time", async () => {
    const path = file();
    const one = SqliteBatchStore.open(path);
    const two = SqliteBatchStore.open(path);
    const ids: string[] = [];
    for (let j = 0; j < 4; j++) {
      const b = await one.createBatch(batchOf(bigLines(3, 10)), T0 + j);
      ids.push(b.id);
      for (const c of await one.claimLines("w", 3, LEASE, T0 + j)) {
        await one.finishLine("w", c.batchId, c.line, { state: "succeeded", result: ok(c.customId) }, T0);
      }
    }
    const [a, b] = await Promise.all([one.finalizeReady(T0 + 10), two.finalizeReady(T0 + 10)]);
    assert.deepEqual([...a, ...b].sort(), [...ids].sort(), "each job ended by exactly one of them");
    const outputs = (await one.listFiles("acme", { purpose: "batch_output" })).data;
    assert.equal(outputs.length, 4, "one output file each");
    await one.close();
    await two.close();
  });
});
