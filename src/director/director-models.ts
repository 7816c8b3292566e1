// What a caller may name as `model` at the director (GET /v1/models): the aliases its regions' gateways
// publish in their summaries, over the regions the tenant's residency allows (every region for a tenant
// without one) whose summary is fresh and which are not draining — the regions a request could go to.
// A model listed here may still be refused for want of a ready endpoint; one missing from it always is.

import type { DirectorConfig, RegionState } from "./director-types.js";

/** The aliases, sorted, that `tenant` could be routed with now. */
export function directorModelNames(
  config: DirectorConfig,
  regions: readonly RegionState[],
  tenant: string,
): string[] {
  const allowed = config.residency[tenant] ?? null;
  const names = new Set<string>();
  for (const r of regions) {
    if (allowed !== null && !allowed.includes(r.region)) continue;
    if (r.stale || r.summary === null || r.summary.draining) continue;
    for (const m of r.summary.models) names.add(m.alias);
  }
  return [...names].sort();
}
