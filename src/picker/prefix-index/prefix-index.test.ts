// Pins the prefix index: leading-block matches, one global LRU budget across endpoints, per-endpoint
// capacity, removal of an endpoint, and agreement with a plain reference model under random use.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { seededRandom } from "../../testing/fake-endpoint.js";
import { PrefixIndex } from "./prefix-index.js";

const seq = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

describe("PrefixIndex.match", () => {
  it("counts the leading blocks each endpoint holds and stops at the first it lacks", () => {
    const ix = new PrefixIndex({ maxBlocks: 100 });
    ix.record("a", [1, 2, 3, 4]);
    ix.record("b", [1, 2]);
    ix.record("c", [9]);
    assert.deepEqual(
      ix.match([1, 2, 3, 4, 5]),
      new Map([
        ["a", 4],
        ["b", 2],
      ]),
    );
    assert.deepEqual(
      ix.match([1, 7, 8]),
      new Map([
        ["a", 1],
        ["b", 1],
      ]),
    );
    assert.deepEqual(
      ix.match([2, 3]),
      new Map([
        ["a", 2],
        ["b", 1],
      ]),
    );
    assert.deepEqual(ix.match([5]), new Map());
    assert.deepEqual(ix.match([]), new Map());
  });

  it("walked block by block (matchLinear), does not count a block held after a gap", () => {
    // Real block hashes are chained, so a gap cannot arise from records; the reference walk still checks.
    const ix = new PrefixIndex();
    ix.record("a", [1, 3]);
    ix.record("b", [2]);
    assert.deepEqual(ix.matchLinear([1, 2, 3]), new Map([["a", 1]]));
  });

  it("finds each endpoint's run by bisection, agreeing with the block-by-block walk", () => {
    const ix = new PrefixIndex();
    const chain = seq(100, 256);
    ix.record("full", chain);
    ix.record("half", chain.slice(0, 128));
    ix.record("one", chain.slice(0, 1));
    ix.record("odd", chain.slice(0, 77));
    ix.record("other", seq(5000, 40));
    const want = new Map([
      ["full", 256],
      ["half", 128],
      ["one", 1],
      ["odd", 77],
    ]);
    assert.deepEqual(ix.match(chain), want);
    assert.deepEqual(ix.matchLinear(chain), want);
    assert.deepEqual(ix.match([...chain.slice(0, 100), 1]), ix.matchLinear([...chain.slice(0, 100), 1]));
  });

  it("handles endpoints beyond the first 32-bit word", () => {
    const ix = new PrefixIndex({ maxEndpoints: 100 });
    for (let i = 0; i < 100; i++) ix.record(`e${i}`, seq(0, i % 5));
    const m = ix.match(seq(0, 5));
    assert.equal(m.get("e99"), 4);
    assert.equal(m.get("e33"), 3);
    assert.equal(m.has("e35"), false);
  });

  it("refuses a new endpoint past maxEndpoints", () => {
    const ix = new PrefixIndex({ maxEndpoints: 2 });
    assert.equal(ix.record("a", [1]), true);
    assert.equal(ix.record("b", [1]), true);
    assert.equal(ix.record("c", [1]), false);
  });
});

describe("PrefixIndex budget", () => {
  it("never holds more than maxBlocks and evicts the least recently used across endpoints", () => {
    const ix = new PrefixIndex({ maxBlocks: 10 });
    ix.record("a", seq(100, 6));
    ix.record("b", seq(200, 6));
    assert.equal(ix.size, 10);
    // a's prompt went first, recorded last-to-first: its tail blocks 104, 105 went, its head stays.
    assert.equal(ix.match(seq(100, 6)).get("a"), 4);
    assert.equal(ix.match(seq(200, 6)).get("b"), 6);
    assert.equal(ix.blocksOf("a") + ix.blocksOf("b"), 10);
  });

  it("refreshes a re-recorded prompt so it outlives newer but unused ones", () => {
    const ix = new PrefixIndex({ maxBlocks: 8 });
    ix.record("a", seq(1, 4));
    ix.record("b", seq(11, 4));
    ix.record("a", seq(1, 4));
    ix.record("c", seq(21, 4));
    assert.equal(ix.match(seq(1, 4)).get("a"), 4);
    assert.equal(ix.match(seq(11, 4)).size, 0);
  });

  it("caps one endpoint at its capacity without touching the others", () => {
    const ix = new PrefixIndex({ maxBlocks: 1000 });
    ix.record("b", seq(500, 20));
    ix.setEndpointCapacity("a", 5);
    ix.record("a", seq(0, 8));
    assert.equal(ix.blocksOf("a"), 5);
    assert.equal(ix.match(seq(0, 8)).get("a"), 5);
    assert.equal(ix.blocksOf("b"), 20);
    ix.setEndpointCapacity("a", 3);
    assert.equal(ix.match(seq(0, 8)).get("a"), 3);
  });

  it("grows its arrays with use, up to the budget", () => {
    const ix = new PrefixIndex({ maxBlocks: 5000 });
    const small = ix.bytes();
    ix.record("a", seq(0, 5000));
    assert.ok(ix.bytes() > small);
    assert.equal(ix.size, 5000);
    ix.record("a", seq(10_000, 100));
    assert.equal(ix.size, 5000);
    assert.equal(ix.match(seq(10_000, 100)).get("a"), 100);
  });
});

describe("PrefixIndex.removeEndpoint", () => {
  it("forgets the endpoint, frees blocks no one else holds and reuses its slot", () => {
    const ix = new PrefixIndex({ maxEndpoints: 2 });
    ix.record("a", [1, 2, 3]);
    ix.record("b", [1, 2]);
    ix.removeEndpoint("a");
    assert.deepEqual(ix.match([1, 2, 3]), new Map([["b", 2]]));
    assert.equal(ix.size, 2);
    assert.equal(ix.blocksOf("a"), 0);
    assert.equal(ix.record("c", [3]), true);
    assert.deepEqual(ix.match([3]), new Map([["c", 1]]));
  });
});

/**
 * Prompt `p` of `n` blocks, hashed as the gateway does (chained): prompts of one family of 8 share their
 * first `p % 12` blocks (a system prompt), then diverge; any two prompts share only a leading run.
 */
function prompt(p: number, n: number): number[] {
  const shared = p % 12;
  return Array.from({ length: n }, (_, i) => (i < shared ? (p % 8) * 1e6 + i : (p + 8) * 1e6 + i));
}

describe("PrefixIndex against a reference model", () => {
  it("agrees with a Map-based LRU under random records, removals and a tight budget", () => {
    const random = seededRandom(7);
    const budget = 300;
    const ix = new PrefixIndex({ maxBlocks: budget, maxEndpoints: 40 });
    // Reference: hash → set of endpoints, in LRU order (Map keeps insertion order).
    const ref = new Map<number, Set<string>>();
    const names = Array.from({ length: 40 }, (_, i) => `e${i}`);
    for (let step = 0; step < 3000; step++) {
      const name = names[Math.floor(random() * names.length)]!;
      if (random() < 0.02) {
        ix.removeEndpoint(name);
        for (const [h, s] of ref) {
          s.delete(name);
          if (s.size === 0) ref.delete(h);
        }
        continue;
      }
      const hashes = prompt(Math.floor(random() * 400), 1 + Math.floor(random() * 20));
      ix.record(name, hashes);
      for (let i = hashes.length - 1; i >= 0; i--) {
        const h = hashes[i]!;
        const s = ref.get(h) ?? new Set<string>();
        ref.delete(h);
        if (!s.has(name) && ref.size >= budget) ref.delete(ref.keys().next().value!);
        s.add(name);
        ref.set(h, s);
        while (ref.size > budget) ref.delete(ref.keys().next().value!);
      }
      const probe = prompt(Math.floor(random() * 400), 10);
      const want = new Map<string, number>();
      let alive: Set<string> | null = null;
      for (let i = 0; i < probe.length; i++) {
        const s = ref.get(probe[i]!);
        const next: Set<string> = new Set([...(s ?? [])].filter((n) => alive === null || alive.has(n)));
        for (const n of next) want.set(n, i + 1);
        if (next.size === 0) break;
        alive = next;
      }
      assert.deepEqual(ix.match(probe), want, `step ${step}`);
      assert.deepEqual(ix.matchLinear(probe), want, `linear, step ${step}`);
      // The pick's allocation-free form agrees, aligned with a candidate list (unknown names get 0).
      const candidates = [...names.slice(0, 8), "never-seen"].map((name) => ({ name }));
      const out = new Float64Array(candidates.length).fill(-1);
      const longest = ix.matchInto(probe, candidates, out);
      assert.deepEqual(
        Array.from(out),
        candidates.map((c) => want.get(c.name) ?? 0),
        `matchInto at step ${step}`,
      );
      assert.equal(longest > 0, want.size > 0);
      assert.equal(ix.size, ref.size, `size at step ${step}`);
    }
  });
});

describe("PrefixIndex.matchInto with the same candidates call after call", () => {
  it("sees a name that gains a slot, and one that loses it, though the candidate objects stay the same", () => {
    const ix = new PrefixIndex({ maxEndpoints: 4 });
    const candidates = [{ name: "a" }, { name: "b" }];
    const out = new Float64Array(2);
    ix.record("a", [1, 2]);
    ix.matchInto([1, 2], [...candidates], out);
    assert.deepEqual(Array.from(out), [2, 0]);
    ix.record("b", [1]); // b gains a slot after the first call
    ix.matchInto([1, 2], [...candidates], out);
    assert.deepEqual(Array.from(out), [2, 1]);
    ix.removeEndpoint("a");
    ix.record("c", [1, 2]); // c may reuse a's slot
    ix.matchInto([1, 2], [...candidates], out);
    assert.deepEqual(Array.from(out), [0, 1]);
  });
});
