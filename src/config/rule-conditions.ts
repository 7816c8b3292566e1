// The conditions a rule (`when`) or a canary (`match`) puts on a request: tasks, request classes and an
// input-token range. One parser for both, so they accept the same fields and say the same things.

import type { IssueList } from "./errors.js";
import type { FieldReader } from "./fields.js";
import type { RuleConditions } from "./route-types.js";

/** Reads `f` (the `when` or `match` map; null when absent: no conditions). */
export function parseConditions(f: FieldReader | null, issues: IssueList): RuleConditions {
  const taskIn = f?.stringList("taskIn") ?? null;
  const inputTokensLte = f?.int("inputTokensLte", { min: 0 }) ?? null;
  const inputTokensGt = f?.int("inputTokensGt", { min: 0 }) ?? null;
  const requestClass = f?.stringList("requestClass", { allowSingle: true }) ?? null;
  f?.done();
  if (f && inputTokensGt !== null && inputTokensLte !== null && inputTokensGt >= inputTokensLte) {
    issues.error(
      f.at("inputTokensGt"),
      `never matches: inputTokensGt (${inputTokensGt}) is not below inputTokensLte (${inputTokensLte})`,
    );
  }
  return { taskIn, inputTokensLte, inputTokensGt, requestClass };
}
