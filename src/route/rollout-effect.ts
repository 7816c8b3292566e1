// Whether tokengate's route decision takes effect or the request goes to the legacy service: seed 004's
// route rollback (`globalMode: legacy_passthrough`) and rollout stages (shadow-label, canary, full, per
// pool). Pure: reads only the route config, the decision made on paper and the sticky key, so
// `route explain` says what the gateway does.

import type { RolloutStage, RouteConfig, StickyBy } from "../config/route-types.js";
import type { RouteDecision } from "./route-decision.js";
import { checkConditions } from "./rule-match.js";
import { hashUnit } from "./target-choice.js";

export type RolloutEffect =
  /** tokengate serves it as decided; `note` goes on route_reason (`canary=5%`). */
  | { readonly to: "route"; readonly stage: RolloutStage | null; readonly note: string | null }
  /** The legacy service serves it; `reason` is its route_reason. */
  | {
      readonly to: "legacy";
      readonly stage: RolloutStage | null;
      readonly reason: string;
      /** Route rollback: the request goes unchanged (no labels, no usage asked). */
      readonly passthrough: boolean;
    };

const ROUTED: RolloutEffect = { to: "route", stage: null, note: null };

/** Whether any request can go to the legacy service under this config (else the request path skips the stage). */
export function sendsToLegacy(route: RouteConfig): boolean {
  if (route.legacy === null) return false;
  if (route.globalMode === "legacy_passthrough") return true;
  const r = route.rollout;
  return r !== null && (r.stage !== "full" || [...r.pools.values()].some((s) => s !== "full"));
}

/**
 * @param labels the request's task and class (what the canary's `match` reads besides the size).
 * @param decision the route's decision, or null when it refused the request (the legacy service, which
 *   took such requests before, still gets them while the stage sends traffic there).
 * @param stickyKey the canary's sticky key for this request (`canary.stickyBy`); null: random.
 */
export function rolloutEffect(
  route: RouteConfig,
  labels: { readonly task: string | null; readonly requestClass: string | null },
  decision: RouteDecision | null,
  stickyKey: (by: StickyBy) => string | null,
  explain: string[] | null = null,
  random: () => number = Math.random,
): RolloutEffect {
  if (route.legacy === null) return ROUTED;
  if (route.globalMode === "legacy_passthrough") {
    explain?.push(`globalMode legacy_passthrough (route rollback): sent unchanged to ${route.legacy.url}`);
    return { to: "legacy", stage: null, reason: "legacy_passthrough", passthrough: true };
  }
  const rollout = route.rollout;
  if (rollout === null) return ROUTED;
  const own = decision ? rollout.pools.get(decision.pool) : undefined;
  const stage = own ?? rollout.stage;
  const where = own ? `pool ${decision!.pool}'s stage` : "rollout stage";
  if (stage === "full") {
    explain?.push(`${where} full: tokengate serves it`);
    return { to: "route", stage, note: null };
  }
  if (stage === "shadow-label") {
    explain?.push(`${where} shadow-label: routed on paper only, sent to ${route.legacy.url}`);
    return { to: "legacy", stage, reason: "rollout=shadow-label", passthrough: false };
  }
  const canary = rollout.canary!;
  if (decision === null || decision.pool !== canary.routeTo) {
    explain?.push(
      `${where} canary: the canary takes pool ${canary.routeTo} only; sent to the legacy service`,
    );
    return { to: "legacy", stage, reason: "rollout=canary,outside", passthrough: false };
  }
  const check = checkConditions(
    { name: "canary", when: canary.match, routeTo: canary.routeTo, queuePolicy: null },
    {
      modelAlias: decision.modelAlias,
      task: labels.task,
      requestClass: labels.requestClass,
      inputTokens: decision.inputTokens,
      maxTokens: null,
    },
    explain !== null,
  );
  if (!check.holds) {
    explain?.push(`canary match: no (${check.why}); sent to the legacy service`);
    return { to: "legacy", stage, reason: "rollout=canary,no_match", passthrough: false };
  }
  const key = stickyKey(canary.stickyBy);
  // The salt is the pool alone: a key's point never moves, so raising the percent only moves keys in.
  const point = key === null ? random() : hashUnit(`canary\u0000${canary.routeTo}\u0000${key}`);
  const inside = point * 100 < canary.percent;
  explain?.push(
    `canary ${canary.percent}% of pool ${canary.routeTo}: ${key === null ? "no sticky key, at random" : `sticky key at ${(point * 100).toFixed(2)}%`} → ${inside ? "tokengate" : "legacy service"}`,
  );
  if (!inside) return { to: "legacy", stage, reason: "rollout=canary,holdout", passthrough: false };
  return { to: "route", stage, note: `canary=${canary.percent}%` };
}
