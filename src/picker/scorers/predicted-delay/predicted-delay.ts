// Predicted delay: queue wait plus prefill of the uncached part of the prompt (framework/cost-model.ts),
// min-max normalised, so cache affinity and load are traded in one unit, milliseconds.

import { invertedMinMax, predictedDelayMs, scoreBuffer } from "../../framework/cost-model.js";
import type { ScorerPlugin } from "../../framework/plugin.js";
import type { PickerEndpoint, Scorer, ScoringContext } from "../../framework/types.js";

export function predictedDelayScorer(): Scorer {
  return {
    type: "predicted-delay",
    category: "distribution",
    score(ctx: ScoringContext, endpoints: readonly PickerEndpoint[], out?: Float64Array) {
      const n = endpoints.length;
      const o = scoreBuffer(out, n);
      // The cycle computes the estimate once (the load guard reads the same one); compute it here only
      // when called outside a cycle with a different candidate list.
      if (ctx.delayMs.length === n) return invertedMinMax(ctx.delayMs, n, o);
      for (let i = 0; i < n; i++) {
        o[i] = predictedDelayMs(
          endpoints[i]!,
          ctx.matchedBlocks[i] ?? 0,
          ctx.request.inputTokens,
          ctx.signals,
          ctx.cost,
          ctx.now,
        );
      }
      return invertedMinMax(o, n, o);
    },
  };
}

/** As the EndpointPicker config names it (scorers/scorers.ts). */
export const predictedDelay: ScorerPlugin<Record<string, never>> = {
  type: "predicted-delay",
  params: () => ({}),
  create: () => predictedDelayScorer(),
};
