// Settles what a budgeted request reserved (budget-stage.ts), whatever became of it: the engine's usage
// when it reported one; nothing when no token came back (never sent, refused by the gateway or the
// engine, failed before its first token); else — a stream cut after it started, a client gone
// mid-answer — the reservation, which is the most it can have cost.

import type { HookFactory } from "./hook-factory.js";

export const budgetSettle: HookFactory = (gw) => ({
  name: "budget-settle",
  settle(rec) {
    const reservation = rec.reservation;
    if (reservation === null) return;
    const known = rec.inputTokensActual !== null || rec.outputTokens !== null;
    const nothing = !known && (!Number.isFinite(rec.firstTokenAt) || rec.status === "engine_rejected");
    const settled = gw.budgets.settle(reservation, {
      inputTokens: nothing ? 0 : rec.inputTokensActual,
      outputTokens: nothing ? 0 : rec.outputTokens,
    });
    settled.catch((err: unknown) =>
      gw.log.event("budget.settle-failed", { tenant: reservation.tenant, error: String(err) }),
    );
  },
});
