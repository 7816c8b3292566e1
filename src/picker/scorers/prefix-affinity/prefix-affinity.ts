// Prefix-cache affinity: the share of the prompt's blocks an endpoint probably holds, from the index the
// gateway learns from its own picks (the cycle matches the prompt once; this scorer only divides).

import { scoreBuffer } from "../../framework/cost-model.js";
import type { ScorerPlugin } from "../../framework/plugin.js";
import type { PickerEndpoint, Scorer, ScoringContext } from "../../framework/types.js";

export function prefixAffinityScorer(): Scorer {
  return {
    type: "prefix-affinity",
    category: "affinity",
    yieldsToLoad: true,
    score(ctx: ScoringContext, endpoints: readonly PickerEndpoint[], out?: Float64Array) {
      const n = endpoints.length;
      const o = scoreBuffer(out, n);
      const total = ctx.request.blockHashes.length;
      for (let i = 0; i < n; i++) o[i] = total > 0 ? Math.min(1, (ctx.matchedBlocks[i] ?? 0) / total) : 0;
      return o;
    },
  };
}

/** As the EndpointPicker config names it (scorers/scorers.ts). */
export const prefixAffinity: ScorerPlugin<Record<string, never>> = {
  type: "prefix-affinity",
  params: () => ({}),
  create: () => prefixAffinityScorer(),
};
