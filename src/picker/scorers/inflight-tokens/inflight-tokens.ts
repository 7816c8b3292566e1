// In-flight tokens: the gateway's own count of tokens it has sent each endpoint and not yet seen finish.
// Updated by the caller at decision time, so it moves within a burst where scraped metrics cannot.

import { scoreBuffer } from "../../framework/cost-model.js";
import type { ScorerPlugin } from "../../framework/plugin.js";
import type { PickerEndpoint, Scorer, ScoringContext } from "../../framework/types.js";

/**
 * Score 1 − tokens / max(most loaded, floorTokens). The floor keeps a few short requests from looking
 * like a full-range difference when the pool is nearly idle.
 */
export function inflightTokensScorer(floorTokens = 8192): Scorer {
  return {
    type: "inflight-tokens",
    category: "balance",
    score(_ctx: ScoringContext, endpoints: readonly PickerEndpoint[], out?: Float64Array) {
      const n = endpoints.length;
      const o = scoreBuffer(out, n);
      let max = floorTokens;
      for (let i = 0; i < n; i++) if (endpoints[i]!.inflightTokens > max) max = endpoints[i]!.inflightTokens;
      for (let i = 0; i < n; i++) o[i] = 1 - endpoints[i]!.inflightTokens / max;
      return o;
    },
  };
}

/** As the EndpointPicker config names it (scorers/scorers.ts). */
export const inflightTokens: ScorerPlugin<{ floorTokens: number }> = {
  type: "inflight-tokens",
  params: (entry) => ({ floorTokens: entry?.int("floorTokens", { min: 1 }) ?? 8192 }),
  create: (p) => inflightTokensScorer(p.floorTokens),
};
