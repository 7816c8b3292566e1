// The contract every BatchStore keeps (src/batch/batch-store.ts), as node:test cases a store's own test
// registers with `batchStoreContract(name, open, cleanup)`: files, batches, the lines' claims and leases,
// cancel, expiry and finalization, with several instances of the store on the same state standing for
// replicas. Every time is a fixed `now` (T0 + …), so nothing depends on the wall clock. What only one
// store can show (SQLite's worker threads, Redis's TTLs, a writer that dies mid-creation) stays in that
// store's test.

import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { type BatchStore, FileTooLarge, toBatchObject, toFileObject } from "../batch/batch-store.js";
import { endingCases } from "./batch-store-contract-endings.js";
import { lineCases } from "./batch-store-contract-lines.js";
import {
  type ContractContext,
  DAY,
  ENDPOINT,
  finishAll,
  LEASE,
  linesOf,
  newBatch,
  T0,
} from "./batch-store-fixtures.js";

/**
 * Registers the contract's cases for the store `name`. `open` gives a new instance on the store's
 * current state (instances opened in one case share it, as replicas do); the contract closes them after
 * each case, then calls `cleanup`, which must leave the next case an empty store (a new file, a new
 * namespace).
 *
 * @example
 * batchStoreContract("redis", async () => new RedisBatchStore({ url, namespace }), async () => { namespace = next(); });
 */
export function batchStoreContract(
  name: string,
  open: () => Promise<BatchStore>,
  cleanup?: () => Promise<void>,
): void {
  describe(`batch store contract: ${name}`, () => {
    const opened: BatchStore[] = [];
    const ctx: ContractContext = {
      open: async () => {
        const s = await open();
        opened.push(s);
        return s;
      },
    };
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
      await cleanup?.();
    });
    fileCases(ctx);
    batchCases(ctx);
    lineCases(ctx);
    endingCases(ctx);
  });
}

function fileCases(ctx: ContractContext): void {
  describe("files", () => {
    it("stores a file's bytes (binary-safe), read back by another instance, and deletes it", async () => {
      const s = await ctx.open();
      const content = Buffer.concat([
        Buffer.from('{"custom_id":"a"}\n'),
        Buffer.from([0, 255, 254, 10, 128]),
      ]);
      const f = await s.createFile(
        { tenant: "acme", purpose: "batch", filename: "in.jsonl", content },
        T0 + 999,
      );
      assert.match(f.id, /^file-[0-9A-Za-z]{24}$/);
      await s.close();

      const r = await ctx.open();
      const got = await r.getFile("acme", f.id);
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
      assert.deepEqual(await r.fileContent("acme", f.id), content);
      assert.equal(await r.deleteFile("acme", f.id), true);
      assert.equal(await r.deleteFile("acme", f.id), false);
      assert.equal(await r.getFile("acme", f.id), null);
      assert.equal(await r.fileContent("acme", f.id), null);
    });

    it("stores a file of several MiB, and an empty one", async () => {
      const s = await ctx.open();
      const big = Buffer.alloc(3 * 1024 * 1024 + 17, 0);
      for (let i = 0; i < big.length; i += 4093) big[i] = i % 251;
      const f = await s.createFile({ tenant: "acme", purpose: "batch", filename: "big", content: big }, T0);
      assert.equal(f.bytes, big.length);
      assert.ok((await s.fileContent("acme", f.id))?.equals(big), "the same bytes back");
      const e = await s.createFile({
        tenant: "acme",
        purpose: "batch",
        filename: "e",
        content: Buffer.alloc(0),
      });
      assert.deepEqual(await s.fileContent("acme", e.id), Buffer.alloc(0));
    });

    it("refuses a file over maxBytes with a typed error, writing nothing", async () => {
      const s = await ctx.open();
      const file = (bytes: number) => ({
        tenant: "acme",
        purpose: "batch" as const,
        filename: "f",
        content: Buffer.alloc(bytes),
        maxBytes: 10,
      });
      await assert.rejects(
        s.createFile(file(11)),
        (e: unknown) => e instanceof FileTooLarge && e.code === "file_too_large" && e.bytes === 11,
      );
      assert.equal((await s.listFiles("acme")).data.length, 0);
      await s.createFile(file(10)); // at the cap is allowed
      assert.equal((await s.listFiles("acme")).data.length, 1);
    });

    it("lists a tenant's files newest first, by purpose, with a cursor", async () => {
      const s = await ctx.open();
      const add = async (tenant: string, purpose: "batch" | "batch_output", filename: string) =>
        (await s.createFile({ tenant, purpose, filename, content: Buffer.from("x") }, T0)).id;
      const ids = [
        await add("acme", "batch", "f1"),
        await add("acme", "batch", "f2"),
        await add("acme", "batch", "f3"),
      ];
      await add("acme", "batch_output", "out");
      await add("other", "batch", "theirs");

      const first = await s.listFiles("acme", { purpose: "batch", limit: 2 });
      assert.deepEqual(
        first.data.map((f) => f.id),
        [ids[2], ids[1]],
      );
      assert.deepEqual(
        [first.object, first.has_more, first.first_id, first.last_id],
        ["list", true, ids[2], ids[1]],
      );
      const second = await s.listFiles("acme", { purpose: "batch", limit: 2, after: first.last_id! });
      assert.deepEqual(
        second.data.map((f) => f.id),
        [ids[0]],
      );
      assert.equal(second.has_more, false);
      assert.equal((await s.listFiles("acme")).data.length, 4);
      assert.equal((await s.listFiles("acme", { purpose: "batch_output" })).data.length, 1);
    });
  });
}

function batchCases(ctx: ContractContext): void {
  describe("batches", () => {
    it("creates a batch with its lines pending, read back by another instance as OpenAI's batch object", async () => {
      const s = await ctx.open();
      const b = await s.createBatch(
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
      assert.equal(b.status, "in_progress");

      const r = await ctx.open();
      const row = await r.getBatch("acme", b.id);
      assert.ok(row);
      assert.deepEqual(toBatchObject(row), {
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
      const line = await r.getLine(b.id, 2);
      assert.ok(line);
      assert.deepEqual(
        [line.state, line.custom_id, line.attempts, line.claimed_by, line.result],
        ["pending", "req-2", 0, null, null],
      );
      assert.deepEqual(JSON.parse(line.body), linesOf(3)[1]!.body);
      assert.equal(await r.getLine(b.id, 4), null);
    });

    it("records a batch that failed validation with its errors and no lines", async () => {
      const s = await ctx.open();
      const errors = {
        object: "list" as const,
        data: [{ code: "invalid_json", message: "line 2 is not JSON", param: null, line: 2 }],
      };
      const b = await s.createFailedBatch(
        { tenant: "acme", endpoint: ENDPOINT, inputFileId: "file-input", completionWindowMs: DAY, errors },
        T0,
      );
      const o = toBatchObject((await s.getBatch("acme", b.id))!);
      assert.deepEqual([o.status, o.failed_at, o.in_progress_at], ["failed", T0 / 1000, null]);
      assert.deepEqual(o.errors, errors);
      assert.deepEqual(o.request_counts, { total: 0, completed: 0, failed: 0 });
      assert.deepEqual(await s.claimLines("w", 10, LEASE, T0), []);
      assert.deepEqual(await s.finalizeReady(T0 + 1000), [], "a failed batch is already final");
    });

    it("is all or nothing: a custom_id or a line number twice rejects and leaves no batch and no line", async () => {
      const s = await ctx.open();
      const job = (lines: ReturnType<typeof linesOf>) => ({
        tenant: "acme",
        endpoint: ENDPOINT,
        inputFileId: "f",
        completionWindowMs: DAY,
        lines,
      });
      await assert.rejects(s.createBatch(job([...linesOf(3), { line: 4, customId: "req-2", body: {} }]), T0));
      await assert.rejects(s.createBatch(job([...linesOf(3), { line: 2, customId: "other", body: {} }]), T0));
      assert.equal((await s.listBatches("acme")).data.length, 0);
      assert.deepEqual(await s.claimLines("w", 10, LEASE, T0), []);
      assert.deepEqual(await s.finalizeReady(T0 + DAY), []);
    });

    it("lists a tenant's batches newest first, 20 a page unless told, with has_more and a cursor", async () => {
      const s = await ctx.open();
      const ids: string[] = [];
      for (let i = 0; i < 25; i++) ids.push((await newBatch(s, 1)).id);
      await newBatch(s, 1, { tenant: "other" });

      const p1 = await s.listBatches("acme");
      assert.deepEqual(
        p1.data.map((b) => b.id),
        ids.slice(5).reverse(),
      );
      assert.deepEqual([p1.has_more, p1.first_id, p1.last_id], [true, ids[24], ids[5]]);
      assert.equal(p1.data[0]!.object, "batch");
      assert.deepEqual(p1.data[0]!.request_counts, { total: 1, completed: 0, failed: 0 });
      const p2 = await s.listBatches("acme", { limit: 3, after: p1.last_id! });
      assert.deepEqual(
        p2.data.map((b) => b.id),
        [ids[4], ids[3], ids[2]],
      );
      assert.equal(p2.has_more, true);
      const p3 = await s.listBatches("acme", { limit: 3, after: p2.last_id! });
      assert.deepEqual(
        p3.data.map((b) => b.id),
        [ids[1], ids[0]],
      );
      assert.equal(p3.has_more, false);
      const end = await s.listBatches("acme", { after: ids[0]! });
      assert.deepEqual(end, { object: "list", data: [], first_id: null, last_id: null, has_more: false });
      assert.equal((await s.listBatches("acme", { limit: 1000 })).data.length, 25, "limit capped at 100");
      assert.equal((await s.listBatches("acme", { limit: 0 })).data.length, 1, "limit at least 1");
    });

    it("shows a tenant nothing of another tenant's files and batches", async () => {
      const s = await ctx.open();
      const f = await s.createFile({
        tenant: "acme",
        purpose: "batch",
        filename: "in",
        content: Buffer.from("x"),
      });
      const b = await newBatch(s, 2);

      assert.equal(await s.getFile("rival", f.id), null);
      assert.equal(await s.fileContent("rival", f.id), null);
      assert.equal(await s.deleteFile("rival", f.id), false);
      assert.ok(await s.getFile("acme", f.id), "a wrong tenant's delete leaves the file");
      assert.equal(await s.getBatch("rival", b.id), null);
      assert.equal(await s.cancelBatch("rival", b.id, T0), null);
      assert.equal(
        (await s.getBatch("acme", b.id))!.status,
        "in_progress",
        "a wrong tenant's cancel does nothing",
      );
      assert.equal((await s.listFiles("rival")).data.length, 0);
      assert.equal(
        (await s.listFiles("rival", { after: f.id })).data.length,
        0,
        "another tenant's id as a cursor",
      );
      assert.equal((await s.listBatches("rival")).data.length, 0);
      assert.equal((await s.listBatches("rival", { after: b.id })).data.length, 0);

      await finishAll(s, "w", await s.claimLines("w", 10, LEASE, T0), T0);
      await s.finalizeReady(T0);
      const out = (await s.getBatch("acme", b.id))!.output_file_id!;
      assert.ok(await s.getFile("acme", out), "the output file is the batch's tenant's");
      assert.equal(await s.getFile("rival", out), null);
      assert.equal(await s.fileContent("rival", out), null);
    });
  });
}
