// LoRA affinity (GIE's formula, plus what the gateway remembers): 1 when the adapter is running, 0.9 when
// it is probably still loaded (the gateway sent it here lately and vLLM keeps idle adapters until it needs
// the slot), 0.8 when a slot is free to load it, 0.6 when it is queued to load, 0 otherwise; 0.5 when the
// engine does not report adapters.

import { scoreBuffer } from "../../framework/cost-model.js";
import type { PickerEndpoint, Scorer, ScoringContext } from "../../framework/types.js";

export function loraAffinityScorer(): Scorer {
  return {
    type: "lora-affinity",
    category: "affinity",
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
  if (l === null) return 0.5;
  const mine = e.adapterRecord;
  if (l.running.includes(lora) || mine?.isActive(lora)) return 1;
  if (mine?.likelyResident(lora)) return 0.9;
  if (l.max === null || l.running.length + l.waiting.length < l.max) return 0.8;
  if (l.waiting.includes(lora)) return 0.6;
  return 0;
}
