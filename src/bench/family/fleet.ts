// The simulated engines a generated workload runs on: one group of identical engines, declared the way
// the shipped scenarios declare theirs (scenarios/fleet-group.ts).

import type { FleetSpec } from "../../sim/fleet.js";
import { getProfile } from "../../sim/profiles.js";
import { fleetOf, replicaGroup } from "../scenarios/fleet-group.js";

/** The served model of every family fleet (the trace names none, so requests go to this one). */
export const FAMILY_MODEL = "llama-3.1-8b";

/**
 * `engines` replicas of `profile` in one group, "engines", with the profile's context window. Streamed
 * tokens go four steps at a time (vLLM's --stream-interval 4), as in mixed-lengths: at the family's
 * higher rates, relaying every token would take the bench machine's CPU, not the router's.
 */
export function familyFleet(tag: string, profile: string, engines: number): FleetSpec {
  return fleetOf(`family-${tag}`, [
    {
      ...replicaGroup("engines", engines, profile, FAMILY_MODEL, {
        maxModelLen: getProfile(profile).maxModelLen,
      }),
      streamInterval: 4,
    },
  ]);
}
