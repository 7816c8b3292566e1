// Which of an alias's weighted targets serves a request. The choice is a hash of the sticky key (the
// tenant, by default) and the alias, so one tenant stays on one side of a 90/10 split on every gateway
// replica and across restarts; requests without a key are spread at random by weight.

import type { AliasTarget, ModelAlias } from "../config/route-types.js";

export interface TargetChoice {
  readonly target: AliasTarget;
  /** The target's share of the alias's traffic, in percent (for route_reason). */
  readonly percent: number;
  /** Whether the sticky key decided (false: no key, chosen at random). */
  readonly sticky: boolean;
}

/**
 * @param eligible whether a target can be served at all (its adapter in some routable pool); targets
 *   that cannot are left out of the split rather than failing the request.
 */
export function chooseTarget(
  alias: ModelAlias,
  stickyKey: string | null,
  eligible: (t: AliasTarget) => boolean = () => true,
  random: () => number = Math.random,
): TargetChoice | null {
  let total = 0;
  for (const t of alias.targets) if (t.weight > 0 && eligible(t)) total += t.weight;
  if (total === 0) return null;
  const u = stickyKey === null ? random() : hashUnit(`${alias.name}\u0000${stickyKey}`);
  let point = u * total;
  let last: AliasTarget | null = null;
  for (const t of alias.targets) {
    if (t.weight <= 0 || !eligible(t)) continue;
    last = t;
    if (point < t.weight) break;
    point -= t.weight;
  }
  const target = last!;
  return { target, percent: Math.round((target.weight / total) * 1000) / 10, sticky: stickyKey !== null };
}

/** FNV-1a (32 bit) of a string, mapped to [0, 1). Stable across processes and versions. */
export function hashUnit(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // A final avalanche so keys that differ only in their last characters spread over the whole range.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}
