// Prefix-cache affinity: the share of the prompt's blocks an endpoint probably holds, from the index the
// gateway learns from its own picks (the cycle matches the prompt once; this scorer only divides).

import type { PickerEndpoint, Scorer, ScoringContext } from "../../framework/types.js";

export function prefixAffinityScorer(): Scorer {
  return {
    type: "prefix-affinity",
    category: "affinity",
    yieldsToLoad: true,
    score(ctx: ScoringContext, endpoints: readonly PickerEndpoint[]): number[] {
      const total = ctx.request.blockHashes.length;
      return endpoints.map((_, i) => (total > 0 ? Math.min(1, (ctx.matchedBlocks[i] ?? 0) / total) : 0));
    },
  };
}
