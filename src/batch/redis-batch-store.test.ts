// The Redis batch store against a real redis-server (started by the test, skipped without one): the
// whole store contract, each case under a fresh namespace, then what only Redis shows — an interrupted
// upload's pieces expire, a job whose writer died is failed, one cancelled while written ends cancelled,
// a finalizer that died after sealing is taken over, and Redis going away and coming back. The fixture runs Redis without persistence, so the
// restart case checks that the store fails fast and reconnects (scripts loaded again), not that data
// survives.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createClient } from "redis";
import { type RedisServer, startRedis } from "../bench/services/redis-server.js";
import { batchStoreContract } from "../testing/batch-store-contract.js";
import { fileRecords, finishAll, LEASE, newBatch, ok, T0 } from "../testing/batch-store-fixtures.js";
import { missingService } from "../testing/system-services.js";
import type { PieceHook } from "./redis-batch-client.js";
import { FINALIZER_LEASE_MS } from "./redis-batch-finalize.js";
import { BatchCreationInterrupted, RedisBatchStore, WRITER_LEASE_MS } from "./redis-batch-store.js";

const SKIP = missingService("redis-server");

/** A hook that stops its writer at `stage`/`index` until `release()`; `reached` resolves when it does. */
function stopAt(stage: Parameters<PieceHook>[0], index: number) {
  let release!: () => void;
  let arrived!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const reached = new Promise<void>((r) => {
    arrived = r;
  });
  const hook: PieceHook = async (s, i) => {
    if (s !== stage || i !== index) return;
    arrived();
    await gate;
  };
  return { hook, reached, release };
}

describe("redis batch store", { skip: SKIP ?? false }, () => {
  let redis: RedisServer;
  let n = 0;
  let ns = "tg:test:0";
  const stores: RedisBatchStore[] = [];
  const store = (afterPiece?: PieceHook) => {
    const s = new RedisBatchStore({ url: redis.url, namespace: ns, timeoutMs: 3000, afterPiece });
    stores.push(s);
    return s;
  };
  /** The namespace's keys and their TTLs (ms; -1: none). */
  const keys = async () => {
    const raw = createClient({ url: redis.url });
    await raw.connect();
    const out = new Map<string, number>();
    for (const k of await raw.keys(`${ns}:*`)) out.set(k, await raw.pTTL(k));
    await raw.close();
    return out;
  };

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const s of stores) await s.close();
    await redis?.stop();
  });

  batchStoreContract(
    "redis",
    async () => new RedisBatchStore({ url: redis.url, namespace: ns, timeoutMs: 3000 }),
    async () => {
      ns = `tg:test:${++n}`;
    },
  );

  describe("what only Redis shows", () => {
    it("leaves no lasting key of an interrupted upload: its pieces have a TTL and it has no metadata", async () => {
      ns = `tg:test:${++n}`;
      const s = store((stage, i) => {
        if (stage === "file" && i === 2) throw new Error("the process died here");
      });
      const content = Buffer.alloc(3 * 1024 * 1024, 7);
      await assert.rejects(s.createFile({ tenant: "acme", purpose: "batch", filename: "big", content }, T0));
      const left = await keys();
      assert.equal(left.size, 2, "the two pieces written");
      for (const [k, ttl] of left) {
        assert.match(k, /:f:file-[0-9A-Za-z]{24}:\d$/, "only pieces");
        assert.ok(ttl > 0, `${k} expires`);
      }
      assert.equal((await s.listFiles("acme")).data.length, 0);

      const whole = await store().createFile(
        { tenant: "acme", purpose: "batch", filename: "ok", content },
        T0,
      );
      for (const [k, ttl] of await keys()) {
        if (k.includes(whole.id)) assert.equal(ttl, -1, `${k} is kept once the file is whole`);
      }
    });

    it("fails a job whose writer stopped part-way once its lease ran out, removing its lines", async () => {
      ns = `tg:test:${++n}`;
      const stop = stopAt("lines", 1);
      const writer = store(stop.hook);
      const other = store();
      const creating = newBatch(writer, 80, { pad: 50_000 });
      creating.catch(() => undefined);
      await stop.reached;

      const [v] = (await other.listBatches("acme")).data;
      assert.equal(v?.status, "validating");
      assert.ok(await other.getLine(v.id, 1), "its first piece is written");
      assert.deepEqual(await other.claimLines("r", 10, LEASE, T0), []);
      assert.deepEqual(await other.finalizeReady(T0 + 1000), [], "the writer's lease holds");
      assert.deepEqual(await other.finalizeReady(T0 + WRITER_LEASE_MS + 60_000), [v.id]);
      const row = (await other.getBatch("acme", v.id))!;
      assert.deepEqual([row.status, row.failed_at, row.request_total], ["failed", T0 / 1000 + 120, 0]);
      assert.equal(JSON.parse(row.errors!).data[0].code, "batch_creation_interrupted");
      assert.equal(await other.getLine(v.id, 1), null, "its lines removed");

      stop.release(); // the writer comes back: it is refused, and writes nothing more
      await assert.rejects(creating, (e: unknown) => e instanceof BatchCreationInterrupted);
      const lineKeys = [...(await keys()).keys()].filter((k) => k.includes(`:b:${v.id}:`));
      assert.deepEqual(lineKeys, []);
      assert.equal((await other.getBatch("acme", v.id))!.status, "failed");
    });

    it("ends a job cancelled while its lines were written as cancelled, once they are all written", async () => {
      ns = `tg:test:${++n}`;
      const stop = stopAt("lines", 1);
      const writer = store(stop.hook);
      const other = store();
      const creating = newBatch(writer, 40, { pad: 20_000 });
      await stop.reached;
      const [v] = (await other.listBatches("acme")).data;
      assert.equal((await other.cancelBatch("acme", v!.id, T0 + 1000))!.status, "cancelling");
      assert.deepEqual(await other.finalizeReady(T0 + 2000), [], "not while its lines are written");

      stop.release();
      const b = await creating;
      assert.deepEqual([b.status, b.request_total], ["cancelling", 40]);
      assert.deepEqual(await other.claimLines("r", 10, LEASE, T0 + 2000), []);
      assert.deepEqual(await other.finalizeReady(T0 + 3000), [b.id]);
      assert.equal((await other.batchById(b.id))!.status, "cancelled");
      const err = await fileRecords(other, b.id, "error");
      assert.equal(err.length, 40);
      assert.ok(err.every((x) => x.error?.code === "batch_cancelled"));
    });

    it("takes over a finalizer that stopped after sealing, once its lease ran out; the first one's files never appear", async () => {
      ns = `tg:test:${++n}`;
      const stop = stopAt("finalize", 1);
      const dying = store(stop.hook);
      const other = store();
      const b = await newBatch(other, 3);
      await finishAll(other, "w", await other.claimLines("w", 10, LEASE, T0), T0);
      const first = dying.finalizeReady(T0 + 1000);
      await stop.reached; // sealed, and its output's first piece written

      assert.equal((await other.batchById(b.id))!.status, "finalizing");
      assert.deepEqual(await other.finalizeReady(T0 + 2000), [], "the finalizer's lease holds");
      assert.deepEqual(await other.finalizeReady(T0 + 1000 + FINALIZER_LEASE_MS + 60_000), [b.id]);
      const row = (await other.batchById(b.id))!;
      assert.equal(row.status, "completed");
      assert.deepEqual(
        (await fileRecords(other, b.id, "output")).map((x) => x.custom_id),
        ["req-1", "req-2", "req-3"],
      );

      stop.release();
      assert.deepEqual(await first, [], "the first finalizer's commit is refused");
      assert.equal((await other.listFiles("acme", { purpose: "batch_output" })).data.length, 1);
      const all = await keys();
      const orphans = [...all].filter(
        ([k]) => /:f:file-[^:]+:\d+$/.test(k) && !all.has(k.replace(/:\d+$/, "")),
      );
      assert.equal(orphans.length, 1, "the first finalizer's piece is left");
      for (const [k, ttl] of orphans) assert.ok(ttl > 0, `${k} expires`);
    });

    it("fails fast while Redis is away, and works again once it is back (scripts loaded again)", async () => {
      ns = `tg:test:${++n}`;
      const s = store();
      const b = await newBatch(s, 2);
      const [c] = await s.claimLines("w", 1, LEASE, T0);
      assert.ok(c);
      await redis.stop();
      await assert.rejects(s.finishLine("w", b.id, 1, { state: "succeeded", result: ok("req-1") }, T0));
      await redis.start();
      for (let i = 0; i < 200; i++) {
        if (
          await s.listFiles("acme").then(
            () => true,
            () => false,
          )
        )
          break;
        await sleep(50);
      }
      // No persistence in the fixture: what was written before is gone; the store works on.
      assert.equal(await s.batchById(b.id), null);
      const again = await newBatch(s, 1);
      await finishAll(s, "w", await s.claimLines("w", 1, LEASE, T0), T0);
      assert.deepEqual(await s.finalizeReady(T0 + 1000), [again.id]);
      assert.deepEqual(await fileRecords(s, again.id, "output"), [ok("req-1")]);
    });
  });
});
