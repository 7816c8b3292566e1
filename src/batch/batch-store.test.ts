import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import {
  type ClaimedLine,
  FileTooLarge,
  type NewBatchLine,
  SqliteBatchStore,
  toBatchObject,
  toFileObject,
} from "./batch-store.js";
import type { BatchRequestOutput } from "./batch-types.js";

const T0 = 1_700_000_000_000;
const DAY = 86_400_000;
const LEASE = 30_000;
const ENDPOINT = "/v1/chat/completions";

const dir = mkdtempSync(join(tmpdir(), "tokengate-batch-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
/** A fresh database file. */
function file(): string {
  return join(dir, `batches-${++n}.db`);
}

function linesOf(count: number, prefix = "req"): NewBatchLine[] {
  return Array.from({ length: count }, (_, i) => ({
    line: i + 1,
    customId: `${prefix}-${i + 1}`,
    body: { model: "m", messages: [{ role: "user", content: `q${i + 1}` }] },
  }));
}

function newBatch(s: SqliteBatchStore, count: number, opts: { tenant?: string; windowMs?: number } = {}) {
  return s.createBatch(
    {
      tenant: opts.tenant ?? "acme",
      endpoint: ENDPOINT,
      inputFileId: "file-input",
      completionWindowMs: opts.windowMs ?? DAY,
      metadata: null,
      lines: linesOf(count),
    },
    T0,
  );
}

function ok(customId: string, answer = customId): BatchRequestOutput {
  return {
    id: `batch_req_${customId}`,
    custom_id: customId,
    response: { status_code: 200, request_id: `r-${customId}`, body: { answer } },
    error: null,
  };
}

function bad(customId: string): BatchRequestOutput {
  return {
    id: `batch_req_${customId}`,
    custom_id: customId,
    response: { status_code: 400, request_id: `r-${customId}`, body: { error: { message: "no" } } },
    error: null,
  };
}

/** The records of a JSONL file. */
function records(content: Buffer | null): any[] {
  assert.ok(content, "file exists");
  const text = content.toString("utf8");
  if (text === "") return [];
  assert.ok(text.endsWith("\n"), "every line ends with a newline");
  return text
    .slice(0, -1)
    .split("\n")
    .map((l) => JSON.parse(l));
}

function finishAll(s: SqliteBatchStore, owner: string, claimed: readonly ClaimedLine[], now: number): void {
  for (const c of claimed) {
    assert.ok(s.finishLine(owner, c.batchId, c.line, { state: "succeeded", result: ok(c.customId) }, now));
  }
}

describe("batch store: files", () => {
  it("stores a file and its bytes, read back after a reopen, and deletes it", () => {
    const path = file();
    const s = SqliteBatchStore.open(path);
    const content = Buffer.from('{"custom_id":"a"}\n');
    const f = s.createFile({ tenant: "acme", purpose: "batch", filename: "in.jsonl", content }, T0 + 999);
    assert.match(f.id, /^file-[0-9A-Za-z]{24}$/);
    s.close();

    const r = SqliteBatchStore.open(path);
    const got = r.getFile("acme", f.id);
    assert.ok(got);
    assert.deepEqual(toFileObject(got), {
      id: f.id,
      object: "file",
      bytes: content.length,
      created_at: T0 / 1000,
      filename: "in.jsonl",
      purpose: "batch",
      status: "processed",
    });
    assert.deepEqual(r.fileContent("acme", f.id), content);
    assert.equal(r.deleteFile("acme", f.id), true);
    assert.equal(r.deleteFile("acme", f.id), false);
    assert.equal(r.getFile("acme", f.id), null);
    assert.equal(r.fileContent("acme", f.id), null);
    r.close();
  });

  it("refuses a file over maxBytes with a typed error, writing nothing", () => {
    const s = SqliteBatchStore.open(file());
    assert.throws(
      () =>
        s.createFile({
          tenant: "acme",
          purpose: "batch",
          filename: "big.jsonl",
          content: Buffer.alloc(11),
          maxBytes: 10,
        }),
      (e: unknown) => e instanceof FileTooLarge && e.code === "file_too_large" && e.bytes === 11,
    );
    assert.equal(s.listFiles("acme").data.length, 0);
    // At the cap is allowed.
    s.createFile({
      tenant: "acme",
      purpose: "batch",
      filename: "ok",
      content: Buffer.alloc(10),
      maxBytes: 10,
    });
    assert.equal(s.listFiles("acme").data.length, 1);
    s.close();
  });

  it("lists a tenant's files newest first, by purpose, with a cursor", () => {
    const s = SqliteBatchStore.open(file());
    const ids = [1, 2, 3].map(
      (i) =>
        s.createFile({ tenant: "acme", purpose: "batch", filename: `f${i}`, content: Buffer.from("x") }).id,
    );
    s.createFile({ tenant: "acme", purpose: "batch_output", filename: "out", content: Buffer.from("y") });
    s.createFile({ tenant: "other", purpose: "batch", filename: "theirs", content: Buffer.from("z") });

    const first = s.listFiles("acme", { purpose: "batch", limit: 2 });
    assert.deepEqual(
      first.data.map((f) => f.id),
      [ids[2], ids[1]],
    );
    assert.equal(first.object, "list");
    assert.equal(first.has_more, true);
    assert.equal(first.first_id, ids[2]);
    assert.equal(first.last_id, ids[1]);
    const second = s.listFiles("acme", { purpose: "batch", limit: 2, after: first.last_id! });
    assert.deepEqual(
      second.data.map((f) => f.id),
      [ids[0]],
    );
    assert.equal(second.has_more, false);
    assert.equal(s.listFiles("acme").data.length, 4);
    s.close();
  });
});

describe("batch store: batches", () => {
  it("creates a batch with its lines pending, read back after a reopen as OpenAI's batch object", () => {
    const path = file();
    const s = SqliteBatchStore.open(path);
    const b = s.createBatch(
      {
        tenant: "acme",
        endpoint: ENDPOINT,
        inputFileId: "file-input",
        completionWindowMs: DAY,
        metadata: { job: "nightly" },
        lines: linesOf(3),
      },
      T0,
    );
    assert.match(b.id, /^batch_[0-9a-f]{32}$/);
    s.close();

    const r = SqliteBatchStore.open(path);
    const o = r.batchObject("acme", b.id);
    assert.deepEqual(o, {
      id: b.id,
      object: "batch",
      endpoint: ENDPOINT,
      errors: null,
      input_file_id: "file-input",
      completion_window: "24h",
      status: "in_progress",
      output_file_id: null,
      error_file_id: null,
      created_at: T0 / 1000,
      in_progress_at: T0 / 1000,
      expires_at: T0 / 1000 + 86_400,
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      request_counts: { total: 3, completed: 0, failed: 0 },
      metadata: { job: "nightly" },
    });
    const line = r.getLine(b.id, 2);
    assert.ok(line);
    assert.equal(line.state, "pending");
    assert.equal(line.custom_id, "req-2");
    assert.deepEqual(JSON.parse(line.body), linesOf(3)[1]!.body);
    r.close();
  });

  it("records a batch that failed validation with its errors and no lines", () => {
    const s = SqliteBatchStore.open(file());
    const errors = {
      object: "list" as const,
      data: [{ code: "invalid_json", message: "line 2 is not JSON", param: null, line: 2 }],
    };
    const b = s.createFailedBatch(
      { tenant: "acme", endpoint: ENDPOINT, inputFileId: "file-input", completionWindowMs: DAY, errors },
      T0,
    );
    const o = s.batchObject("acme", b.id)!;
    assert.equal(o.status, "failed");
    assert.equal(o.failed_at, T0 / 1000);
    assert.equal(o.in_progress_at, null);
    assert.deepEqual(o.errors, errors);
    assert.deepEqual(o.request_counts, { total: 0, completed: 0, failed: 0 });
    assert.deepEqual(s.claimLines("w", 10, LEASE, T0), []);
    assert.deepEqual(s.finalizeReady(T0 + 1000), [], "a failed batch is already final");
    s.close();
  });

  it("is all or nothing: a duplicate custom_id throws and leaves no batch and no line", () => {
    const path = file();
    const s = SqliteBatchStore.open(path);
    const lines = [...linesOf(3), { line: 4, customId: "req-2", body: { model: "m" } }];
    assert.throws(
      () =>
        s.createBatch(
          { tenant: "acme", endpoint: ENDPOINT, inputFileId: "f", completionWindowMs: DAY, lines },
          T0,
        ),
      /UNIQUE/,
    );
    assert.equal(s.listBatches("acme").data.length, 0);
    assert.deepEqual(s.claimLines("w", 10, LEASE, T0), []);
    s.close();
    const db = new Database(path, { readonly: true });
    const count = (t: string) => (db.prepare(`SELECT COUNT(*) AS c FROM ${t}`).get() as { c: number }).c;
    assert.equal(count("batches"), 0);
    assert.equal(count("batch_lines"), 0);
    db.close();
  });

  it("lists a tenant's batches newest first, 20 a page unless told, with has_more and a cursor", () => {
    const s = SqliteBatchStore.open(file());
    const ids = Array.from({ length: 25 }, () => newBatch(s, 1).id);
    newBatch(s, 1, { tenant: "other" });

    const p1 = s.listBatches("acme");
    assert.equal(p1.data.length, 20);
    assert.deepEqual(
      p1.data.map((b) => b.id),
      ids.slice(5).reverse(),
    );
    assert.equal(p1.has_more, true);
    assert.equal(p1.first_id, ids[24]);
    assert.equal(p1.last_id, ids[5]);
    assert.equal(p1.data[0]!.object, "batch");
    assert.deepEqual(p1.data[0]!.request_counts, { total: 1, completed: 0, failed: 0 });

    const p2 = s.listBatches("acme", { limit: 3, after: p1.last_id! });
    assert.deepEqual(
      p2.data.map((b) => b.id),
      [ids[4], ids[3], ids[2]],
    );
    assert.equal(p2.has_more, true);
    const p3 = s.listBatches("acme", { limit: 3, after: p2.last_id! });
    assert.deepEqual(
      p3.data.map((b) => b.id),
      [ids[1], ids[0]],
    );
    assert.equal(p3.has_more, false);
    const end = s.listBatches("acme", { after: ids[0]! });
    assert.deepEqual(end, { object: "list", data: [], first_id: null, last_id: null, has_more: false });

    assert.equal(s.listBatches("acme", { limit: 1000 }).data.length, 25, "limit capped at 100");
    assert.equal(s.listBatches("acme", { limit: 0 }).data.length, 1, "limit at least 1");
    s.close();
  });

  it("shows a tenant nothing of another tenant's files and batches", () => {
    const s = SqliteBatchStore.open(file());
    const f = s.createFile({ tenant: "acme", purpose: "batch", filename: "in", content: Buffer.from("x") });
    const b = newBatch(s, 2);

    assert.equal(s.getFile("rival", f.id), null);
    assert.equal(s.fileContent("rival", f.id), null);
    assert.equal(s.deleteFile("rival", f.id), false);
    assert.ok(s.getFile("acme", f.id), "a wrong tenant's delete leaves the file");
    assert.equal(s.getBatch("rival", b.id), null);
    assert.equal(s.batchObject("rival", b.id), null);
    assert.equal(s.cancelBatch("rival", b.id, T0), null);
    assert.equal(s.getBatch("acme", b.id)!.status, "in_progress", "a wrong tenant's cancel does nothing");
    assert.equal(s.listFiles("rival").data.length, 0);
    assert.equal(s.listBatches("rival").data.length, 0);
    assert.equal(s.listBatches("rival", { after: b.id }).data.length, 0, "another tenant's id as a cursor");

    // The output files of a batch are its tenant's.
    finishAll(s, "w", s.claimLines("w", 10, LEASE, T0), T0);
    s.finalizeReady(T0);
    const out = s.getBatch("acme", b.id)!.output_file_id!;
    assert.ok(s.getFile("acme", out));
    assert.equal(s.getFile("rival", out), null);
    assert.equal(s.fileContent("rival", out), null);
    s.close();
  });
});

describe("batch store: running lines", () => {
  it("claims in line order, and finalizes output in line order with each custom_id once", () => {
    const path = file();
    const s = SqliteBatchStore.open(path);
    const b = newBatch(s, 5);
    const first = s.claimLines("w1", 3, LEASE, T0);
    assert.deepEqual(
      first.map((c) => c.line),
      [1, 2, 3],
    );
    assert.deepEqual(
      { tenant: first[0]!.tenant, endpoint: first[0]!.endpoint, attempts: first[0]!.attempts },
      { tenant: "acme", endpoint: ENDPOINT, attempts: 1 },
    );
    assert.equal(first[0]!.leaseUntil, T0 + LEASE);
    assert.deepEqual(JSON.parse(first[0]!.body), linesOf(1)[0]!.body);
    const rest = s.claimLines("w1", 10, LEASE, T0);
    assert.deepEqual(
      rest.map((c) => c.line),
      [4, 5],
    );
    assert.deepEqual(
      s.claimLines("w1", 10, LEASE, T0),
      [],
      "running lines under a live lease are not claimed",
    );
    assert.deepEqual(s.finalizeReady(T0), [], "not done while lines run");

    // Answers arrive out of order; line 4 fails.
    for (const line of [5, 3, 1, 2]) {
      assert.ok(s.finishLine("w1", b.id, line, { state: "succeeded", result: ok(`req-${line}`) }, T0 + 10));
    }
    assert.ok(s.finishLine("w1", b.id, 4, { state: "failed", result: bad("req-4") }, T0 + 10));
    assert.equal(
      s.finishLine("w1", b.id, 4, { state: "succeeded", result: ok("req-4") }, T0 + 11),
      false,
      "a line is finished once",
    );
    assert.deepEqual(s.counts(b.id), { total: 5, completed: 4, failed: 1 });

    assert.deepEqual(s.finalizeReady(T0 + 2000), [b.id]);
    assert.deepEqual(s.finalizeReady(T0 + 3000), [], "finalized once");
    s.close();

    const r = SqliteBatchStore.open(path);
    const o = r.batchObject("acme", b.id)!;
    assert.equal(o.status, "completed");
    assert.equal(o.completed_at, T0 / 1000 + 2);
    assert.equal(o.finalizing_at, T0 / 1000 + 2);
    assert.deepEqual(o.request_counts, { total: 5, completed: 4, failed: 1 });
    const outFile = r.getFile("acme", o.output_file_id!)!;
    assert.equal(outFile.purpose, "batch_output");
    assert.equal(outFile.filename, `${b.id}_output.jsonl`);
    const errFile = r.getFile("acme", o.error_file_id!)!;
    assert.equal(errFile.filename, `${b.id}_error.jsonl`);
    const out = records(r.fileContent("acme", outFile.id));
    const err = records(r.fileContent("acme", errFile.id));
    assert.deepEqual(
      out,
      [1, 2, 3, 5].map((i) => ok(`req-${i}`)),
    );
    assert.deepEqual(err, [bad("req-4")]);
    const ids = [...out, ...err].map((x) => x.custom_id).sort();
    assert.deepEqual(ids, ["req-1", "req-2", "req-3", "req-4", "req-5"]);
    r.close();
  });

  it("writes no error file when every line succeeded", () => {
    const s = SqliteBatchStore.open(file());
    const b = newBatch(s, 2);
    finishAll(s, "w", s.claimLines("w", 10, LEASE, T0), T0);
    s.finalizeReady(T0);
    const row = s.getBatch("acme", b.id)!;
    assert.equal(row.status, "completed");
    assert.equal(row.error_file_id, null);
    assert.equal(records(s.fileContent("acme", row.output_file_id!)).length, 2);
    s.close();
  });

  it("gives an expired lease to another owner, and refuses the first owner's late answer", () => {
    const s = SqliteBatchStore.open(file());
    const b = newBatch(s, 1);
    const [a] = s.claimLines("a", 1, LEASE, T0);
    assert.ok(a);
    assert.deepEqual(s.claimLines("b", 1, LEASE, T0 + LEASE), [], "the lease holds up to its end");
    const [taken] = s.claimLines("b", 1, LEASE, T0 + LEASE + 1);
    assert.ok(taken);
    assert.equal(taken.line, 1);
    assert.equal(taken.attempts, 2);

    assert.deepEqual(s.renewLeases("a", [{ batchId: b.id, line: 1 }], LEASE, T0 + LEASE + 2), [
      { batchId: b.id, line: 1 },
    ]);
    assert.equal(
      s.finishLine("a", b.id, 1, { state: "succeeded", result: ok("req-1", "late") }, T0 + LEASE + 3),
      false,
    );
    assert.equal(
      s.finishLine("b", b.id, 1, { state: "succeeded", result: ok("req-1", "b") }, T0 + LEASE + 4),
      true,
    );
    assert.equal(
      s.finishLine("a", b.id, 1, { state: "succeeded", result: ok("req-1", "late") }, T0 + LEASE + 5),
      false,
    );
    s.finalizeReady(T0 + LEASE + 6);
    const out = records(s.fileContent("acme", s.getBatch("acme", b.id)!.output_file_id!));
    assert.deepEqual(out, [ok("req-1", "b")]);
    assert.deepEqual(s.counts(b.id), { total: 1, completed: 1, failed: 0 });
    s.close();
  });

  it("keeps a renewed lease from being taken", () => {
    const s = SqliteBatchStore.open(file());
    const b = newBatch(s, 2);
    s.claimLines("a", 2, LEASE, T0);
    const lost = s.renewLeases(
      "a",
      [
        { batchId: b.id, line: 1 },
        { batchId: b.id, line: 2 },
        { batchId: b.id, line: 9 },
      ],
      LEASE,
      T0 + LEASE - 1,
    );
    assert.deepEqual(lost, [{ batchId: b.id, line: 9 }]);
    assert.deepEqual(s.claimLines("b", 2, LEASE, T0 + LEASE + 1), [], "renewed until T0 + 2 leases");
    assert.equal(s.getLine(b.id, 1)!.lease_until, T0 + 2 * LEASE - 1);
    s.close();
  });

  it("never hands a line to two store instances claiming in turn on one file", () => {
    const path = file();
    const one = SqliteBatchStore.open(path);
    const two = SqliteBatchStore.open(path);
    const b1 = newBatch(one, 37);
    const b2 = newBatch(two, 23);
    const seen = new Map<string, string>();
    for (let round = 0; ; round++) {
      const got = [
        ...one.claimLines("one", 3, LEASE, T0 + round).map((c) => ({ c, who: "one", s: one })),
        ...two.claimLines("two", 2, LEASE, T0 + round).map((c) => ({ c, who: "two", s: two })),
      ];
      if (got.length === 0) break;
      for (const { c, who, s } of got) {
        const key = `${c.batchId}:${c.line}`;
        assert.equal(seen.get(key), undefined, `${key} claimed twice`);
        seen.set(key, who);
        // Each instance finishes through the other half of the time: the file is one store.
        const by = round % 2 === 0 ? s : s === one ? two : one;
        assert.ok(by.finishLine(who, c.batchId, c.line, { state: "succeeded", result: ok(c.customId) }, T0));
      }
    }
    assert.equal(seen.size, 60);
    assert.ok([...seen.values()].includes("one") && [...seen.values()].includes("two"));
    assert.deepEqual(two.finalizeReady(T0 + 1000).sort(), [b1.id, b2.id].sort());
    assert.deepEqual(one.finalizeReady(T0 + 1000), [], "the other instance finds them final");
    assert.equal(one.listFiles("acme", { purpose: "batch_output" }).data.length, 2, "one output file each");
    one.close();
    two.close();
  });

  it("never hands a line to two processes' stores claiming at the same time (worker threads)", async () => {
    const path = file();
    const s = SqliteBatchStore.open(path);
    const b = newBatch(s, 300);
    const url = new URL("./batch-store.js", import.meta.url).href;
    // Each worker opens its own connection, as a replica would, and claims and finishes until none is left.
    const code = `
      const { workerData, parentPort } = require("node:worker_threads");
      import(workerData.url).then(({ SqliteBatchStore }) => {
        const s = SqliteBatchStore.open(workerData.path);
        const claimed = [];
        let refused = 0;
        for (;;) {
          const got = s.claimLines(workerData.owner, 4, 60000, workerData.now);
          if (got.length === 0) break;
          for (const c of got) {
            claimed.push(c.batchId + ":" + c.line);
            const result = { id: "batch_req_" + c.line, custom_id: c.customId, response: null, error: null };
            if (!s.finishLine(workerData.owner, c.batchId, c.line, { state: "succeeded", result }, workerData.now)) refused++;
          }
        }
        s.close();
        parentPort.postMessage({ claimed, refused });
      });`;
    const run = (owner: string) =>
      new Promise<{ claimed: string[]; refused: number }>((resolve, reject) => {
        const w = new Worker(code, { eval: true, workerData: { url, path, owner, now: T0 } });
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
    assert.deepEqual(s.counts(b.id), { total: 300, completed: 300, failed: 0 });
    s.close();
  });

  it("after a crash, claims the dead replica's unfinished lines again once its leases end, and keeps what it finished", () => {
    const path = file();
    const s = SqliteBatchStore.open(path);
    const b = newBatch(s, 6);
    const claimed = s.claimLines("dead", 4, LEASE, T0);
    finishAll(s, "dead", claimed.slice(0, 2), T0 + 5);
    s.close(); // no releaseOwner: the process died

    const r = SqliteBatchStore.open(path);
    const soon = r.claimLines("alive", 10, LEASE, T0 + 1000);
    assert.deepEqual(
      soon.map((c) => c.line),
      [5, 6],
      "only the never-claimed lines while the dead claims' leases run",
    );
    finishAll(r, "alive", soon, T0 + 1001);
    const later = r.claimLines("alive", 10, LEASE, T0 + LEASE + 1);
    assert.deepEqual(
      later.map((c) => [c.line, c.attempts]),
      [
        [3, 2],
        [4, 2],
      ],
    );
    finishAll(r, "alive", later, T0 + LEASE + 2);
    assert.deepEqual(r.finalizeReady(T0 + LEASE + 3), [b.id]);
    const out = records(r.fileContent("acme", r.getBatch("acme", b.id)!.output_file_id!));
    assert.deepEqual(
      out.map((x) => x.custom_id),
      ["req-1", "req-2", "req-3", "req-4", "req-5", "req-6"],
    );
    r.close();
  });

  it("backs a retried line off until not_before, counting its attempt", () => {
    const s = SqliteBatchStore.open(file());
    const b = newBatch(s, 1);
    s.claimLines("w", 1, LEASE, T0);
    assert.equal(s.retryLine("other", b.id, 1, T0 + 5000), false, "only the owner retries");
    assert.equal(s.retryLine("w", b.id, 1, T0 + 5000), true);
    assert.equal(s.retryLine("w", b.id, 1, T0 + 5000), false, "no longer claimed");
    assert.equal(s.getLine(b.id, 1)!.state, "pending");
    assert.deepEqual(s.claimLines("w", 1, LEASE, T0 + 4999), []);
    assert.deepEqual(s.finalizeReady(T0 + 4999), [], "a line waiting for its retry is not done");
    const [again] = s.claimLines("w", 1, LEASE, T0 + 5000);
    assert.ok(again);
    assert.equal(again.attempts, 2);
    s.close();
  });

  it("releases an owner's running lines at shutdown, uncounting the attempt", () => {
    const s = SqliteBatchStore.open(file());
    const b = newBatch(s, 3);
    s.claimLines("a", 2, LEASE, T0);
    s.claimLines("b", 1, LEASE, T0);
    assert.equal(s.releaseOwner("a"), 2);
    assert.equal(s.getLine(b.id, 3)!.claimed_by, "b", "other owners' claims stay");
    const got = s.claimLines("c", 10, LEASE, T0 + 1);
    assert.deepEqual(
      got.map((c) => [c.line, c.attempts]),
      [
        [1, 1],
        [2, 1],
      ],
    );
    assert.equal(s.finishLine("a", b.id, 1, { state: "succeeded", result: ok("req-1") }, T0 + 2), false);
    s.close();
  });
});

describe("batch store: cancel and expiry", () => {
  it("cancels: pending lines are never claimed, running ones may finish, and the rest go to the error file", () => {
    const s = SqliteBatchStore.open(file());
    const b = newBatch(s, 4);
    const [running] = s.claimLines("w", 1, LEASE, T0);
    assert.ok(running);
    const c = s.cancelBatch("acme", b.id, T0 + 1000)!;
    assert.equal(c.status, "cancelling");
    assert.equal(c.cancelling_at, T0 / 1000 + 1);
    assert.deepEqual(s.claimLines("w", 10, LEASE, T0 + 1000), [], "pending lines of a cancelling batch");
    assert.deepEqual(s.finalizeReady(T0 + 2000), [], "waits for the running line");
    assert.equal(s.cancelBatch("acme", b.id, T0 + 2500)!.cancelling_at, T0 / 1000 + 1, "a second cancel");

    assert.ok(s.finishLine("w", b.id, 1, { state: "succeeded", result: ok("req-1") }, T0 + 3000));
    assert.deepEqual(s.finalizeReady(T0 + 4000), [b.id]);
    const o = s.batchObject("acme", b.id)!;
    assert.equal(o.status, "cancelled");
    assert.equal(o.cancelled_at, T0 / 1000 + 4);
    assert.equal(o.completed_at, null);
    assert.deepEqual(o.request_counts, { total: 4, completed: 1, failed: 0 });
    assert.deepEqual(records(s.fileContent("acme", o.output_file_id!)), [ok("req-1")]);
    const err = records(s.fileContent("acme", o.error_file_id!));
    assert.deepEqual(
      err.map((x) => [x.custom_id, x.response, x.error.code]),
      [
        ["req-2", null, "batch_cancelled"],
        ["req-3", null, "batch_cancelled"],
        ["req-4", null, "batch_cancelled"],
      ],
    );
    for (const x of err) assert.match(x.id, /^batch_req_[0-9a-f]{32}$/);
    assert.equal(s.getLine(b.id, 2)!.state, "closed");
    assert.equal(s.cancelBatch("acme", b.id, T0 + 5000)!.status, "cancelled", "a final batch is left as is");
    s.close();
  });

  it("does not wait for a cancelled batch's line whose lease ran out, and refuses its late answer", () => {
    const s = SqliteBatchStore.open(file());
    const b = newBatch(s, 2);
    s.claimLines("w", 1, LEASE, T0);
    s.cancelBatch("acme", b.id, T0);
    assert.deepEqual(s.finalizeReady(T0 + LEASE + 1), [b.id]);
    assert.equal(
      s.finishLine("w", b.id, 1, { state: "succeeded", result: ok("req-1") }, T0 + LEASE + 2),
      false,
    );
    const o = s.batchObject("acme", b.id)!;
    assert.deepEqual(records(s.fileContent("acme", o.output_file_id!)), []);
    assert.deepEqual(
      records(s.fileContent("acme", o.error_file_id!)).map((x) => x.custom_id),
      ["req-1", "req-2"],
    );
    s.close();
  });

  it("expires: past the window nothing is claimed, running lines may finish, the rest go to the error file", () => {
    const path = file();
    const s = SqliteBatchStore.open(path);
    const b = newBatch(s, 3, { windowMs: 60_000 });
    const [first] = s.claimLines("w", 1, 120_000, T0);
    assert.ok(first);
    assert.deepEqual(s.claimLines("w", 10, LEASE, T0 + 60_000), [], "not claimed past the window");
    assert.deepEqual(s.expireDue(T0 + 59_999), []);
    assert.deepEqual(s.expireDue(T0 + 60_000), [b.id]);
    const f = s.getBatch("acme", b.id)!;
    assert.equal(f.status, "finalizing");
    assert.equal(f.expired_at, T0 / 1000 + 60);
    assert.equal(f.finalizing_at, T0 / 1000 + 60);
    assert.deepEqual(s.finalizeReady(T0 + 61_000), [], "waits for the running line");
    assert.ok(s.finishLine("w", b.id, 1, { state: "succeeded", result: ok("req-1") }, T0 + 62_000));
    s.close();

    const r = SqliteBatchStore.open(path);
    assert.deepEqual(r.finalizeReady(T0 + 63_000), [b.id]);
    const o = r.batchObject("acme", b.id)!;
    assert.equal(o.status, "expired");
    assert.equal(o.expired_at, T0 / 1000 + 60);
    assert.deepEqual(o.request_counts, { total: 3, completed: 1, failed: 0 });
    assert.deepEqual(records(r.fileContent("acme", o.output_file_id!)), [ok("req-1")]);
    assert.deepEqual(
      records(r.fileContent("acme", o.error_file_id!)).map((x) => [x.custom_id, x.error.code]),
      [
        ["req-2", "batch_expired"],
        ["req-3", "batch_expired"],
      ],
    );
    r.close();
  });

  it("finalizeReady expires a batch past its window by itself; one whose lines all finished completes", () => {
    const s = SqliteBatchStore.open(file());
    const late = newBatch(s, 1, { windowMs: 1000 });
    const done = newBatch(s, 1, { windowMs: 1000 });
    const got = s.claimLines("w", 2, LEASE, T0);
    assert.deepEqual(
      got.map((c) => c.batchId),
      [late.id, done.id],
      "oldest batch first",
    );
    assert.ok(s.finishLine("w", done.id, 1, { state: "succeeded", result: ok("req-1") }, T0));
    s.releaseOwner("w"); // late's line back to pending, unrun when the window ends
    assert.deepEqual(s.finalizeReady(T0 + 5000), [late.id, done.id]);
    assert.equal(s.getBatch("acme", late.id)!.status, "expired");
    assert.equal(s.getBatch("acme", done.id)!.status, "completed");
    s.close();
  });

  it("keeps the batch row's counts equal to its lines' states", () => {
    const path = file();
    const s = SqliteBatchStore.open(path);
    const b = newBatch(s, 10);
    const got = s.claimLines("w", 10, LEASE, T0);
    got.forEach((c, i) => {
      const failed = i % 3 === 0;
      s.finishLine(
        "w",
        c.batchId,
        c.line,
        failed
          ? { state: "failed", result: bad(c.customId) }
          : { state: "succeeded", result: ok(c.customId) },
        T0,
      );
      s.finishLine("w", c.batchId, c.line, { state: "succeeded", result: ok(c.customId) }, T0);
    });
    const db = new Database(path, { readonly: true });
    const derived = db
      .prepare(
        "SELECT COUNT(*) AS total, SUM(state = 'succeeded') AS completed, SUM(state = 'failed') AS failed FROM batch_lines WHERE batch_id = ?",
      )
      .get(b.id);
    db.close();
    assert.deepEqual({ ...(derived as object) }, s.counts(b.id));
    assert.deepEqual(s.counts(b.id), { total: 10, completed: 6, failed: 4 });
    assert.deepEqual(toBatchObject(s.getBatch("acme", b.id)!).request_counts, s.counts(b.id));
    s.close();
  });
});
