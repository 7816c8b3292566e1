// Session affinity: a session key (from a request header) maps to one endpoint by rendezvous hashing,
// which needs no table and moves only the sessions of an endpoint that leaves the candidate set.

import { scoreBuffer } from "../../framework/cost-model.js";
import type { ScorerPlugin } from "../../framework/plugin.js";
import type { PickerEndpoint, Scorer, ScoringContext } from "../../framework/types.js";
import { hashChars } from "../../prefix-index/block-hashes.js";

export function sessionAffinityScorer(): Scorer {
  return {
    type: "session-affinity",
    category: "affinity",
    yieldsToLoad: true,
    score(ctx: ScoringContext, endpoints: readonly PickerEndpoint[], buffer?: Float64Array) {
      const key = ctx.request.sessionKey;
      const out = scoreBuffer(buffer, endpoints.length);
      out.fill(0, 0, endpoints.length);
      if (key === null || endpoints.length === 0) return out;
      const root = hashChars(0, key, 0, key.length);
      let best = 0;
      let bestHash = -1;
      endpoints.forEach((e, i) => {
        const h = hashChars(root, e.name, 0, e.name.length);
        if (h > bestHash) {
          bestHash = h;
          best = i;
        }
      });
      out[best] = 1;
      return out;
    },
  };
}

/** As the EndpointPicker config names it (scorers/scorers.ts). */
export const sessionAffinity: ScorerPlugin<{ header: string }> = {
  type: "session-affinity",
  params: (entry) => ({ header: entry?.string("header") ?? "x-session-id" }),
  create: () => sessionAffinityScorer(),
};
