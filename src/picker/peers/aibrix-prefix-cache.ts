// AIBrix's `prefix-cache` routing strategy (vllm-project/aibrix at e3e10f9e,
// pkg/plugins/gateway/algorithms/prefix_cache.go and prefix_cache_readme.md; defaults
// IMBALANCE_ABS_COUNT 16, STANDARD_DEVIATION_FACTOR 2).
//
//   running = requests in flight the gateway sent (realtime_num_requests_running)
//   max − min running > 16: the least-loaded pod
//   else: the pods holding some of the prompt, by match % descending, then running ascending; the first
//         with running ≤ mean + 2σ (over every candidate); none: the least-loaded pod
//
// Match % is the share of the prompt's blocks a pod holds, from an index of the gateway's own decisions
// (AIBrix's default; its KV-event sync is optional). AIBrix hashes 128-character blocks of a character
// tokenizer; the pool's index hashes its own block size: a named difference of granularity only.

import {
  argBest,
  type PeerAlgorithm,
  type PeerChoice,
  type PeerContext,
  type PeerEndpoint,
  r3,
} from "./peer-algorithm.js";

export const AIBRIX_DEFAULTS = { imbalanceAbsCount: 16, standardDeviationFactor: 2 } as const;

export function aibrixPrefixCache(s = AIBRIX_DEFAULTS): PeerAlgorithm {
  return {
    name: "aibrix-prefix-cache",
    follows: "aibrix@e3e10f9e pkg/plugins/gateway/algorithms/prefix_cache.go, prefix_cache_readme.md",
    needsText: false,
    choose(ctx: PeerContext, es: readonly PeerEndpoint[]): PeerChoice {
      const n = es.length;
      const running = (i: number) => es[i]!.inflightRequests;
      let min = Number.POSITIVE_INFINITY;
      let max = 0;
      let sum = 0;
      for (let i = 0; i < n; i++) {
        min = Math.min(min, running(i));
        max = Math.max(max, running(i));
        sum += running(i);
      }
      const mean = sum / n;
      let sq = 0;
      for (let i = 0; i < n; i++) sq += (running(i) - mean) ** 2;
      const bound = mean + s.standardDeviationFactor * Math.sqrt(sq / n);
      const blocks = ctx.request.blockHashes.length;
      const match = (i: number) => (blocks === 0 ? 0 : ctx.matchedBlocks[i]! / blocks);
      const leastLoaded = () => argBest(n, running, "least", ctx.random);
      let index: number;
      let why: string;
      if (max - min > s.imbalanceAbsCount) {
        index = leastLoaded();
        why = `imbalanced (running ${min}–${max} > ${s.imbalanceAbsCount} apart): least loaded`;
      } else {
        const matching = [...Array(n).keys()]
          .filter((i) => match(i) > 0)
          .sort((a, b) => match(b) - match(a) || running(a) - running(b));
        const fit = matching.find((i) => running(i) <= bound);
        if (fit !== undefined) {
          index = fit;
          why = `prefix match ${r3(match(fit))} with running ${running(fit)} ≤ mean + 2σ ${r3(bound)}`;
        } else {
          index = leastLoaded();
          why =
            matching.length === 0
              ? "no pod holds the prefix: least loaded"
              : "every match over mean + 2σ: least loaded";
        }
      }
      const lines = es.map((e, i) => ({
        endpoint: e.name,
        total: r3(match(i)),
        perScorer: { match: r3(match(i)), running: running(i) },
      }));
      return { index, why: `aibrix-prefix-cache: ${es[index]!.name}: ${why}`, lines };
    },
  };
}
