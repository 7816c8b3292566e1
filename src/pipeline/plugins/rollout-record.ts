// What a request of the rollout stage in force showed (its side, task, token estimate against the
// engine's count, status, TTFT), for the stage's gates (control/rollout-gates.ts).

import type { HookFactory } from "./hook-factory.js";

export const rolloutRecord: HookFactory = (gw) => ({
  name: "rollout-record",
  settle(rec) {
    if (rec.rolloutSide === null) return;
    gw.rollout.record({
      rolloutSide: rec.rolloutSide,
      task: rec.task,
      taskKnown: rec.taskKnown,
      inputTokensEstimated: rec.inputTokensEstimated,
      inputTokensActual: rec.inputTokensActual,
      status: rec.status,
      ttftMs: rec.firstTokenAt - rec.t0,
    });
  },
});
