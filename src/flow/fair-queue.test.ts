import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AGING_TOKENS_PER_MS, FAIR_SLACK_TOKENS, FairQueue } from "./fair-queue.js";

/** Drains the queue and returns the values in dispatch order. */
function drain<T>(q: FairQueue<T>, eligible?: (v: T) => boolean, now?: number): T[] {
  const out: T[] = [];
  for (let e = q.peek(eligible, now); e; e = q.peek(eligible, now)) {
    q.take(e);
    out.push(e.value);
  }
  return out;
}

describe("FairQueue", () => {
  it("serves strict priority bands, highest first, FIFO inside one tenant", () => {
    const q = new FairQueue<string>();
    q.push("batch-1", { priority: 10, tenant: "t", cost: 1 });
    q.push("live-1", { priority: 100, tenant: "t", cost: 1 });
    q.push("long-1", { priority: 50, tenant: "t", cost: 1 });
    q.push("live-2", { priority: 100, tenant: "t", cost: 1 });
    q.push("batch-2", { priority: 10, tenant: "t", cost: 1 });
    assert.deepEqual(drain(q), ["live-1", "live-2", "long-1", "batch-1", "batch-2"]);
    assert.equal(q.size, 0);
  });

  it("shares a band by tokens served: a tenant of long requests does not starve one of short requests", () => {
    const q = new FairQueue<string>();
    for (let i = 0; i < 5; i++) q.push(`long-${i}`, { priority: 0, tenant: "bulk", cost: 50_000 });
    for (let i = 0; i < 5; i++) q.push(`short-${i}`, { priority: 0, tenant: "chat", cost: 2_000 });
    const order = drain(q);
    // After one long request (50k tokens) the short tenant may take 25 of its size before bulk goes again.
    assert.deepEqual(order.slice(0, 7), [
      "long-0",
      "short-0",
      "short-1",
      "short-2",
      "short-3",
      "short-4",
      "long-1",
    ]);
    assert.equal(q.counterOf(0, "bulk"), 250_000);
    assert.equal(q.counterOf(0, "chat"), 10_000);
  });

  it("alternates between tenants of equal cost, ties by arrival", () => {
    const q = new FairQueue<string>();
    for (let i = 0; i < 3; i++) q.push(`a${i}`, { priority: 0, tenant: "a", cost: 10 });
    for (let i = 0; i < 3; i++) q.push(`b${i}`, { priority: 0, tenant: "b", cost: 10 });
    assert.deepEqual(drain(q), ["a0", "b0", "a1", "b1", "a2", "b2"]);
  });

  it("does not let a tenant bank credit while idle", () => {
    const q = new FairQueue<string>();
    for (let i = 0; i < 10; i++) q.push(`a${i}`, { priority: 0, tenant: "a", cost: 100 });
    drain(q).slice(0, 10);
    assert.equal(q.counterOf(0, "a"), 1000);
    // b was idle all along: it starts level with where a is, not 1000 tokens behind.
    q.push("a10", { priority: 0, tenant: "a", cost: 100 });
    q.push("b0", { priority: 0, tenant: "b", cost: 100 });
    q.push("b1", { priority: 0, tenant: "b", cost: 100 });
    q.push("a11", { priority: 0, tenant: "a", cost: 100 });
    // Level counters, so arrival order decides: b is not handed ten turns in a row.
    assert.deepEqual(drain(q), ["a10", "b0", "b1", "a11"]);
    assert.equal(q.counterOf(0, "b"), 1200);
  });

  it("skips ineligible items (a paused rule) without blocking others, in any band", () => {
    const q = new FairQueue<{ id: string; paused: boolean }>();
    q.push({ id: "batch", paused: true }, { priority: 100, tenant: "t", cost: 1 });
    q.push({ id: "other", paused: false }, { priority: 100, tenant: "u", cost: 1 });
    q.push({ id: "low", paused: false }, { priority: 1, tenant: "t", cost: 1 });
    assert.deepEqual(
      drain(q, (v) => !v.paused).map((v) => v.id),
      ["other", "low"],
    );
    assert.equal(q.size, 1, "the paused item is still queued");
  });

  it("removes an item from the middle without charging its tenant, once", () => {
    const q = new FairQueue<string>();
    q.push("a0", { priority: 0, tenant: "a", cost: 5 });
    const mid = q.push("a1", { priority: 0, tenant: "a", cost: 5 });
    q.push("a2", { priority: 0, tenant: "a", cost: 5 });
    assert.equal(q.remove(mid), true);
    assert.equal(q.remove(mid), false);
    assert.equal(q.size, 2);
    assert.deepEqual(drain(q), ["a0", "a2"]);
    assert.equal(q.counterOf(0, "a"), 10);
    assert.deepEqual(q.bandSizes(), [{ priority: 0, size: 0 }]);
  });

  it("inside the fair share, the least work goes first, across tenants and inside one", () => {
    const q = new FairQueue<string>();
    q.push("a-long", { priority: 0, tenant: "a", cost: 8100, work: 8000 }, 0);
    q.push("b-short", { priority: 0, tenant: "b", cost: 600, work: 500 }, 0);
    q.push("a-short", { priority: 0, tenant: "a", cost: 400, work: 300 }, 0);
    const order = drain(q, undefined, 0);
    // a-short first (least work); then b-short: a now leads by 400 tokens, so b's 500 beats a's 8,400.
    assert.deepEqual(order, ["a-short", "b-short", "a-long"]);
  });

  it("a tenant more than FAIR_SLACK_TOKENS ahead waits, however short its request", () => {
    const q = new FairQueue<string>();
    q.push("a-big", { priority: 0, tenant: "a", cost: FAIR_SLACK_TOKENS + 1000, work: 100 }, 0);
    q.take(q.peek(undefined, 0)!);
    q.push("b-long", { priority: 0, tenant: "b", cost: 9000, work: 9000 }, 0);
    q.push("a-tiny", { priority: 0, tenant: "a", cost: 10, work: 10 }, 0);
    assert.equal(q.peek(undefined, 0)!.value, "b-long");
  });

  it("a request's wait counts against its work, so short ones arriving later cannot starve a long one", () => {
    const q = new FairQueue<string>();
    // At AGING_TOKENS_PER_MS = 10, a 10,000-token request queued at 0 ranks like a 0-token one queued
    // at 1,000 ms: shorter ones queued before that pass it, later ones do not.
    assert.equal(AGING_TOKENS_PER_MS, 10);
    q.push("long", { priority: 0, tenant: "a", cost: 10_000, work: 10_000 }, 0);
    q.push("short-early", { priority: 0, tenant: "b", cost: 100, work: 100 }, 800);
    q.push("short-late", { priority: 0, tenant: "b", cost: 100, work: 100 }, 1000);
    const order = drain(q, undefined, 1200);
    assert.deepEqual(order, ["short-early", "long", "short-late"]);
  });
});
