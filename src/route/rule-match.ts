// Checks one InferenceRoute rule's conditions against a request, saying which condition decided.
import type { RoutePool, RouteRule } from "../config/route-types.js";
import type { RouteProfile } from "./route-decision.js";

export type ConditionCheck =
  | { readonly holds: true; readonly facts: string }
  | { readonly holds: false; readonly why: string };

/**
 * Whether every condition of `rule.when` holds; the first one that fails is named. Without `detail`, the
 * same answer with empty texts (the request path does not read them).
 */
export function checkConditions(rule: RouteRule, p: RouteProfile, detail = true): ConditionCheck {
  if (!detail) return holds(rule, p) ? HOLDS : FAILS;
  const w = rule.when;
  const facts: string[] = [];
  if (w.taskIn) {
    if (p.task === null) return { holds: false, why: "no task given" };
    if (!w.taskIn.includes(p.task))
      return { holds: false, why: `task ${p.task} is not in [${w.taskIn.join(", ")}]` };
    facts.push(`task ${p.task}`);
  }
  if (w.requestClass) {
    if (p.requestClass === null) return { holds: false, why: "no request class given" };
    if (!w.requestClass.includes(p.requestClass)) {
      return { holds: false, why: `class ${p.requestClass} is not in [${w.requestClass.join(", ")}]` };
    }
    facts.push(`class ${p.requestClass}`);
  }
  if (w.inputTokensLte !== null) {
    if (p.inputTokens > w.inputTokensLte)
      return { holds: false, why: `input ${p.inputTokens} > ${w.inputTokensLte}` };
    facts.push(`input ${p.inputTokens} <= ${w.inputTokensLte}`);
  }
  if (w.inputTokensGt !== null) {
    if (p.inputTokens <= w.inputTokensGt)
      return { holds: false, why: `input ${p.inputTokens} <= ${w.inputTokensGt}` };
    facts.push(`input ${p.inputTokens} > ${w.inputTokensGt}`);
  }
  return { holds: true, facts: facts.length > 0 ? facts.join(", ") : "no conditions" };
}

const HOLDS: ConditionCheck = { holds: true, facts: "" };
const FAILS: ConditionCheck = { holds: false, why: "" };

function holds(rule: RouteRule, p: RouteProfile): boolean {
  const w = rule.when;
  if (w.taskIn && (p.task === null || !w.taskIn.includes(p.task))) return false;
  if (w.requestClass && (p.requestClass === null || !w.requestClass.includes(p.requestClass))) return false;
  if (w.inputTokensLte !== null && p.inputTokens > w.inputTokensLte) return false;
  if (w.inputTokensGt !== null && p.inputTokens <= w.inputTokensGt) return false;
  return true;
}

export function fitsPool(pool: RoutePool, inputTokens: number): boolean {
  return inputTokens >= pool.minInputTokens && inputTokens <= pool.maxInputTokens;
}

export function poolRange(pool: RoutePool): string {
  return `${pool.minInputTokens}..${pool.maxInputTokens}`;
}
