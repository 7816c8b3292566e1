import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_SATURATION } from "../config/saturation-bounds.js";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import { LongPrefillGuard } from "../flow/long-prefill.js";
import type { PickResult } from "../picker/framework/types.js";
import { learnedPool } from "../testing/test-endpoint.js";
import { ClientGone } from "./client-gone.js";
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

function ticket(eps: EndpointState[], tokens: number, opts: { bounds?: boolean; guard?: LongPrefillGuard }) {
  return new RequestTicket({
    priority: 100,
    tenant: "t",
    cost: tokens,
    work: tokens,
    maxQueueMs: 1000,
    gate: null,
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
