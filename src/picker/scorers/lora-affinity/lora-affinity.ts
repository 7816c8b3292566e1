// LoRA affinity: 1 when the adapter is running, 0.9 when it is probably still loaded (the gateway sent it
// here lately and vLLM keeps idle adapters until it needs the slot), 0.3 when a slot is free to load it
// (or the engine does not report adapters), 0.2 when it is queued to load, 0 otherwise.
//
// GIE's tiers are 1 / 0.8 / 0.6 / 0; here a load costs more. Each scorer is min-max normalised, so the
// balance scorers (predicted delay 2, in-flight tokens 1, KV 1 by default) swing a full 4 points on a
// one-request difference; at 1 − 0.8 = 0.2 of an affinity weight a hot adapter was loaded wherever the
// queue was one shorter (multi-lora: 127 loads against least-request's 211). With the gap at 0.7 of the
// default weight 6 (4.2 points), an adapter stays where it runs, and the load guard — which this scorer
// yields to, like prefix affinity — spreads it once its engines queue `marginMs` longer than another.

import { scoreBuffer } from "../../framework/cost-model.js";
import type { ScorerPlugin } from "../../framework/plugin.js";
import type { PickerEndpoint, Scorer, ScoringContext } from "../../framework/types.js";

export const LORA_TIERS = {
  running: 1,
  likelyResident: 0.9,
  freeSlot: 0.3,
  unknown: 0.3,
  queued: 0.2,
  full: 0,
} as const;

export function loraAffinityScorer(): Scorer {
  return {
    type: "lora-affinity",
    category: "affinity",
    yieldsToLoad: true,
    score(ctx: ScoringContext, endpoints: readonly PickerEndpoint[], out?: Float64Array) {
      const n = endpoints.length;
      const o = scoreBuffer(out, n);
      const lora = ctx.request.lora;
      for (let i = 0; i < n; i++) o[i] = lora === null ? 1 : tier(endpoints[i]!, lora);
      return o;
    },
  };
}

function tier(e: PickerEndpoint, lora: string): number {
  const l = e.loras;
  if (l === null) return LORA_TIERS.unknown;
  const mine = e.adapterRecord;
  if (l.running.includes(lora) || mine?.isActive(lora)) return LORA_TIERS.running;
  if (mine?.likelyResident(lora)) return LORA_TIERS.likelyResident;
  if (l.max === null || l.running.length + l.waiting.length < l.max) return LORA_TIERS.freeSlot;
  if (l.waiting.includes(lora)) return LORA_TIERS.queued;
  return LORA_TIERS.full;
}

/** As the EndpointPicker config names it (scorers/scorers.ts). */
export const loraAffinity: ScorerPlugin<Record<string, never>> = {
  type: "lora-affinity",
  params: () => ({}),
  create: () => loraAffinityScorer(),
};
