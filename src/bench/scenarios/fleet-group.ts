// Replica groups for the shipped scenarios' fleets: simulated vLLM engines on free ports, emitting
// max_tokens each (as benchmarks run with ignore_eos), so runs are comparable request for request.

import type { EngineOverrides } from "../../sim/engine-config.js";
import type { FleetSpec, ReplicaGroup } from "../../sim/fleet.js";
import { getProfile } from "../../sim/profiles.js";

export function replicaGroup(
  name: string,
  replicas: number,
  profile: string,
  model: string,
  engine: EngineOverrides = {},
): ReplicaGroup {
  return {
    name,
    replicas,
    port: 0,
    profile,
    model,
    dialect: "vllm",
    engine,
    outputLenDist: "max",
    streamInterval: 1,
    faults: {},
  };
}

export function fleetOf(name: string, groups: ReplicaGroup[]): FleetSpec {
  return { name, host: "127.0.0.1", seed: 42, groups };
}

/** Simulated GPUs of a fleet, from its profiles. */
export function fleetGpus(fleet: FleetSpec): number {
  return fleet.groups.reduce((n, g) => n + g.replicas * getProfile(g.profile).gpus, 0);
}

/** Replica names as startFleet gives them, so config endpoint names match the engines' own. */
export function replicaNames(group: ReplicaGroup): string[] {
  return Array.from({ length: group.replicas }, (_, i) =>
    group.replicas > 1 ? `${group.name}-${i}` : group.name,
  );
}
