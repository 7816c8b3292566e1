// Each peer algorithm on hand-built endpoint states: its choice and figures are the formula in its source.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type FakeEndpoint, fakeEndpoint, pickRequest, seededRandom } from "../../testing/fake-endpoint.js";
import type { PickRequest } from "../framework/types.js";
import { aibrixPrefixCache } from "./aibrix-prefix-cache.js";
import { dynamoCost, dynamoKv } from "./dynamo-kv.js";
import { llmD } from "./llm-d.js";
import type { PeerContext, PeerEndpoint } from "./peer-algorithm.js";
import { sglangCacheAware } from "./sglang-cache-aware.js";

type Peer = FakeEndpoint & { pendingPrefillTokens?: number; inflightPromptTokens?: number };
const ep = (name: string, over: Partial<Peer> = {}): Peer => ({ ...fakeEndpoint(name), ...over });

function ctx(
  over: { request?: Partial<PickRequest>; matched?: number[]; now?: number; seed?: number } = {},
): PeerContext {
  return {
    request: pickRequest({ blockHashes: new Float64Array(8), ...over.request }),
    now: over.now ?? 0,
    matchedBlocks: over.matched ?? [],
    tokensPerBlock: 16,
    random: seededRandom(over.seed ?? 1),
  };
}

describe("llm-d (GIE default: 2·queue + 2·kv + 3·prefix, max score)", () => {
  it("sums the three scorers as their sources define them and takes the highest", () => {
    const es = [
      ep("a", { waiting: 0, kvUsage: 0.2 }),
      ep("b", { waiting: 4, kvUsage: 0.5 }),
      ep("c", { waiting: 8, kvUsage: 0.9 }),
    ];
    // queue (8−q)/8: 1, 0.5, 0; kv 1−u: 0.8, 0.5, 0.1; prefix m/8: 0, 0.5, 1.
    const c = llmD().choose(ctx({ matched: [0, 4, 8] }), es);
    assert.deepEqual(
      c.lines.map((l) => l.total),
      [3.6, 3.5, 3.2],
    );
    assert.equal(c.index, 0);
    assert.deepEqual(c.lines[2]!.perScorer, { queue: 0, kv: 0.1, prefix: 1 });
    // With every queue equal each scores 1, and the prefix decides.
    const even = es.map((e) => ({ ...e, waiting: 3, kvUsage: 0.5 }));
    assert.equal(llmD().choose(ctx({ matched: [0, 4, 8] }), even).index, 2);
    assert.match(c.why, /llm-d: a scored 3.6 = 2·queue 1 \+ 2·kv 0.8 \+ 3·prefix 0/);
  });

  it("breaks ties uniformly at random", () => {
    const es = [ep("a"), ep("b"), ep("c")];
    const seen = new Map<number, number>();
    for (let s = 1; s <= 300; s++) {
      const i = llmD().choose(ctx({ matched: [0, 0, 0], seed: s }), es).index;
      seen.set(i, (seen.get(i) ?? 0) + 1);
    }
    assert.equal(seen.size, 3);
    for (const k of seen.values()) assert.ok(k > 60, `each tie chosen about a third of the time: ${k}`);
  });
});

describe("sglang-cache-aware (cache_aware: imbalance → least load; match rate > 0.3 → the tree's worker)", () => {
  const text = (s: string) => ({ request: { promptText: s } });

  it("sends a new prompt to the least loaded worker, then the same prefix to it while balanced", () => {
    const peer = sglangCacheAware();
    const es = [
      ep("a", { inflightRequests: 3 }),
      ep("b", { inflightRequests: 1 }),
      ep("c", { inflightRequests: 2 }),
    ];
    const first = peer.choose(ctx(text("system: you summarise tickets. ticket 1")), es);
    assert.equal(first.index, 1, "least loaded");
    assert.match(first.why, /prefix match 0 ≤ 0.3: least loaded/);
    // 40 of 41 characters shared: rate 0.97 > 0.3, to b although a and c are less loaded now.
    es[1]!.inflightRequests = 9;
    const again = peer.choose(ctx(text("system: you summarise tickets. ticket 2")), es);
    assert.equal(again.index, 1);
    assert.match(again.why, /prefix match 0.97\d* > 0.3/);
  });

  it("a match rate at or under 0.3 goes to the least loaded worker", () => {
    const peer = sglangCacheAware();
    const es = [ep("a", { inflightRequests: 0 }), ep("b", { inflightRequests: 5 })];
    peer.choose(ctx(text("abcdefghij")), es); // into a
    es[0]!.inflightRequests = 6;
    // "abc" of "abcXXXXXXX": 3 of 10 = 0.3, not over the threshold.
    assert.equal(peer.choose(ctx(text("abcXXXXXXX")), es).index, 1);
  });

  it("imbalanced (max − min > 64 and max > 1.5 × min): the least loaded, whatever the tree says", () => {
    const peer = sglangCacheAware();
    const es = [ep("a", { inflightRequests: 0 }), ep("b", { inflightRequests: 0 })];
    peer.choose(ctx(text("the same long prompt")), es); // into a (tie at 0 → seeded)
    const owner = peer.choose(ctx(text("the same long prompt")), es).index;
    es[owner]!.inflightRequests = 70;
    es[1 - owner]!.inflightRequests = 5;
    const c = peer.choose(ctx(text("the same long prompt")), es);
    assert.equal(c.index, 1 - owner);
    assert.match(c.why, /imbalanced \(in flight 5–70\): least loaded/);
    // 65 apart but not 1.5×: balanced, so the tree's worker again.
    es[owner]!.inflightRequests = 200;
    es[1 - owner]!.inflightRequests = 135;
    assert.equal(peer.choose(ctx(text("the same long prompt")), es).index, owner);
  });
});

describe("dynamo-kv (cost = overlap_weight × prefill_blocks + decode_blocks, least cost)", () => {
  it("counts pending prefill, the uncached part of the request and the active blocks, by block size", () => {
    const e: PeerEndpoint = ep("a", { blockSize: 16, pendingPrefillTokens: 160, inflightPromptTokens: 320 });
    assert.deepEqual(dynamoCost(e, 480, 160), { prefillBlocks: 30, decodeBlocks: 20, cost: 50 });
    assert.deepEqual(dynamoCost(e, 480, 160, 0.5), { prefillBlocks: 30, decodeBlocks: 20, cost: 35 });
  });

  it("takes the worker with the least cost: the docs' three-worker example", () => {
    // docs/architecture/kv_cache_routing.md: W1 8 + 10 = 18, W2 5 + 5 = 10 (chosen), W3 2 + 9 = 11. Here
    // each worker's prefill blocks come from a 160-token request (10 blocks) less its cached blocks.
    const es = [
      ep("w1", { pendingPrefillTokens: 0, inflightPromptTokens: 160 }),
      ep("w2", { pendingPrefillTokens: 0, inflightPromptTokens: 80 }),
      ep("w3", { pendingPrefillTokens: 0, inflightPromptTokens: 144 }),
    ];
    const c = dynamoKv().choose(ctx({ request: { inputTokens: 160 }, matched: [2, 5, 8] }), es);
    assert.deepEqual(
      c.lines.map((l) => l.total),
      [18, 10, 11],
    );
    assert.equal(c.index, 1);
    assert.match(c.why, /w2 at the least cost 10 = 5 prefill \+ 5 decode blocks/);
  });
});

describe("aibrix-prefix-cache (imbalance > 16 → least loaded; else best match within mean + 2σ)", () => {
  it("goes to the least loaded pod when running counts are more than 16 apart", () => {
    const es = [
      ep("a", { inflightRequests: 20 }),
      ep("b", { inflightRequests: 2 }),
      ep("c", { inflightRequests: 10 }),
    ];
    const c = aibrixPrefixCache().choose(ctx({ matched: [8, 0, 0] }), es);
    assert.equal(c.index, 1);
    assert.match(c.why, /imbalanced/);
  });

  it("takes the best match whose running count is within mean + 2σ, the less loaded of equal matches", () => {
    const es = [
      ep("a", { inflightRequests: 5 }),
      ep("b", { inflightRequests: 3 }),
      ep("c", { inflightRequests: 0 }),
      ep("d", { inflightRequests: 4 }),
    ];
    // a and b hold 6 of 8 blocks, d 2; b is the less loaded of the best.
    assert.equal(aibrixPrefixCache().choose(ctx({ matched: [6, 6, 0, 2] }), es).index, 1);
    // Nobody holds anything: the least loaded.
    assert.equal(aibrixPrefixCache().choose(ctx({ matched: [0, 0, 0, 0] }), es).index, 2);
  });

  it("skips a match loaded past mean + 2σ", () => {
    // Running 16 and fifteen 0s: mean 1, σ ≈ 3.87, bound ≈ 8.75; the holder at 16 is skipped.
    const es = [ep("hot", { inflightRequests: 16 }), ...Array.from({ length: 15 }, (_, i) => ep(`e${i}`))];
    const matched = [8, ...Array(15).fill(0)];
    const c = aibrixPrefixCache().choose(ctx({ matched }), es);
    assert.notEqual(c.index, 0);
    assert.match(c.why, /every match over mean \+ 2σ: least loaded/);
  });
});
