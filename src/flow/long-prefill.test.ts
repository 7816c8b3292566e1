import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_POOL_FLOW } from "../config/inference-pool.js";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import { endpoint, learnedPool } from "../testing/test-endpoint.js";
import { LongPrefillGuard, RIVAL_RESERVE_UTILIZATION, SHORT_SEEN_MS } from "./long-prefill.js";
import { PoolFlow } from "./pool-flow.js";

/** Four endpoints whose fits have learned 50 ms per 1,000 prompt tokens (+ 20 ms). */
function pool(n = 4): EndpointState[] {
  const eps = learnedPool(n);
  assert.ok(eps.every((e) => e.prefill.learned));
  return eps;
}

const NOW = 1_000_000;

describe("LongPrefillGuard", () => {
  it("holds a long prompt that would leave no endpoint free of long prefills while short ones arrive", () => {
    const eps = pool();
    const guard = new LongPrefillGuard({ minPrefillMs: 150, shortReserve: 0.25 });
    // A short prompt (300 tokens, ~15 ms of its own) is never held, and is noted.
    assert.equal(guard.holds(eps, eps[0]!, 300, NOW), null);
    // Three endpoints start long prefills (6,000 tokens, ~300 ms each): the first three go.
    const leases = [];
    for (let i = 0; i < 3; i++) {
      assert.equal(guard.holds(eps, eps[i]!, 6000, NOW), null, `long prompt ${i} goes`);
      leases.push(eps[i]!.acquire(6000, { uncached: 6000, stream: true }, NOW));
    }
    // A fourth would take the last free endpoint: held, with the reason.
    const why = guard.holds(eps, eps[3]!, 6000, NOW);
    assert.match(why ?? "", /3 of 4 endpoints prefill a long prompt, 1 kept for short ones/);
    // Behind an endpoint already prefilling a long prompt it may still queue.
    assert.equal(guard.holds(eps, eps[0]!, 6000, NOW), null);
    // A short prompt is not held and goes to the free endpoint as the picker chose.
    assert.equal(guard.holds(eps, eps[3]!, 400, NOW), null);
    // A long prefill ends (its first token): the held prompt may go.
    leases[1]!.firstToken(NOW + 300);
    assert.equal(guard.holds(eps, eps[3]!, 6000, NOW + 300), null);
    for (const l of leases) l.release();
    for (const e of eps) assert.equal(e.prefill.largestPendingTokens(), 0, "every exit path clears it");
  });

  it("never holds when no short prompt was seen lately, the reserve rounds to 0, or it is off", () => {
    const eps = pool();
    const leases = [0, 1, 2].map((i) => eps[i]!.acquire(6000, { uncached: 6000, stream: true }, NOW));
    const guard = new LongPrefillGuard({ minPrefillMs: 150, shortReserve: 0.25 });
    assert.equal(guard.holds(eps, eps[3]!, 6000, NOW), null, "a pool of long prompts alone keeps its width");
    guard.holds(eps, eps[3]!, 200, NOW);
    assert.notEqual(guard.holds(eps, eps[3]!, 6000, NOW + 10), null);
    assert.equal(guard.holds(eps, eps[3]!, 6000, NOW + SHORT_SEEN_MS + 1), null, "the short ones stopped");
    const three = eps.slice(1);
    guard.holds(three, three[2]!, 200, NOW);
    assert.equal(guard.holds(three, three[2]!, 6000, NOW), null, "⌊3 × 0.25⌋ = 0 kept");
    const off = new LongPrefillGuard({ minPrefillMs: null, shortReserve: 0.25 });
    off.holds(eps, eps[3]!, 200, NOW);
    assert.equal(off.holds(eps, eps[3]!, 6000, NOW), null);
    for (const l of leases) l.release();
  });

  it("judges a prompt by its own prefill time on the engine, not by its tokens", () => {
    const eps = pool();
    const guard = new LongPrefillGuard({ minPrefillMs: 400, shortReserve: 0.25 });
    guard.holds(eps, eps[3]!, 200, NOW);
    // 6,000 tokens at 50 ms per 1,000 is 300 ms: under 400, not long.
    const leases = [0, 1, 2].map((i) => eps[i]!.acquire(6000, { uncached: 6000, stream: true }, NOW));
    assert.equal(guard.holds(eps, eps[3]!, 6000, NOW), null);
    for (const l of leases) l.release();
  });

  describe("for a rival pool of higher priority on the same engines", () => {
    /** The live pool's guard places `count` prompts of 2,000 tokens (100 ms each) `everyMs` apart, up to NOW. */
    function rivalPlacing(eps: EndpointState[], count: number, everyMs: number): LongPrefillGuard {
      const live = new LongPrefillGuard();
      live.watched = true;
      for (let i = count - 1; i >= 0; i--)
        assert.equal(live.holds(eps, eps[3]!, 2000, NOW - i * everyMs), null);
      return live;
    }

    it("keeps endpoints free of its long prefills while the rival sends, as many as the rival's prefill load needs", () => {
      const eps = pool();
      // Off in its own settings: the rival turns it on.
      const batch = new LongPrefillGuard();
      const light = rivalPlacing(eps, 10, 100);
      batch.rivals.push(light);
      // Ten 100 ms prefills in the last second: an occupancy of ~0.19 over the 5 s average, one endpoint kept.
      assert.ok(light.demand(NOW) > 0.15 && light.demand(NOW) < 0.25, `${light.demand(NOW)}`);
      const leases = [];
      for (let i = 0; i < 3; i++) {
        assert.equal(batch.holds(eps, eps[i]!, 40_000, NOW), null, `long prompt ${i} goes`);
        leases.push(eps[i]!.acquire(40_000, { uncached: 40_000, stream: false }, NOW));
      }
      assert.match(
        batch.holds(eps, eps[3]!, 40_000, NOW) ?? "",
        /3 of 4 endpoints .*, 1 kept for higher-priority pools/,
      );
      // Its short prompts are never held.
      assert.equal(batch.holds(eps, eps[3]!, 1000, NOW), null);
      // The rival goes quiet: nothing is kept for it.
      assert.equal(batch.holds(eps, eps[3]!, 40_000, NOW + SHORT_SEEN_MS + 1), null);
      for (const l of leases) l.release();
    });

    it("keeps more for a busier rival, never every endpoint", () => {
      const eps = pool();
      const batch = new LongPrefillGuard();
      // 40 prefills of 100 ms in a second: ~0.8 of an endpoint, so 0.8 / 0.5 → 2 kept.
      const busy = rivalPlacing(eps, 40, 25);
      batch.rivals.push(busy);
      assert.equal(Math.ceil(busy.demand(NOW) / RIVAL_RESERVE_UTILIZATION), 2);
      const first = eps[0]!.acquire(40_000, { uncached: 40_000, stream: false }, NOW);
      assert.equal(batch.holds(eps, eps[1]!, 40_000, NOW), null, "two of four prefill: two kept");
      const second = eps[1]!.acquire(40_000, { uncached: 40_000, stream: false }, NOW);
      assert.match(batch.holds(eps, eps[2]!, 40_000, NOW) ?? "", /2 kept for higher-priority pools/);
      // A rival far past one pool's worth still leaves this pool one endpoint.
      const flood = rivalPlacing(eps, 200, 5);
      const alone = new LongPrefillGuard();
      alone.rivals.push(flood);
      const two = eps.slice(2);
      assert.equal(alone.holds(two, two[0]!, 40_000, NOW), null, "1 of 2 may prefill");
      first.release();
      second.release();
    });

    it("before any fit is learned, leans towards the rival: the prior's slower prefill keeps more", () => {
      const eps = Array.from({ length: 4 }, (_, i) => endpoint(`cold${i}`));
      for (const e of eps) e.prefill.peers = eps.map((x) => x.prefill);
      assert.ok(eps.every((e) => !e.prefill.learned));
      const live = new LongPrefillGuard();
      live.watched = true;
      // Twenty 2,000-token prompts in the last second: 200 ms each at the prior's 0.1 ms per token, an
      // occupancy of ~0.7 (learned at 50 ms per 1,000 tokens it would be half that, and one kept).
      for (let i = 19; i >= 0; i--) live.holds(eps, eps[3]!, 2000, NOW - i * 50);
      assert.equal(Math.ceil(live.demand(NOW) / RIVAL_RESERVE_UTILIZATION), 2);
      const batch = new LongPrefillGuard();
      batch.rivals.push(live);
      const first = eps[0]!.acquire(40_000, { uncached: 40_000, stream: false }, NOW);
      assert.equal(batch.holds(eps, eps[1]!, 40_000, NOW), null);
      const second = eps[1]!.acquire(40_000, { uncached: 40_000, stream: false }, NOW);
      assert.match(batch.holds(eps, eps[2]!, 40_000, NOW) ?? "", /2 kept for higher-priority pools/);
      // Its own rule waits for the fit, as before.
      const own = new LongPrefillGuard({ minPrefillMs: 150, shortReserve: 0.5 });
      own.holds(eps, eps[3]!, 200, NOW);
      assert.equal(own.holds(eps, eps[2]!, 40_000, NOW), null);
      first.release();
      second.release();
    });

    it("is wired when pools share an engine: the lower priority pool's guard watches the higher one's", () => {
      const high = new PoolFlow("live", DEFAULT_POOL_FLOW);
      const low = new PoolFlow("batch", DEFAULT_POOL_FLOW);
      low.addRival(high);
      low.addRival(high);
      assert.deepEqual(low.longPrefill.rivals, [high.longPrefill]);
      assert.deepEqual(high.longPrefill.rivals, []);
      assert.ok(high.longPrefill.watched && !low.longPrefill.watched, "only a watched pool notes its demand");
      low.reconfigure(DEFAULT_POOL_FLOW);
      assert.deepEqual(low.longPrefill.rivals, [], "a reload names the rivals again");
      high.close("test");
      low.close("test");
    });
  });
});
