// The batch store contract's cases for how a job ends (batch-store-contract.ts registers them): cancel,
// the end of the completion window, finalizeReady on its own, and the counts kept equal to the lines.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { countsOf, toBatchObject } from "../batch/batch-store.js";
import {
  bad,
  batchOf,
  type ContractContext,
  fileRecords,
  LEASE,
  newBatch,
  ok,
  T0,
} from "./batch-store-fixtures.js";

export function endingCases(ctx: ContractContext): void {
  describe("cancel and expiry", () => {
    it("cancels: pending lines are never claimed, running ones may finish, the rest go to the error file", async () => {
      const s = await ctx.open();
      const b = await newBatch(s, 4);
      assert.equal((await s.claimLines("w", 1, LEASE, T0)).length, 1);
      const c = (await s.cancelBatch("acme", b.id, T0 + 1000))!;
      assert.deepEqual([c.status, c.cancelling_at], ["cancelling", T0 / 1000 + 1]);
      assert.deepEqual(
        await s.claimLines("w", 10, LEASE, T0 + 1000),
        [],
        "pending lines of a cancelling batch",
      );
      assert.deepEqual(await s.finalizeReady(T0 + 2000), [], "waits for the running line");
      assert.equal(
        (await s.cancelBatch("acme", b.id, T0 + 2500))!.cancelling_at,
        T0 / 1000 + 1,
        "a second cancel",
      );

      assert.ok(await s.finishLine("w", b.id, 1, { state: "succeeded", result: ok("req-1") }, T0 + 3000));
      assert.deepEqual(await s.finalizeReady(T0 + 4000), [b.id]);
      const o = toBatchObject(await batchOf(s, b.id));
      assert.deepEqual([o.status, o.cancelled_at, o.completed_at], ["cancelled", T0 / 1000 + 4, null]);
      assert.deepEqual(o.request_counts, { total: 4, completed: 1, failed: 0 });
      assert.deepEqual(await fileRecords(s, b.id, "output"), [ok("req-1")]);
      const err = await fileRecords(s, b.id, "error");
      assert.deepEqual(
        err.map((x) => [x.custom_id, x.response, x.error?.code]),
        [
          ["req-2", null, "batch_cancelled"],
          ["req-3", null, "batch_cancelled"],
          ["req-4", null, "batch_cancelled"],
        ],
      );
      for (const x of err) assert.match(x.id, /^batch_req_[0-9a-f]{32}$/);
      assert.equal(new Set(err.map((x) => x.id)).size, 3, "each record its own id");
      const closed = (await s.getLine(b.id, 2))!;
      assert.equal(closed.state, "closed");
      assert.deepEqual(JSON.parse(closed.result!), err[0], "the closed line keeps its record");
      assert.equal(
        (await s.cancelBatch("acme", b.id, T0 + 5000))!.status,
        "cancelled",
        "a final batch is left as is",
      );
    });

    it("does not wait for a cancelled batch's line whose lease ran out, and refuses its late answer", async () => {
      const s = await ctx.open();
      const b = await newBatch(s, 2);
      await s.claimLines("w", 1, LEASE, T0);
      await s.cancelBatch("acme", b.id, T0);
      assert.deepEqual(await s.finalizeReady(T0 + LEASE + 1), [b.id]);
      const late = await s.finishLine(
        "w",
        b.id,
        1,
        { state: "succeeded", result: ok("req-1") },
        T0 + LEASE + 2,
      );
      assert.equal(late, false);
      assert.deepEqual(await fileRecords(s, b.id, "output"), []);
      assert.deepEqual(
        (await fileRecords(s, b.id, "error")).map((x) => x.custom_id),
        ["req-1", "req-2"],
      );
    });

    it("puts failed and closed lines in the error file in line order", async () => {
      const s = await ctx.open();
      const b = await newBatch(s, 4);
      const got = await s.claimLines("w", 3, LEASE, T0);
      assert.ok(await s.finishLine("w", b.id, 3, { state: "failed", result: bad("req-3") }, T0));
      assert.ok(await s.finishLine("w", b.id, 2, { state: "succeeded", result: ok("req-2") }, T0));
      assert.equal(got.length, 3);
      await s.cancelBatch("acme", b.id, T0);
      assert.deepEqual(await s.finalizeReady(T0 + LEASE + 1), [b.id]);
      assert.deepEqual(
        (await fileRecords(s, b.id, "error")).map((x) => [
          x.custom_id,
          x.error?.code ?? x.response?.status_code,
        ]),
        [
          ["req-1", "batch_cancelled"],
          ["req-3", 400],
          ["req-4", "batch_cancelled"],
        ],
      );
      assert.deepEqual(countsOf(await batchOf(s, b.id)), { total: 4, completed: 1, failed: 1 });
    });

    it("expires: past the window nothing is claimed, running lines may finish, the rest go to the error file", async () => {
      const s = await ctx.open();
      const b = await newBatch(s, 3, { windowMs: 60_000 });
      assert.equal((await s.claimLines("w", 1, 120_000, T0)).length, 1);
      assert.deepEqual(await s.claimLines("w", 10, LEASE, T0 + 60_000), [], "not claimed past the window");
      assert.deepEqual(await s.expireDue(T0 + 59_999), []);
      assert.deepEqual(await s.expireDue(T0 + 60_000), [b.id]);
      assert.deepEqual(await s.expireDue(T0 + 60_001), [], "expired once");
      const f = await batchOf(s, b.id);
      assert.deepEqual(
        [f.status, f.expired_at, f.finalizing_at],
        ["finalizing", T0 / 1000 + 60, T0 / 1000 + 60],
      );
      assert.deepEqual(await s.finalizeReady(T0 + 61_000), [], "waits for the running line");
      assert.ok(await s.finishLine("w", b.id, 1, { state: "succeeded", result: ok("req-1") }, T0 + 62_000));

      const r = await ctx.open();
      assert.deepEqual(await r.finalizeReady(T0 + 63_000), [b.id]);
      const o = toBatchObject(await batchOf(r, b.id));
      assert.deepEqual([o.status, o.expired_at], ["expired", T0 / 1000 + 60]);
      assert.deepEqual(o.request_counts, { total: 3, completed: 1, failed: 0 });
      assert.deepEqual(await fileRecords(r, b.id, "output"), [ok("req-1")]);
      assert.deepEqual(
        (await fileRecords(r, b.id, "error")).map((x) => [x.custom_id, x.error?.code]),
        [
          ["req-2", "batch_expired"],
          ["req-3", "batch_expired"],
        ],
      );
    });

    it("finalizeReady expires a batch past its window by itself; one whose lines all finished completes", async () => {
      const s = await ctx.open();
      const late = await newBatch(s, 1, { windowMs: 1000 });
      const done = await newBatch(s, 1, { windowMs: 1000 });
      const got = await s.claimLines("w", 2, LEASE, T0);
      assert.deepEqual(
        got.map((c) => c.batchId),
        [late.id, done.id],
        "oldest batch first",
      );
      assert.ok(await s.finishLine("w", done.id, 1, { state: "succeeded", result: ok("req-1") }, T0));
      await s.releaseOwner("w"); // late's line back to pending, unrun when the window ends
      assert.deepEqual(await s.finalizeReady(T0 + 5000), [late.id, done.id]);
      assert.equal((await batchOf(s, late.id)).status, "expired");
      assert.equal((await batchOf(s, done.id)).status, "completed");
    });

    it("keeps the batch's counts equal to its lines' states", async () => {
      const s = await ctx.open();
      const b = await newBatch(s, 10);
      const got = await s.claimLines("w", 10, LEASE, T0);
      for (const [i, c] of got.entries()) {
        const failed = i % 3 === 0;
        const outcome = failed
          ? { state: "failed" as const, result: bad(c.customId) }
          : { state: "succeeded" as const, result: ok(c.customId) };
        await s.finishLine("w", c.batchId, c.line, outcome, T0);
        await s.finishLine("w", c.batchId, c.line, { state: "succeeded", result: ok(c.customId) }, T0);
      }
      const states = await Promise.all(got.map(async (c) => (await s.getLine(b.id, c.line))!.state));
      const derived = {
        total: states.length,
        completed: states.filter((x) => x === "succeeded").length,
        failed: states.filter((x) => x === "failed").length,
      };
      const row = await batchOf(s, b.id);
      assert.deepEqual(countsOf(row), derived);
      assert.deepEqual(derived, { total: 10, completed: 6, failed: 4 });
      assert.deepEqual(toBatchObject(row).request_counts, derived);
    });
  });
}
