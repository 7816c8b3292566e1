// Tenant budgets (seed 004's InferenceBudget) as validated, frozen values, and the refusal a budget gives.
// Parsing lives in budget-config.ts, clock arithmetic in time-window.ts, accounting in budget-ledger.ts.

/** A daily span of local wall-clock time, [start, end) in minutes since midnight; start > end crosses midnight. */
export interface TimeWindow {
  /** 0..1439. */
  readonly startMinutes: number;
  /** 1..1440 (1440 is "24:00"); equal to start is never valid. */
  readonly endMinutes: number;
}

/** One tenant's limits; null = unlimited. */
export interface TenantBudget {
  readonly name: string;
  readonly dailyInputTokens: number | null;
  readonly dailyOutputTokens: number | null;
  readonly concurrentRequests: number | null;
  readonly maxSingleInputTokens: number | null;
  /** Local-time windows the tenant may send in; empty = always allowed. */
  readonly allowedWindows: readonly TimeWindow[];
}

/** One validated InferenceBudget document, before documents are merged. */
export interface BudgetDocument {
  /** metadata.name. */
  readonly name: string;
  /** IANA zone; "UTC" when the document does not say. */
  readonly timeZone: string;
  /** Local time the budget day starts, minutes since midnight (0..1439); 0 when the document does not say. */
  readonly dayStartsAtMinutes: number;
  readonly tenants: readonly TenantBudget[];
}

/** Every InferenceBudget document merged: the one budget config the gateway enforces. */
export interface BudgetConfig {
  readonly timeZone: string;
  readonly dayStartsAtMinutes: number;
  readonly tenants: ReadonlyMap<string, TenantBudget>;
}

export const BUDGET_REFUSAL_CODES = [
  "budget_exceeded",
  "concurrency_limit",
  "outside_allowed_window",
  "input_too_large",
] as const;
export type BudgetRefusalCode = (typeof BUDGET_REFUSAL_CODES)[number];

/** The TenantBudget field a refusal is about. */
export type BudgetName =
  | "dailyInputTokens"
  | "dailyOutputTokens"
  | "concurrentRequests"
  | "maxSingleInputTokens"
  | "allowedWindows";

/** Why a tenant's request was not admitted, in terms a client can act on. */
export interface BudgetRefusal {
  readonly code: BudgetRefusalCode;
  /** Says which budget, used and limit, and what the caller can do. */
  readonly message: string;
  readonly budget: BudgetName;
  /** Used so far (tokens, or requests in flight) — for input_too_large the request's own input; null for windows. */
  readonly used: number | null;
  readonly limit: number | null;
  /** When trying again can succeed: the next window, the next budget day, a freed slot; null when waiting does not help. */
  readonly retryAfterSeconds: number | null;
}

/** An empty budget config: no tenant limited. */
export const NO_BUDGETS: BudgetConfig = Object.freeze({
  timeZone: "UTC",
  dayStartsAtMinutes: 0,
  tenants: new Map<string, TenantBudget>(),
});
