// SGLang Model Gateway's default policy, `cache_aware` (sgl-project/sglang,
// sgl-model-gateway/src/policies/cache_aware.rs at b93974f1, tree in src/tree.rs; defaults of the Python
// launcher, sgl-model-gateway/bindings/python/src/sglang_router/router_args.py at 6614f984, and the
// docs: cache_threshold 0.3, balance_abs_threshold 64, balance_rel_threshold 1.5, eviction every 120 s,
// max_tree_size 2^26 characters).
//
//   load = requests in flight the router sent (worker.load())
//   imbalanced ⇔ max − min > balance_abs_threshold and max > min × balance_rel_threshold
//   imbalanced: the least-loaded worker
//   balanced:   (matched, worker) = tree.prefix_match(text); rate = matched chars / text chars
//               rate > cache_threshold: that worker; else the least-loaded one
//   then the text goes into the tree under the chosen worker (imbalanced too)
//
// The tree holds characters, not tokens, and is learned from the router's own decisions only.

import { CharRadixTree } from "./char-radix-tree.js";
import {
  argBest,
  type PeerAlgorithm,
  type PeerChoice,
  type PeerContext,
  type PeerEndpoint,
  r3,
} from "./peer-algorithm.js";

export interface SglangCacheAwareSettings {
  readonly cacheThreshold: number;
  readonly balanceAbsThreshold: number;
  readonly balanceRelThreshold: number;
  readonly evictionIntervalMs: number;
  readonly maxTreeSize: number;
}

export const SGLANG_DEFAULTS: SglangCacheAwareSettings = {
  cacheThreshold: 0.3,
  balanceAbsThreshold: 64,
  balanceRelThreshold: 1.5,
  evictionIntervalMs: 120_000,
  maxTreeSize: 2 ** 26,
};

export function sglangCacheAware(s: SglangCacheAwareSettings = SGLANG_DEFAULTS): PeerAlgorithm {
  const tree = new CharRadixTree();
  let evictedAt = Number.NaN;
  return {
    name: "sglang-cache-aware",
    follows:
      "sglang@b93974f1 sgl-model-gateway/src/policies/cache_aware.rs, src/tree.rs; router_args.py@6614f984 defaults",
    needsText: true,
    choose(ctx: PeerContext, es: readonly PeerEndpoint[]): PeerChoice {
      if (Number.isNaN(evictedAt)) evictedAt = ctx.now;
      if (ctx.now - evictedAt >= s.evictionIntervalMs) {
        tree.evictTenantsBySize(s.maxTreeSize);
        evictedAt = ctx.now;
      }
      const n = es.length;
      let min = Number.POSITIVE_INFINITY;
      let max = 0;
      for (const e of es) {
        min = Math.min(min, e.inflightRequests);
        max = Math.max(max, e.inflightRequests);
      }
      const leastLoaded = () => argBest(n, (i) => es[i]!.inflightRequests, "least", ctx.random);
      const imbalanced = max - min > s.balanceAbsThreshold && max > min * s.balanceRelThreshold;
      const text = ctx.request.promptText ?? "";
      let index: number;
      let why: string;
      let rate = 0;
      if (imbalanced) {
        index = leastLoaded();
        why = `imbalanced (in flight ${min}–${max}): least loaded`;
      } else {
        const m = tree.prefixMatch(text, ctx.now);
        rate = text.length === 0 ? 0 : m.matched / text.length;
        const matched = m.tenant === null ? -1 : es.findIndex((e) => e.name === m.tenant);
        if (rate > s.cacheThreshold && matched >= 0) {
          index = matched;
          why = `prefix match ${r3(rate)} > ${s.cacheThreshold}`;
        } else {
          index = leastLoaded();
          why =
            rate > s.cacheThreshold
              ? `prefix match ${r3(rate)} on a worker not eligible now: least loaded`
              : `prefix match ${r3(rate)} ≤ ${s.cacheThreshold}: least loaded`;
        }
      }
      tree.insert(text, es[index]!.name, ctx.now);
      const lines = es.map((e, i) => ({
        endpoint: e.name,
        total: i === index ? 1 : 0,
        perScorer: { in_flight: e.inflightRequests, ...(i === index ? { match_rate: r3(rate) } : {}) },
      }));
      return { index, why: `sglang-cache-aware: ${es[index]!.name}: ${why}`, lines };
    },
  };
}
