import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_SATURATION } from "../config/saturation-bounds.js";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import { ClientGone } from "../http/client-gone.js";
import type { PickResult } from "../picker/framework/types.js";
import { learnedPool } from "../testing/test-endpoint.js";
import { LatencyWindow } from "./latency-window.js";
import { LongPrefillGuard } from "./long-prefill.js";
import { PauseGate } from "./pause-gate.js";
import { RequestTicket } from "./request-ticket.js";

/** What the picker would answer: `to`, missing `uncached` prompt tokens there. */
function pickOf(to: EndpointState, uncached: number): PickResult<EndpointState> {
  return {
    endpoint: to,
    mode: "predicted",
    signals: null,
    reason: "test",
    backupPool: null,
    topScores: [],
    filtered: [],
    notes: [],
    predictedTtftMs: null,
    uncachedTokens: uncached,
  };
}

function ticket(
  eps: EndpointState[],
  tokens: number,
  opts: { bounds?: boolean; guard?: LongPrefillGuard; gate?: PauseGate },
) {
  return new RequestTicket({
    priority: 100,
    tenant: "t",
    cost: tokens,
    work: tokens,
    maxQueueMs: 1000,
    gate: opts.gate ?? null,
    fallbackOptions: [],
    endpoints: eps,
    bounds: { ...DEFAULT_SATURATION, maxInflight: 1, enabled: opts.bounds ?? false },
    ...(opts.guard ? { longPrefill: opts.guard } : {}),
    pickAmong: (roomy) => pickOf(roomy.at(-1)!, tokens),
    clientGone: new ClientGone(),
    stream: true,
    pickRequest: { model: "m", modelVersion: null, lora: null },
  });
}

describe("RequestTicket: why a try to place it failed", () => {
  it("keeps endpoints for a higher-priority pool counting those this pool's bounds leave out", () => {
    const eps = learnedPool();
    const live = new LongPrefillGuard();
    live.watched = true;
    const now = Date.now();
    for (let i = 0; i < 10; i++) live.holds(eps, eps[3]!, 2000, now - i * 100);
    const batch = new LongPrefillGuard();
    batch.rivals.push(live);
    // Three endpoints prefill long prompts and are over this pool's bound (one in flight): only the
    // fourth is within it, and it is the one kept for the live pool.
    const busy = [0, 1, 2].map((i) => eps[i]!.acquire(40_000, { uncached: 40_000, stream: false }, now));
    const t = ticket(eps, 40_000, { bounds: true, guard: batch });
    assert.equal(t.place(), null);
    assert.equal(t.heldBy, "long_prefill");
    assert.match(
      t.heldLong ?? "",
      /3 of 4 endpoints prefill a long prompt, 1 kept for higher-priority pools/,
    );
    for (const l of busy) l.release();
    for (const e of eps) assert.equal(e.inflightRequests, 0, "nothing held after");
  });

  it("names the long-prefill guard's hold, and keeps the reason once placed", () => {
    const eps = learnedPool();
    const guard = new LongPrefillGuard({ minPrefillMs: 150, shortReserve: 0.25 });
    const now = Date.now();
    guard.holds(eps, eps[0]!, 300, now); // a short prompt was seen
    const busy = [0, 1, 2].map((i) => eps[i]!.acquire(6000, { uncached: 6000, stream: true }, now));
    const t = ticket(eps, 6000, { guard });
    assert.equal(t.place(), null);
    assert.equal(t.heldBy, "long_prefill");
    assert.notEqual(t.heldLong, null);
    busy[0]!.firstToken(now + 300);
    const placed = t.place();
    assert.ok(placed, "placed once a long prefill ended");
    assert.equal(t.heldBy, "long_prefill", "the last failed try's reason stays for the log");
    placed.lease.release();
    for (const l of busy) l.release();
    for (const e of eps) assert.equal(e.inflightRequests, 0, "nothing held after");
  });

  it("names saturation when every candidate is at its bounds", () => {
    const eps = learnedPool(1);
    const holder = eps[0]!.acquire(100, { uncached: 100, stream: true });
    const t = ticket(eps, 100, { bounds: true });
    assert.equal(t.place(), null);
    assert.equal(t.heldBy, "saturated");
    holder.release();
    const placed = t.place();
    assert.ok(placed);
    placed.lease.release();
    assert.equal(eps[0]!.inflightRequests, 0);
  });

  it("has no reason when the first try places it", () => {
    const eps = learnedPool(2);
    const t = ticket(eps, 100, { bounds: true });
    const placed = t.place();
    assert.ok(placed);
    assert.equal(t.heldBy, null);
    placed.lease.release();
  });
});

describe("RequestTicket: engines idle while it was held", () => {
  it("reports how long the idlest candidate had no prefill of ours while it waited", async () => {
    const eps = learnedPool(2);
    // Both engines prefilling when it starts to wait (held by the in-flight bound of 1).
    const a = eps[0]!.acquire(100, { uncached: 100, stream: true });
    const b = eps[1]!.acquire(100, { uncached: 100, stream: true });
    const t = ticket(eps, 100, { bounds: true });
    assert.equal(t.place(), null);
    t.onQueued();
    const queuedAt = Date.now();
    // Engine 1's prefill ends (its first token) while the request is still held by the bound.
    const freedAt = Date.now();
    b.firstToken(freedAt);
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(t.place(), null, "still held: engine 1 is decoding, at its in-flight bound");
    b.release();
    const placed = t.place();
    const waited = Date.now() - queuedAt;
    assert.ok(placed);
    const idle = t.heldWhileIdleMs;
    assert.ok(idle !== null && idle >= 25 && idle <= waited, `held while idle ${idle} ms of ${waited}`);
    placed.lease.release();
    a.release();
  });

  it("is null for a request placed at once, and only the gap after a release when the engine stayed busy", () => {
    const eps = learnedPool(1);
    const first = ticket(eps, 100, { bounds: true });
    const placed = first.place();
    assert.ok(placed);
    assert.equal(first.heldWhileIdleMs, null);
    const t = ticket(eps, 100, { bounds: true });
    assert.equal(t.place(), null);
    t.onQueued();
    const releasedAt = Date.now();
    placed.lease.release();
    const next = t.place();
    assert.ok(next);
    const idle = t.heldWhileIdleMs ?? -1;
    assert.ok(idle >= 0 && idle <= Date.now() - releasedAt, `only between release and placement: ${idle} ms`);
    next.lease.release();
  });
});

describe("RequestTicket: why it waited (gateway_queue_reason)", () => {
  const gate = () =>
    new PauseGate(
      "quality-batch",
      "summary-batch",
      {
        pool: "summary-online",
        ttftP95MsGt: 60,
        windowSeconds: 2,
        resumeBelowMs: 60,
        resumeAfterSeconds: 0,
        minSamples: 3,
        retryAfterSeconds: 900,
      },
      new LatencyWindow(2000, 64),
    );

  it("is the batch pause when it was paused as the request came", () => {
    const g = gate();
    const t = ticket(learnedPool(), 100, { gate: g });
    t.heldBy = "saturated";
    assert.equal(t.waitReason(1000, true), "paused");
  });

  it("is the batch pause when the pause began while it waited, though a try failed on room before", () => {
    const g = gate();
    const t = ticket(learnedPool(), 100, { gate: g });
    t.heldBy = "saturated"; // queued as the pool was full...
    g.paused = true; // ...then the pause held it, until it lifted
    g.changedAt = 1500;
    g.paused = false;
    g.changedAt = 2500;
    assert.equal(t.waitReason(1000, false), "paused");
  });

  it("is the last failed try's reason, or the queue's order, when no pause touched its wait", () => {
    const g = gate();
    g.changedAt = 500; // a pause that ended before it came
    const t = ticket(learnedPool(), 100, { gate: g });
    assert.equal(t.waitReason(1000, false), "queue_order");
    t.heldBy = "saturated";
    assert.equal(t.waitReason(1000, false), "saturated");
    assert.equal(ticket(learnedPool(), 100, {}).waitReason(1000, false), "queue_order");
  });
});
