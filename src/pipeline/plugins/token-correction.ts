// The gateway's token estimate learns from the engine's count: each answer that reports its prompt
// tokens corrects the estimate of its served base model (adapters share its tokenizer).

import type { HookFactory } from "./hook-factory.js";

export const tokenCorrection: HookFactory = (gw) => ({
  name: "token-correction",
  attemptEnd(a, end) {
    if (end.kind !== "answered" || end.usage === null || end.usage.promptTokens === null) return;
    const { plan } = a;
    gw.correction.observe(plan.decision.baseModel, plan.profile.inputTokensRaw, end.usage.promptTokens);
  },
});
