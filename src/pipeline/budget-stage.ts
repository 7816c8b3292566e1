// The budget stage of the request path (seed 004's InferenceBudget): after the route decision, before the
// queue, a budgeted tenant's request reserves its estimated input, its max output and one concurrency
// slot — or is refused with the budget it would break, used and limit, and when trying again can help.
// The end of the request, whatever it was, settles the reservation with the engine's usage (the
// budget-settle plugin); a request that never reached an engine spent nothing.

import { type Admission, BudgetStoreUnavailable } from "../budget/budget-ledger.js";
import type { BudgetRefusal } from "../budget/budget-types.js";
import type { GatewayConfigSet } from "../config/config-set.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { RequestPlan } from "../plan/request-plan.js";
import type { RequestRecord } from "./request-record.js";
import type { GatewayRuntime } from "./runtime.js";

const FALLBACKS: Readonly<Record<BudgetRefusal["code"], readonly string[]>> = {
  budget_exceeded: ["retry_later", "reduce_input", "reduce_max_tokens"],
  concurrency_limit: ["retry_later"],
  outside_allowed_window: ["retry_later"],
  input_too_large: ["reduce_input", "split_input"],
};

/** Whether the tenant has a budget in the request's config (others are not counted: no cost for them). */
export function budgeted(config: GatewayConfigSet, tenant: string | null): tenant is string {
  return tenant !== null && config.budgets.tenants.has(tenant);
}

/** Reserves the request's share of its tenant's budget (kept on `rec`), or throws the refusal. */
export async function admitToBudget(
  gw: GatewayRuntime,
  tenant: string,
  plan: RequestPlan,
  rec: RequestRecord,
): Promise<void> {
  const { decision } = plan;
  let admission: Admission;
  try {
    admission = await gw.budgets.admit({
      tenant,
      inputTokens: decision.inputTokens,
      maxOutputTokens: decision.maxTokens,
      now: new Date(),
    });
  } catch (err) {
    if (!(err instanceof BudgetStoreUnavailable)) throw err;
    throw new GatewayError("budget_store_unavailable", err.message, {
      route: decision.pool,
      retryAfterSeconds: 1,
      fallbackOptions: ["retry_later"],
    });
  }
  if (admission.ok) {
    rec.reservation = admission.reservation;
    return;
  }
  const r = admission.refusal;
  throw new GatewayError(r.code, r.message, {
    param: r.code === "input_too_large" ? (plan.profile.kind === "chat" ? "messages" : "prompt") : null,
    retryAfterSeconds: r.retryAfterSeconds,
    route: decision.pool,
    fallbackOptions: FALLBACKS[r.code],
    details: { tenant, budget: r.budget, used: r.used, limit: r.limit },
  });
}
