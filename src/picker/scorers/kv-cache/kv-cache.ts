// KV-cache headroom: 1 − KV use. Without fresh metrics, the gateway's in-flight tokens over the engine's
// last known capacity stand in; with neither, a neutral 0.5 that cannot sway the pick.

import { clamp01, scoreBuffer } from "../../framework/cost-model.js";
import type { ScorerPlugin } from "../../framework/plugin.js";
import type { PickerEndpoint, Scorer, ScoringContext } from "../../framework/types.js";

export function kvCacheScorer(): Scorer {
  return {
    type: "kv-cache",
    category: "balance",
    score(ctx: ScoringContext, endpoints: readonly PickerEndpoint[], out?: Float64Array) {
      const n = endpoints.length;
      const o = scoreBuffer(out, n);
      const fresh = ctx.signals === "metrics";
      for (let i = 0; i < n; i++) {
        const e = endpoints[i]!;
        if (fresh && e.kvUsage !== null) {
          o[i] = clamp01(1 - e.kvUsage);
          continue;
        }
        const capacity = (e.numGpuBlocks ?? 0) * (e.blockSize ?? 0);
        o[i] = capacity > 0 ? clamp01(1 - e.inflightTokens / capacity) : 0.5;
      }
      return o;
    },
  };
}

/** As the EndpointPicker config names it (scorers/scorers.ts). */
export const kvCache: ScorerPlugin<Record<string, never>> = {
  type: "kv-cache",
  params: () => ({}),
  create: () => kvCacheScorer(),
};
