// The batch store contract's cases for running lines (batch-store-contract.ts registers them): claim
// order, leases taken over and renewed, several instances claiming in turn and all at once, a crash,
// retry, defer and release, and a job still being written never claimed.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type BatchStore, type ClaimedLine, countsOf } from "../batch/batch-store.js";
import {
  bad,
  batchOf,
  type ContractContext,
  DAY,
  ENDPOINT,
  fileRecords,
  finishAll,
  LEASE,
  linesOf,
  newBatch,
  ok,
  T0,
} from "./batch-store-fixtures.js";

export function lineCases(ctx: ContractContext): void {
  describe("running lines", () => {
    it("claims in line order, and finalizes output in line order with each custom_id once", async () => {
      const s = await ctx.open();
      const b = await newBatch(s, 5);
      const first = await s.claimLines("w1", 3, LEASE, T0);
      assert.deepEqual(
        first.map((c) => c.line),
        [1, 2, 3],
      );
      const c1 = first[0]!;
      assert.deepEqual(
        [c1.tenant, c1.endpoint, c1.attempts, c1.leaseUntil, c1.customId, c1.jobTask],
        ["acme", ENDPOINT, 1, T0 + LEASE, "req-1", null],
      );
      assert.deepEqual(JSON.parse(c1.body), linesOf(1)[0]!.body);
      assert.deepEqual(
        (await s.claimLines("w1", 10, LEASE, T0)).map((c) => c.line),
        [4, 5],
      );
      assert.deepEqual(
        await s.claimLines("w1", 10, LEASE, T0),
        [],
        "lines under a live lease are not claimed",
      );
      assert.deepEqual(await s.finalizeReady(T0), [], "not done while lines run");

      for (const line of [5, 3, 1, 2]) {
        const res = { state: "succeeded" as const, result: ok(`req-${line}`) };
        assert.ok(await s.finishLine("w1", b.id, line, res, T0 + 10));
      }
      assert.ok(await s.finishLine("w1", b.id, 4, { state: "failed", result: bad("req-4") }, T0 + 10));
      const again = await s.finishLine("w1", b.id, 4, { state: "succeeded", result: ok("req-4") }, T0 + 11);
      assert.equal(again, false, "a line is finished once");
      assert.deepEqual(countsOf(await batchOf(s, b.id)), { total: 5, completed: 4, failed: 1 });

      assert.deepEqual(await s.finalizeReady(T0 + 2000), [b.id]);
      assert.deepEqual(await s.finalizeReady(T0 + 3000), [], "finalized once");
      const r = await ctx.open();
      const row = await batchOf(r, b.id);
      assert.deepEqual(
        [row.status, row.completed_at, row.finalizing_at],
        ["completed", T0 / 1000 + 2, T0 / 1000 + 2],
      );
      assert.deepEqual(countsOf(row), { total: 5, completed: 4, failed: 1 });
      const outFile = (await r.getFile("acme", row.output_file_id!))!;
      assert.deepEqual([outFile.purpose, outFile.filename], ["batch_output", `${b.id}_output.jsonl`]);
      assert.equal((await r.getFile("acme", row.error_file_id!))!.filename, `${b.id}_error.jsonl`);
      const out = await fileRecords(r, b.id, "output");
      const err = await fileRecords(r, b.id, "error");
      assert.deepEqual(
        out,
        [1, 2, 3, 5].map((i) => ok(`req-${i}`)),
      );
      assert.deepEqual(err, [bad("req-4")]);
      assert.deepEqual([...out, ...err].map((x) => x.custom_id).sort(), [
        "req-1",
        "req-2",
        "req-3",
        "req-4",
        "req-5",
      ]);
    });

    it("gives a claimed line the job's metadata.task", async () => {
      const s = await ctx.open();
      const job = { tenant: "acme", endpoint: ENDPOINT, inputFileId: "f", completionWindowMs: DAY };
      await s.createBatch({ ...job, metadata: { task: "summarize" }, lines: linesOf(1) }, T0);
      const [c] = await s.claimLines("w", 1, LEASE, T0);
      assert.equal(c?.jobTask, "summarize");
    });

    it("writes no error file when every line succeeded", async () => {
      const s = await ctx.open();
      const b = await newBatch(s, 2);
      await finishAll(s, "w", await s.claimLines("w", 10, LEASE, T0), T0);
      await s.finalizeReady(T0);
      const row = await batchOf(s, b.id);
      assert.deepEqual([row.status, row.error_file_id], ["completed", null]);
      assert.equal((await fileRecords(s, b.id, "output")).length, 2);
    });

    it("gives an expired lease to another owner, and refuses the first owner's late answer", async () => {
      const s = await ctx.open();
      const b = await newBatch(s, 1);
      assert.equal((await s.claimLines("a", 1, LEASE, T0)).length, 1);
      assert.deepEqual(await s.claimLines("b", 1, LEASE, T0 + LEASE), [], "the lease holds up to its end");
      const [taken] = await s.claimLines("b", 1, LEASE, T0 + LEASE + 1);
      assert.deepEqual([taken?.line, taken?.attempts], [1, 2]);
      const key = { batchId: b.id, line: 1 };
      assert.deepEqual(await s.renewLeases("a", [key], LEASE, T0 + LEASE + 2), [key]);
      const late = { state: "succeeded" as const, result: ok("req-1", "late") };
      assert.equal(await s.finishLine("a", b.id, 1, late, T0 + LEASE + 3), false);
      const mine = { state: "succeeded" as const, result: ok("req-1", "b") };
      assert.equal(await s.finishLine("b", b.id, 1, mine, T0 + LEASE + 4), true);
      assert.equal(await s.finishLine("a", b.id, 1, late, T0 + LEASE + 5), false);
      await s.finalizeReady(T0 + LEASE + 6);
      assert.deepEqual(await fileRecords(s, b.id, "output"), [ok("req-1", "b")]);
      assert.deepEqual(countsOf(await batchOf(s, b.id)), { total: 1, completed: 1, failed: 0 });
    });

    it("keeps a renewed lease from being taken", async () => {
      const s = await ctx.open();
      const b = await newBatch(s, 2);
      await s.claimLines("a", 2, LEASE, T0);
      const keys = [1, 2, 9].map((line) => ({ batchId: b.id, line }));
      assert.deepEqual(await s.renewLeases("a", keys, LEASE, T0 + LEASE - 1), [{ batchId: b.id, line: 9 }]);
      assert.deepEqual(await s.claimLines("b", 2, LEASE, T0 + LEASE + 1), [], "renewed until T0 + 2 leases");
      assert.equal((await s.getLine(b.id, 1))!.lease_until, T0 + 2 * LEASE - 1);
      assert.deepEqual(
        await s.renewLeases("b", keys.slice(0, 1), LEASE, T0),
        keys.slice(0, 1),
        "not b's line",
      );
    });

    it("never hands a line to two store instances claiming in turn", async () => {
      const one = await ctx.open();
      const two = await ctx.open();
      const b1 = await newBatch(one, 37);
      const b2 = await newBatch(two, 23);
      const seen = new Map<string, string>();
      for (let round = 0; ; round++) {
        const got = [
          ...(await one.claimLines("one", 3, LEASE, T0 + round)).map((c) => ({ c, who: "one", s: one })),
          ...(await two.claimLines("two", 2, LEASE, T0 + round)).map((c) => ({ c, who: "two", s: two })),
        ];
        if (got.length === 0) break;
        for (const { c, who, s } of got) {
          const key = `${c.batchId}:${c.line}`;
          assert.equal(seen.get(key), undefined, `${key} claimed twice`);
          seen.set(key, who);
          const by = round % 2 === 0 ? s : s === one ? two : one; // the instances are one store
          assert.ok(
            await by.finishLine(who, c.batchId, c.line, { state: "succeeded", result: ok(c.customId) }, T0),
          );
        }
      }
      assert.equal(seen.size, 60);
      assert.deepEqual(new Set(seen.values()), new Set(["one", "two"]));
      assert.deepEqual((await two.finalizeReady(T0 + 1000)).sort(), [b1.id, b2.id].sort());
      assert.deepEqual(await one.finalizeReady(T0 + 1000), [], "the other instance finds them final");
      assert.equal(
        (await one.listFiles("acme", { purpose: "batch_output" })).data.length,
        2,
        "one output each",
      );
    });

    it("never hands a line to two owners when many claims from several instances run at once", async () => {
      const stores = [await ctx.open(), await ctx.open(), await ctx.open()];
      const b = await newBatch(stores[0]!, 200);
      const seen = new Map<string, string>();
      for (let round = 0; round < 500; round++) {
        const claims = stores.flatMap((s, i) =>
          [0, 1].map(async (k) => ({
            s,
            owner: `w${i}-${k}`,
            got: await s.claimLines(`w${i}-${k}`, 7, LEASE, T0),
          })),
        );
        const results = await Promise.all(claims);
        if (results.every((r) => r.got.length === 0)) break;
        const finishes: Promise<boolean>[] = [];
        for (const { s, owner, got } of results) {
          for (const c of got) {
            const key = `${c.batchId}:${c.line}`;
            assert.equal(seen.get(key), undefined, `${key} claimed by ${seen.get(key)} and ${owner}`);
            seen.set(key, owner);
            finishes.push(
              s.finishLine(owner, c.batchId, c.line, { state: "succeeded", result: ok(c.customId) }, T0),
            );
          }
        }
        assert.ok((await Promise.all(finishes)).every(Boolean), "every owner's answer is recorded");
      }
      assert.equal(seen.size, 200);
      assert.deepEqual(countsOf(await batchOf(stores[1]!, b.id)), { total: 200, completed: 200, failed: 0 });
      const ended = await Promise.all(stores.map((s) => s.finalizeReady(T0 + 1000)));
      assert.deepEqual(ended.flat(), [b.id], "finalized by exactly one of the instances finalizing at once");
      const ids = (await fileRecords(stores[2]!, b.id, "output")).map((x) => x.custom_id);
      assert.deepEqual(
        ids,
        linesOf(200).map((l) => l.customId),
      );
    });

    it("after a crash, claims the dead owner's unfinished lines once their leases end, keeping what it finished", async () => {
      const s = await ctx.open();
      const b = await newBatch(s, 6);
      const claimed = await s.claimLines("dead", 4, LEASE, T0);
      await finishAll(s, "dead", claimed.slice(0, 2), T0 + 5);
      await s.close(); // no releaseOwner: the process died

      const r = await ctx.open();
      const soon = await r.claimLines("alive", 10, LEASE, T0 + 1000);
      assert.deepEqual(
        soon.map((c) => c.line),
        [5, 6],
        "only the never-claimed lines while the dead claims' leases run",
      );
      await finishAll(r, "alive", soon, T0 + 1001);
      const later = await r.claimLines("alive", 10, LEASE, T0 + LEASE + 1);
      assert.deepEqual(
        later.map((c) => [c.line, c.attempts]),
        [
          [3, 2],
          [4, 2],
        ],
      );
      await finishAll(r, "alive", later, T0 + LEASE + 2);
      assert.deepEqual(await r.finalizeReady(T0 + LEASE + 3), [b.id]);
      assert.deepEqual(
        (await fileRecords(r, b.id, "output")).map((x) => x.custom_id),
        ["req-1", "req-2", "req-3", "req-4", "req-5", "req-6"],
      );
    });

    it("backs a retried line off until not_before, counting its attempt", async () => {
      const s = await ctx.open();
      const b = await newBatch(s, 1);
      await s.claimLines("w", 1, LEASE, T0);
      assert.equal(await s.retryLine("other", b.id, 1, T0 + 5000), false, "only the owner retries");
      assert.equal(await s.retryLine("w", b.id, 1, T0 + 5000), true);
      assert.equal(await s.retryLine("w", b.id, 1, T0 + 5000), false, "no longer claimed");
      const line = (await s.getLine(b.id, 1))!;
      assert.deepEqual([line.state, line.not_before, line.claimed_by], ["pending", T0 + 5000, null]);
      assert.deepEqual(await s.claimLines("w", 1, LEASE, T0 + 4999), []);
      assert.deepEqual(await s.finalizeReady(T0 + 4999), [], "a line waiting for its retry is not done");
      const [again] = await s.claimLines("w", 1, LEASE, T0 + 5000);
      assert.equal(again?.attempts, 2);
    });

    it("defers a line until not_before, giving its attempt back", async () => {
      const s = await ctx.open();
      const b = await newBatch(s, 1);
      await s.claimLines("w", 1, LEASE, T0);
      assert.equal(await s.deferLine("other", b.id, 1, T0 + 5000), false, "only the owner defers");
      assert.equal(await s.deferLine("w", b.id, 1, T0 + 5000), true);
      assert.deepEqual(
        [(await s.getLine(b.id, 1))!.state, (await s.getLine(b.id, 1))!.attempts],
        ["pending", 0],
      );
      assert.deepEqual(await s.claimLines("w", 1, LEASE, T0 + 4999), []);
      const [again] = await s.claimLines("w", 1, LEASE, T0 + 5000);
      assert.equal(again?.attempts, 1, "a deferred run is not an attempt");
    });

    it("releases an owner's running lines at shutdown, uncounting the attempt", async () => {
      const s = await ctx.open();
      const b = await newBatch(s, 3);
      await s.claimLines("a", 2, LEASE, T0);
      await s.claimLines("b", 1, LEASE, T0);
      assert.equal(await s.releaseOwner("a"), 2);
      assert.equal((await s.getLine(b.id, 3))!.claimed_by, "b", "other owners' claims stay");
      const got = await s.claimLines("c", 10, LEASE, T0 + 1);
      assert.deepEqual(
        got.map((c) => [c.line, c.attempts]),
        [
          [1, 1],
          [2, 1],
        ],
      );
      assert.equal(
        await s.finishLine("a", b.id, 1, { state: "succeeded", result: ok("req-1") }, T0 + 2),
        false,
      );
      assert.equal(await s.releaseOwner("a"), 0, "nothing left to release");
    });
  });

  describe("a job being written", () => {
    it("is never claimed, and is seen as validating or not at all, until every line is written", async () => {
      const writer = await ctx.open();
      const reader = await ctx.open();
      // About 4 MB of lines: several pieces for a store that writes them in pieces.
      let done = false;
      const creating = newBatch(writer, 80, { pad: 50_000 }).finally(() => {
        done = true;
      });
      while (!done) {
        const got = await reader.claimLines("r", 100, LEASE, T0);
        const [o] = (await reader.listBatches("acme")).data;
        if (got.length > 0 || (o !== undefined && o.status !== "validating")) {
          // The job was opened before its createBatch resolved: it must be whole by then.
          assert.ok(o, "a claimed job is listed");
          assert.deepEqual(
            [o.status, o.request_counts.total],
            ["in_progress", 80],
            "claimed only when whole",
          );
          assert.ok(await reader.getLine(o.id, 80), "its last line is written");
        }
        await new Promise((r) => setImmediate(r));
      }
      const b = await creating;
      assert.deepEqual([b.status, b.request_total], ["in_progress", 80]);
      await reader.releaseOwner("r");
      const all = await claimAll(reader, "r", T0);
      assert.deepEqual(
        all.map((c) => c.line),
        linesOf(80).map((l) => l.line),
      );
    });
  });
}

/** Every line claimable at `now`, claimed by `owner`. */
async function claimAll(s: BatchStore, owner: string, now: number): Promise<ClaimedLine[]> {
  const all: ClaimedLine[] = [];
  for (let got = await s.claimLines(owner, 25, LEASE, now); got.length > 0; ) {
    all.push(...got);
    got = await s.claimLines(owner, 25, LEASE, now);
  }
  return all;
}
