import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { DEFAULT_POOL_FLOW, type PoolFlowSettings } from "../config/inference-pool.js";
import type { PauseWhen } from "../config/route-types.js";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import type { Lease } from "../endpoints/lease.js";
import { GatewayError } from "../errors/gateway-error.js";
import { endpoint, scraped } from "../testing/test-endpoint.js";
import { LatencyWindow } from "./latency-window.js";
import { PauseGate } from "./pause-gate.js";
import { type FlowTicket, PoolFlow } from "./pool-flow.js";
import { QueueSweep, SWEEP_MS } from "./queue-sweep.js";
import { saturationOf } from "./saturation.js";

/** One endpoint that takes one request at a time; the flow is told when its lease is released. */
function rig(settings: Partial<PoolFlowSettings> = {}) {
  const ep = endpoint();
  scraped(ep, Date.now() + 3_600_000, 0, 0);
  const flow = new PoolFlow<{ id: string; lease: Lease }>("p", {
    ...DEFAULT_POOL_FLOW,
    maxInflight: 1,
    ...settings,
  });
  ep.onCapacity = () => flow.notify();
  const ticket = (
    id: string,
    opts: Partial<FlowTicket<{ id: string; lease: Lease }>> & { signal?: AbortSignal } = {},
  ): FlowTicket<{ id: string; lease: Lease }> => ({
    priority: 0,
    tenant: "t",
    cost: 100,
    maxQueueMs: 5000,
    gate: null,
    fallbackOptions: ["retry_later"],
    signal: new AbortController().signal,
    place: () =>
      saturationOf(ep as EndpointState, flow.settings, 100, Date.now()) === null
        ? { id, lease: ep.acquire(100) }
        : null,
    ...opts,
  });
  return { ep, flow, ticket };
}

const WHEN: PauseWhen = {
  pool: "online",
  ttftP95MsGt: 100,
  windowSeconds: 60,
  resumeBelowMs: 80,
  resumeAfterSeconds: 0,
  minSamples: 1,
  retryAfterSeconds: 900,
};

describe("PoolFlow", () => {
  it("passes over a queued request no endpoint can take now, and keeps it for when one can", async () => {
    const { ep, flow, ticket } = rig({ maxInflight: 2 });
    const busy = flow.admit(ticket("busy"));
    assert.ok(!(busy instanceof Promise));
    let adapterSlot = false;
    const misses: string[] = [];
    // Waits for an adapter slot: there is room in the pool, but not for it (`no_match`).
    const stuck: FlowTicket<{ id: string; lease: Lease }> & { lastMiss: "full" | "no_match" | null } = {
      ...ticket("adapter-x"),
      matchKey: "m||x",
      lastMiss: null,
      place() {
        if (!adapterSlot) {
          misses.push("x");
          this.lastMiss = "no_match";
          return null;
        }
        return { id: "adapter-x", lease: ep.acquire(100) };
      },
    };
    const twin = { ...stuck, place: stuck.place };
    const x = flow.admit(stuck) as Promise<{ id: string; lease: Lease }>;
    const x2 = flow.admit(twin) as Promise<{ id: string; lease: Lease }>;
    const behind = flow.admit(ticket("behind")) as Promise<{ id: string; lease: Lease }>;
    assert.ok(x instanceof Promise && behind instanceof Promise);
    const b = await behind;
    assert.equal(b.id, "behind", "the request behind went though the head could not");
    assert.ok(misses.length >= 1);
    const before = misses.length;
    b.lease.release();
    await sleep(0);
    assert.ok(misses.length - before <= 1, "its twin (same matchKey) was passed over without a pick");
    adapterSlot = true;
    (busy as { lease: Lease }).lease.release();
    const got = await x;
    assert.equal(got.id, "adapter-x");
    got.lease.release();
    (await x2).lease.release();
    assert.equal(ep.inflightRequests, 0);
  });

  it("places at once while an endpoint has room, and queues when none has", async () => {
    const { ep, flow, ticket } = rig();
    const first = flow.admit(ticket("a"));
    assert.ok(!(first instanceof Promise), "placed synchronously");
    const second = flow.admit(ticket("b"));
    assert.ok(second instanceof Promise);
    assert.equal(flow.depth, 1);
    assert.equal(ep.inflightRequests, 1);
    first.lease.release();
    const b = await second;
    assert.equal(b.id, "b");
    assert.equal(flow.depth, 0);
    assert.equal(ep.inflightRequests, 1);
    b.lease.release();
    assert.equal(flow.stats.dispatched, 1);
  });

  it("dispatches waiting requests by priority band as capacity frees up", async () => {
    const { flow, ticket } = rig();
    const hold = flow.admit(ticket("hold")) as { lease: Lease };
    const order: string[] = [];
    const waits = [
      ["batch", 10],
      ["live", 100],
      ["long", 50],
      ["live2", 100],
    ].map(([id, priority]) =>
      (
        flow.admit(ticket(id as string, { priority: priority as number })) as Promise<{
          id: string;
          lease: Lease;
        }>
      ).then((p) => {
        order.push(p.id);
        setImmediate(() => p.lease.release());
      }),
    );
    hold.lease.release();
    await Promise.all(waits);
    assert.deepEqual(order, ["live", "live2", "long", "batch"]);
  });

  it("at its deadline a request held only by a soft bound goes within the hard bounds, not to an error", async () => {
    const { ep, flow, ticket } = rig({ maxInflight: 4 });
    const hold = flow.admit(ticket("hold")) as { lease: Lease };
    const late = flow.admit(
      ticket("late", {
        maxQueueMs: 60,
        // The soft bounds say no (a predicted wait over its bound, say); the hard ones have room.
        place: () => null,
        placeAtDeadline: () => ({ id: "late-at-deadline", lease: ep.acquire(100) }),
      }),
    );
    assert.ok(late instanceof Promise);
    const placed = await late;
    assert.equal(placed.id, "late-at-deadline");
    assert.equal(flow.stats.timedOut, 0);
    assert.equal(flow.stats.dispatched, 1);
    assert.equal(flow.depth, 0);
    placed.lease.release();
    hold.lease.release();
    assert.equal(ep.inflightRequests, 0);
  });

  it("refuses with queue_timeout after maxQueueMs, with Retry-After, route and fallback options", async () => {
    const { flow, ticket } = rig();
    const hold = flow.admit(ticket("hold")) as { lease: Lease };
    const t0 = Date.now();
    await assert.rejects(
      async () => flow.admit(ticket("late", { maxQueueMs: 60, fallbackOptions: ["pool:x", "retry_later"] })),
      (e) => {
        assert.ok(e instanceof GatewayError);
        assert.equal(e.code, "queue_timeout");
        assert.equal(e.status, 503);
        assert.equal(e.route, "p");
        assert.equal(e.retryAfterSeconds, 1);
        assert.deepEqual(e.fallbackOptions, ["pool:x", "retry_later"]);
        assert.equal(e.headers()["retry-after"], "1");
        return true;
      },
    );
    assert.ok(Date.now() - t0 >= 55);
    assert.equal(flow.depth, 0);
    assert.equal(flow.stats.timedOut, 1);
    hold.lease.release();
  });

  it("leaves the queue at once when the client disconnects", async () => {
    const { ep, flow, ticket } = rig();
    const hold = flow.admit(ticket("hold")) as { lease: Lease };
    const ac = new AbortController();
    const waiting = flow.admit(ticket("gone", { signal: ac.signal }));
    assert.equal(flow.depth, 1);
    ac.abort(new Error("client disconnected"));
    await assert.rejects(async () => waiting, /client disconnected/);
    assert.equal(flow.depth, 0);
    hold.lease.release();
    await sleep(5);
    assert.equal(ep.inflightRequests, 0, "the cancelled request was never placed");
    assert.equal(flow.stats.cancelled, 1);
  });

  it("holds a paused rule's requests (others pass them), refuses them as inference_queue_paused, and resumes", async () => {
    const { flow, ticket } = rig({ maxInflight: 4 });
    const window = new LatencyWindow(60_000);
    const gate = new PauseGate("quality-batch", "p", WHEN, window);
    window.add(500, 1000);
    assert.ok(gate.evaluate(1000)?.paused);
    const batch = flow.admit(ticket("batch", { gate, priority: 100 }));
    assert.ok(batch instanceof Promise, "paused: queued although the endpoint has room");
    const live = flow.admit(ticket("live", { priority: 10 }));
    assert.ok(!(live instanceof Promise), "the pause holds only its rule's requests");
    await sleep(80);
    assert.equal(flow.depth, 1);
    assert.equal(gate.evaluate(70_000)?.paused, false, "the window emptied: resume");
    flow.notify();
    assert.equal((await batch).id, "batch");

    window.add(500, 80_000);
    assert.ok(gate.evaluate(80_000)?.paused);
    await assert.rejects(
      async () => flow.admit(ticket("refused", { gate, maxQueueMs: 30 })),
      (e) => {
        assert.ok(e instanceof GatewayError);
        assert.equal(e.code, "inference_queue_paused");
        assert.equal(e.retryAfterSeconds, 900);
        assert.match(e.message, /TTFT P95 500 ms is above 100 ms/);
        return true;
      },
    );
  });

  it("refuses with queue_full past maxQueuedRequests, and dispatches at once when disabled", async () => {
    const { flow, ticket } = rig({ maxQueuedRequests: 1 });
    const hold = flow.admit(ticket("hold")) as { lease: Lease };
    const queued = flow.admit(ticket("q"));
    await assert.rejects(
      async () => flow.admit(ticket("x")),
      (e) => e instanceof GatewayError && e.code === "queue_full" && e.status === 429,
    );
    hold.lease.release();
    (await queued).lease.release();

    const off = rig({ enabled: false, maxInflight: null });
    const a = off.flow.admit(off.ticket("a"));
    const b = off.flow.admit(off.ticket("b"));
    assert.ok(!(a instanceof Promise) && !(b instanceof Promise));
  });

  it("close refuses what is still queued", async () => {
    const { flow, ticket } = rig();
    flow.admit(ticket("hold"));
    const waiting = flow.admit(ticket("w"));
    flow.close("shutting down");
    await assert.rejects(
      async () => waiting,
      (e) => e instanceof GatewayError && e.code === "upstream_unavailable",
    );
  });
});

describe("Pools sharing engines", () => {
  type Placed = { id: string };
  /** A long-context pool (priority 50) and a batch pool (10) over one engine; `room` says if it has any. */
  function shared() {
    const sweep = new QueueSweep();
    const settings = { ...DEFAULT_POOL_FLOW, maxInflight: 1 };
    const long = new PoolFlow<Placed>("long", settings, undefined, sweep);
    const batch = new PoolFlow<Placed>("batch", settings, undefined, sweep);
    sweep.add(long);
    sweep.add(batch);
    batch.addRival(long);
    const engine = { room: false, taken: [] as string[] };
    const ticket = (id: string, priority: number, maxQueueMs = 5000): FlowTicket<Placed> => ({
      priority,
      tenant: "t",
      cost: 100,
      maxQueueMs,
      gate: null,
      fallbackOptions: [],
      signal: new AbortController().signal,
      place: () => {
        if (!engine.room) return null;
        engine.room = false;
        engine.taken.push(id);
        return { id };
      },
    });
    return { sweep, long, batch, engine, ticket };
  }

  it("an opening that comes with time alone goes to the higher-priority pool, whichever queued first", async () => {
    const { sweep, long, batch, engine, ticket } = shared();
    // The batch request queued first: with a sweep timer per pool, its timer ran ahead and won.
    const b = batch.admit(ticket("batch", 10));
    await sleep(SWEEP_MS / 2);
    const l = long.admit(ticket("long", 50));
    assert.ok(b instanceof Promise && l instanceof Promise);
    // Room appears without an event (a non-streaming request's assumed prefill ended, say).
    engine.room = true;
    assert.equal((await l).id, "long");
    assert.deepEqual(engine.taken, ["long"]);
    assert.equal(batch.depth, 1, "the batch request still waits");
    engine.room = true;
    assert.equal((await b).id, "batch");
    sweep.stop();
  });

  it("a request does not go ahead of a rival pool's waiting one; it goes after the rival's turn", async () => {
    const { sweep, long, batch, engine, ticket } = shared();
    const l = long.admit(ticket("long", 50, 200));
    assert.ok(l instanceof Promise);
    engine.room = true;
    const b = batch.admit(ticket("batch", 10));
    assert.ok(b instanceof Promise, "queued behind the long-context pool's waiting request");
    assert.equal((await l).id, "long", "the opening went to the rival at the sweep");
    engine.room = true;
    assert.equal((await b).id, "batch");
    assert.deepEqual(engine.taken, ["long", "batch"]);
    // Nothing of higher priority waits: a batch request goes at once.
    engine.room = true;
    const now = batch.admit(ticket("batch-2", 10));
    assert.ok(!(now instanceof Promise));
    sweep.stop();
  });

  it("a rival waiting for an engine this pool does not need costs this pool one sweep at most", async () => {
    const { sweep, long, batch, engine, ticket } = shared();
    // The long-context request waits for something only it needs (its place always misses).
    const stuck = long.admit({ ...ticket("long", 50, 300), place: () => null });
    engine.room = true;
    const t0 = performance.now();
    const b = batch.admit(ticket("batch", 10));
    assert.ok(b instanceof Promise);
    assert.equal((await b).id, "batch");
    assert.ok(performance.now() - t0 < SWEEP_MS * 6, "placed at the next sweep, after the rival's turn");
    await assert.rejects(
      async () => stuck,
      (e) => e instanceof GatewayError && e.code === "queue_timeout",
    );
    sweep.stop();
  });
});
