// The SQLite batch store: the whole store contract (batch-store-contract.ts) on a fresh file per case,
// then what only a file shows — everything read back after the store is closed and opened again, and
// two processes' connections (worker threads) claiming at the same time never sharing a line. Its big
// writes in pieces are pinned in sqlite-batch-pieces.test.ts.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { Worker } from "node:worker_threads";
import { batchStoreContract } from "../testing/batch-store-contract.js";
import { fileRecords, finishAll, LEASE, newBatch, T0 } from "../testing/batch-store-fixtures.js";
import { toBatchObject } from "./batch-store.js";
import { SqliteBatchStore } from "./sqlite-batch-store.js";

const dir = mkdtempSync(join(tmpdir(), "tokengate-batch-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
let path = join(dir, "contract-0.db");

batchStoreContract(
  "sqlite",
  async () => SqliteBatchStore.open(path),
  async () => {
    path = join(dir, `contract-${++n}.db`);
  },
);

describe("sqlite batch store: the file", () => {
  it("keeps files, jobs, lines and results across a close and an open", async () => {
    const file = join(dir, "reopen.db");
    const s = SqliteBatchStore.open(file);
    const content = Buffer.from('{"custom_id":"a"}\n');
    const f = await s.createFile({ tenant: "acme", purpose: "batch", filename: "in.jsonl", content }, T0);
    const b = await newBatch(s, 4);
    await finishAll(s, "w", await s.claimLines("w", 2, LEASE, T0), T0 + 1);
    await s.close();

    const r = SqliteBatchStore.open(file);
    assert.deepEqual(await r.fileContent("acme", f.id), content);
    const again = (await r.getBatch("acme", b.id))!;
    assert.equal(toBatchObject(again).status, "in_progress");
    assert.deepEqual(toBatchObject(again).request_counts, { total: 4, completed: 2, failed: 0 });
    assert.equal((await r.getLine(b.id, 1))!.state, "succeeded");
    const rest = await r.claimLines("w2", 10, LEASE, T0 + 2);
    assert.deepEqual(
      rest.map((c) => c.line),
      [3, 4],
    );
    await finishAll(r, "w2", rest, T0 + 3);
    assert.deepEqual(await r.finalizeReady(T0 + 4), [b.id]);
    const out = await fileRecords(r, b.id, "output");
    assert.deepEqual(
      out.map((x) => x.custom_id),
      ["req-1", "req-2", "req-3", "req-4"],
    );
    await r.close();
  });

  it("never hands a line to two processes' connections claiming at the same time (worker threads)", async () => {
    const file = join(dir, "workers.db");
    const s = SqliteBatchStore.open(file);
    const b = await newBatch(s, 300);
    const url = new URL("./sqlite-batch-store.js", import.meta.url).href;
    // Each worker opens its own connection, as a replica would, and claims and finishes until none is left.
    const code = `
      const { workerData, parentPort } = require("node:worker_threads");
      import(workerData.url).then(async ({ SqliteBatchStore }) => {
        const s = SqliteBatchStore.open(workerData.path);
        const claimed = [];
        let refused = 0;
        for (;;) {
          const got = await s.claimLines(workerData.owner, 4, 60000, workerData.now);
          if (got.length === 0) break;
          for (const c of got) {
            claimed.push(c.batchId + ":" + c.line);
            const result = { id: "batch_req_" + c.line, custom_id: c.customId, response: null, error: null };
            const outcome = { state: "succeeded", result };
            if (!(await s.finishLine(workerData.owner, c.batchId, c.line, outcome, workerData.now))) refused++;
          }
        }
        await s.close();
        parentPort.postMessage({ claimed, refused });
      });`;
    const run = (owner: string) =>
      new Promise<{ claimed: string[]; refused: number }>((resolve, reject) => {
        const w = new Worker(code, { eval: true, workerData: { url, path: file, owner, now: T0 } });
        w.once("message", resolve);
        w.once("error", reject);
      });
    const results = await Promise.all([run("w1"), run("w2")]);
    const all = results.flatMap((r) => r.claimed);
    assert.equal(new Set(all).size, all.length, "no line claimed twice");
    assert.equal(all.length, 300);
    assert.deepEqual(
      results.map((r) => r.refused),
      [0, 0],
    );
    assert.deepEqual(toBatchObject((await s.getBatch("acme", b.id))!).request_counts, {
      total: 300,
      completed: 300,
      failed: 0,
    });
    await s.close();
  });
});
