import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import { learnedPool } from "../testing/test-endpoint.js";
import { LongPrefillGuard, SHORT_SEEN_MS } from "./long-prefill.js";

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
});
