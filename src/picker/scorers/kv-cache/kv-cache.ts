// KV-cache headroom: 1 − KV use. Without fresh metrics, the gateway's in-flight tokens over the engine's
// last known capacity stand in; with neither, a neutral 0.5 that cannot sway the pick.

import { clamp01 } from "../../framework/cost-model.js";
import type { PickerEndpoint, Scorer, ScoringContext } from "../../framework/types.js";

export function kvCacheScorer(): Scorer {
  return {
    type: "kv-cache",
    category: "balance",
    score(ctx: ScoringContext, endpoints: readonly PickerEndpoint[]): number[] {
      return endpoints.map((e) => {
        if (ctx.signals === "metrics" && e.kvUsage !== null) return clamp01(1 - e.kvUsage);
        const capacity = (e.numGpuBlocks ?? 0) * (e.blockSize ?? 0);
        return capacity > 0 ? clamp01(1 - e.inflightTokens / capacity) : 0.5;
      });
    },
  };
}
