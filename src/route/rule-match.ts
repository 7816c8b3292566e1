// Checks one InferenceRoute rule's conditions against a request, saying which condition decided.
import type { RoutePool, RouteRule } from "../config/route-types.js";
import type { RouteProfile } from "./route-decision.js";

export type ConditionCheck =
  | { readonly holds: true; readonly facts: string }
  | { readonly holds: false; readonly why: string };

const HOLDS: ConditionCheck = { holds: true, facts: "" };
const FAILS: ConditionCheck = { holds: false, why: "" };

/**
 * Whether every condition of `rule.when` holds; the first one that fails is named. Without `detail`, the
 * same answer with empty texts (the request path does not read them, and builds none).
 */
export function checkConditions(rule: RouteRule, p: RouteProfile, detail = true): ConditionCheck {
  const w = rule.when;
  const fail = (why: () => string): ConditionCheck => (detail ? { holds: false, why: why() } : FAILS);
  const facts: string[] | null = detail ? [] : null;
  if (w.taskIn) {
    if (p.task === null) return fail(() => "no task given");
    if (!w.taskIn.includes(p.task)) return fail(() => `task ${p.task} is not in [${w.taskIn!.join(", ")}]`);
    facts?.push(`task ${p.task}`);
  }
  if (w.requestClass) {
    if (p.requestClass === null) return fail(() => "no request class given");
    if (!w.requestClass.includes(p.requestClass)) {
      return fail(() => `class ${p.requestClass} is not in [${w.requestClass!.join(", ")}]`);
    }
    facts?.push(`class ${p.requestClass}`);
  }
  if (w.inputTokensLte !== null) {
    if (p.inputTokens > w.inputTokensLte) return fail(() => `input ${p.inputTokens} > ${w.inputTokensLte}`);
    facts?.push(`input ${p.inputTokens} <= ${w.inputTokensLte}`);
  }
  if (w.inputTokensGt !== null) {
    if (p.inputTokens <= w.inputTokensGt) return fail(() => `input ${p.inputTokens} <= ${w.inputTokensGt}`);
    facts?.push(`input ${p.inputTokens} > ${w.inputTokensGt}`);
  }
  if (facts === null) return HOLDS;
  return { holds: true, facts: facts.length > 0 ? facts.join(", ") : "no conditions" };
}

/**
 * Whether the pool's input range takes the request. `sizeForMin` (default: the same estimate) is what
 * the lower bound is judged by: with per-model estimates, the largest of them — a lower bound keeps out
 * requests the smaller pools take, and a request is out of a smaller pool when its model counts it too big.
 */
export function fitsPool(pool: RoutePool, inputTokens: number, sizeForMin = inputTokens): boolean {
  return sizeForMin >= pool.minInputTokens && inputTokens <= pool.maxInputTokens;
}

export function poolRange(pool: RoutePool): string {
  return `${pool.minInputTokens}..${pool.maxInputTokens}`;
}
