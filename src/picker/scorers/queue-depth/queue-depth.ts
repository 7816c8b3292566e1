// Queue depth: requests waiting ahead on each endpoint, min-max normalised across this pick's candidates
// (the shortest queue scores 1, the longest 0, all equal → 1).

import { invertedMinMax, queuedAhead, scoreBuffer } from "../../framework/cost-model.js";
import type { ScorerPlugin } from "../../framework/plugin.js";
import type { PickerEndpoint, Scorer, ScoringContext } from "../../framework/types.js";

export function queueDepthScorer(): Scorer {
  return {
    type: "queue-depth",
    category: "distribution",
    score(ctx: ScoringContext, endpoints: readonly PickerEndpoint[], out?: Float64Array) {
      const n = endpoints.length;
      const o = scoreBuffer(out, n);
      for (let i = 0; i < n; i++) o[i] = queuedAhead(endpoints[i]!, ctx.signals);
      return invertedMinMax(o, n, o);
    },
  };
}

/** As the EndpointPicker config names it (scorers/scorers.ts). */
export const queueDepth: ScorerPlugin<Record<string, never>> = {
  type: "queue-depth",
  params: () => ({}),
  create: () => queueDepthScorer(),
};
