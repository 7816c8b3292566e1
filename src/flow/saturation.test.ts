import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import { endpoint, scraped } from "../testing/test-endpoint.js";
import {
  DEFAULT_SATURATION,
  overHardBound,
  placeable,
  type SaturationBounds,
  saturationOf,
  softSaturation,
} from "./saturation.js";

const B: SaturationBounds = {
  ...DEFAULT_SATURATION,
  maxWaiting: 2,
  maxKvCacheUsage: 0.8,
  staleMaxInflight: 2,
};

describe("saturationOf", () => {
  it("always has room for one request when nothing is in flight, unless not routable", () => {
    const ep = endpoint();
    scraped(ep, 1000, 50, 0.99);
    assert.equal(saturationOf(ep, B, 60_000, 1000), null);
    ep.healthy = false;
    assert.equal(saturationOf(ep, B, 1, 1000), "not routable");
  });

  it("is full at the engine's scraped waiting queue", () => {
    const ep = endpoint();
    ep.acquire(100);
    scraped(ep, 1000, 1, 0.1);
    assert.equal(softSaturation(ep, B, 1010), null, "1 waiting < 2");
    scraped(ep, 1100, 2, 0.1);
    assert.equal(softSaturation(ep, B, 1110), "waiting 2 ≥ 2");
  });

  it("does not hold on a scrape's waiting queue once the engine's prefill of ours ran out after it", () => {
    const ep = endpoint();
    const lease = ep.acquire(100, { uncached: 500, stream: true }, 1000);
    scraped(ep, 1000, 2, 0.1);
    assert.equal(
      softSaturation(ep, B, 1010),
      "waiting 2 ≥ 2",
      "the scrape saw them, and ours is still in prefill",
    );
    lease.firstToken(1050);
    assert.equal(
      softSaturation(ep, B, 1060),
      null,
      "they left the queue since: room without the next scrape",
    );
    scraped(ep, 1100, 2, 0.1);
    assert.equal(softSaturation(ep, B, 1110), "waiting 2 ≥ 2", "a later scrape's waiting ones are not ours");
    lease.release(1200);
  });

  it("is full at the KV bound", () => {
    const ep = endpoint();
    ep.acquire(1);
    scraped(ep, 1000, 0, 0.85);
    assert.equal(saturationOf(ep, B, 1, 1000), "KV 85% ≥ 80%");
  });

  it("treats stale metrics as saturated, with the gateway's own in-flight count as the fallback", () => {
    const ep = endpoint();
    ep.acquire(1);
    scraped(ep, 1000, 0, 0.1);
    const later = 1000 + 2001; // past the staleness bound and the 2 s grace
    assert.equal(saturationOf(ep, B, 1, later), null, "1 in flight < staleMaxInflight 2");
    ep.acquire(1);
    assert.equal(saturationOf(ep, B, 1, later), "metrics stale, in flight 2 ≥ 2");
    const never = endpoint("never-scraped");
    never.acquire(1);
    never.acquire(1);
    assert.match(saturationOf(never, B, 1, later) ?? "", /metrics stale/);
  });

  it("applies the in-flight request and token bounds as hard bounds", () => {
    const ep = endpoint();
    scraped(ep, 1000, 0, 0);
    const bounds = { ...B, maxInflight: 1, maxInflightTokens: 100_000 };
    const lease = ep.acquire(60_000);
    assert.equal(saturationOf(ep, bounds, 1, 1000), "in flight 1 ≥ 1");
    assert.equal(
      saturationOf(ep, { ...bounds, maxInflight: null }, 50_000, 1000),
      "in-flight tokens 60000 + 50000 > 100000",
    );
    assert.equal(saturationOf(ep, { ...bounds, maxInflight: null }, 30_000, 1000), null);
    lease.release();
    assert.equal(
      saturationOf(ep, bounds, 200_000, 1000),
      null,
      "an idle endpoint takes even an oversized request",
    );
  });

  it("admits while one endpoint shows room, offering every endpoint within the hard bounds; a late scrape counts for a grace period", () => {
    const [a, b, c] = [endpoint("a"), endpoint("b"), endpoint("c")];
    for (const e of [a, b, c]) e.acquire(10_000);
    scraped(a, 1000, 5, 0.1); // queue too long
    scraped(b, 1000, 0, 0.1); // room
    scraped(c, 1000, 0, 0.1);
    const bounds = { ...B, maxInflightTokens: 15_000 };
    c.acquire(4_000); // c would pass its token bound with another 2,000
    assert.deepEqual(
      placeable([a, b, c], bounds, 2_000, 1000)?.map((e) => e.name),
      ["a", "b"],
      "b shows room, so the pool admits; a is offered too (prefix affinity may prefer it), c is not",
    );
    scraped(b, 1000, 3, 0.1);
    assert.equal(placeable([a, b, c], bounds, 2_000, 1000), null);
    // b's figures 1.5 s old: past its staleness bound (400 ms), within the grace: read as they are.
    scraped(b, 1000, 0, 0.1);
    assert.equal(softSaturation(b, B, 2500), null);
    b.acquire(1);
    assert.match(softSaturation(b, B, 3500) ?? "", /metrics stale/, "2.5 s old: stale, and 2 in flight ≥ 2");
    assert.equal(overHardBound(b, B, 1, 3500), null);
  });
});

describe("the predicted-wait bound", () => {
  /** Teaches `ep`'s fit: streams of 1,000 tokens on an idle engine, each first-tokened after `ms`. */
  function learn(ep: EndpointState, ms: number, now: number): void {
    for (let i = 0; i < 10; i++) {
      const lease = ep.acquire(0, { uncached: 1000, stream: true }, now);
      lease.firstToken(now + ms);
      lease.release(now + ms);
    }
  }

  it("counts an endpoint full when the prefill it was sent predicts a wait past the bound", () => {
    const now = 10_000;
    const ep = endpoint();
    scraped(ep, now, 0, 0.1);
    learn(ep, 50, now);
    assert.ok(ep.prefill.learned);
    const lease = ep.acquire(100, { uncached: 12_000, stream: true }, now);
    const b = { ...B, maxPredictedWaitMs: 300 };
    assert.match(softSaturation(ep, b, now) ?? "", /^predicted wait \d+ ms ≥ 300 ms$/);
    assert.equal(softSaturation(ep, { ...b, maxPredictedWaitMs: null }, now), null, "null: no bound");
    lease.firstToken(now + 600);
    assert.equal(softSaturation(ep, b, now + 600), null, "its first token freed the engine");
    lease.release(now + 900);
  });

  it("drain (the default): full only while the queued prefill outlasts twice the time a request takes to start", () => {
    const now = 10_000;
    const ep = endpoint();
    scraped(ep, now, 0, 0.1);
    // Learned: 1,000-token prompts first-token in 50 ms on an idle engine, i.e. ~50 ms per 1,000 tokens
    // with the intercept near 0; the refill time is a full step's 8,192 tokens at that rate plus twice
    // the empty prompt's TTFT.
    learn(ep, 50, now);
    assert.equal(DEFAULT_SATURATION.maxPredictedWaitMs, "drain");
    const refill = ep.prefill.refillMs();
    const msPerToken = ep.prefill.poolSlopeAt(0) / 1000;
    assert.ok(Math.abs(refill - (8192 * msPerToken + 2 * ep.prefill.poolPredictAt(0, 0))) < 1e-9);
    // A prompt whose prefill lasts less than the refill time: the engine would run dry while the
    // gateway held the next one, so it still takes it.
    const short = Math.max(1, Math.floor((0.5 * refill) / msPerToken));
    const a = ep.acquire(100, { uncached: short, stream: true }, now);
    assert.equal(softSaturation(ep, B, now), null, `${short} tokens queued last less than ${refill} ms`);
    // Enough queued to keep it busy past the refill time: full, and the reason names the bound.
    const b = ep.acquire(100, { uncached: Math.ceil((2 * refill) / msPerToken), stream: true }, now);
    assert.match(softSaturation(ep, B, now) ?? "", /^predicted wait \d+ ms ≥ \d+ ms \(refill time\)$/);
    // As the head drains (its intercept passed, then the pool's rate), the engine has room again
    // before its queue is empty: the next request arrives while it still works.
    a.firstToken(now + 20);
    const later = now + 20 + 2 * refill;
    assert.equal(softSaturation(ep, B, later), null, "the queue drained below the refill time");
    assert.ok(ep.prefill.pendingTokens > 0, "and there is still prefill queued");
    b.firstToken(later + 1);
    a.release(later + 2);
    b.release(later + 2);
  });

  it("does not hold traffic on the prior before the fit has learned the engine", () => {
    const now = 10_000;
    const ep = endpoint();
    scraped(ep, now, 0, 0.1);
    const lease = ep.acquire(100, { uncached: 50_000, stream: false }, now);
    assert.ok(ep.predictTtftMs(0, now) > 300);
    assert.equal(softSaturation(ep, { ...B, maxPredictedWaitMs: 300 }, now), null);
    lease.release(now);
  });
});
