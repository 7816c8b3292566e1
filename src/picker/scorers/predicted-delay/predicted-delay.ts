// Predicted delay: queue wait plus prefill of the uncached part of the prompt (framework/cost-model.ts),
// min-max normalised, so cache affinity and load are traded in one unit, milliseconds.

import { invertedMinMax, predictedDelayMs } from "../../framework/cost-model.js";
import type { PickerEndpoint, Scorer, ScoringContext } from "../../framework/types.js";

export function predictedDelayScorer(): Scorer {
  return {
    type: "predicted-delay",
    category: "distribution",
    score(ctx: ScoringContext, endpoints: readonly PickerEndpoint[]): number[] {
      // The cycle computes the estimate once (the load guard reads the same one); recompute only
      // when called outside a cycle with a different candidate list.
      const delays =
        ctx.delayMs.length === endpoints.length
          ? ctx.delayMs
          : endpoints.map((e, i) =>
              predictedDelayMs(e, ctx.matchedBlocks[i] ?? 0, ctx.request.inputTokens, ctx.signals, ctx.cost),
            );
      return invertedMinMax(delays);
    },
  };
}
