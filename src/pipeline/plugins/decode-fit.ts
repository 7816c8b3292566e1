// The prefill view learns the engine's step law from each answered stream's decode too: the output
// token count the engine reported, once the attempt's claim has ended (endpoints/prefill-claim.ts).

import type { HookFactory } from "./hook-factory.js";

export const decodeFit: HookFactory = () => ({
  name: "decode-fit",
  attemptEnd(a, end) {
    if (end.kind === "answered") a.lease.prefill?.reportOutput(end.usage?.completionTokens ?? 0);
  },
});
