// A generated family on disk, to replay later: one native trace per workload (`<name>.jsonl`), its
// engines as a SimFleet file (`<name>.fleet.yaml`), and `family.json` with every workload's name,
// params and fleet. Replay one with `tokengate bench <dir>/<name>.jsonl --fleet <dir>/<name>.fleet.yaml`.

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import type { FleetSpec } from "../../sim/fleet.js";
import { formatTrace } from "../trace-formats/trace.js";
import type { FamilyWorkload, WorkloadParams } from "./generate.js";

export const FAMILY_INDEX_FILE = "family.json";

/** One workload in family.json; file names are relative to the family's directory. */
export interface FamilyIndexEntry {
  name: string;
  trace: string;
  fleetFile: string;
  requests: number;
  params: WorkloadParams;
  fleet: FleetSpec;
}

export interface FamilyIndex {
  workloads: FamilyIndexEntry[];
}

export interface FamilyFiles {
  /** The family.json path. */
  index: string;
  traces: string[];
  fleets: string[];
}

/** The fleet as a `kind: SimFleet` YAML document, as `tokengate sim --fleet` and `bench --fleet` read it. */
export function fleetYaml(fleet: FleetSpec): string {
  const doc = {
    apiVersion: "tokengate.dev/v1alpha1",
    kind: "SimFleet",
    metadata: { name: fleet.name },
    spec: { host: fleet.host, seed: fleet.seed, groups: fleet.groups },
  };
  return `# Simulated engines of the generated workload ${fleet.name}.\n${stringify(doc)}`;
}

/** Writes `family` into `dir` (created if need be; files of the same names replaced). */
export function writeFamily(dir: string, family: readonly FamilyWorkload[]): FamilyFiles {
  mkdirSync(dir, { recursive: true });
  const names = new Set(family.map((w) => w.name));
  if (names.size !== family.length) throw new Error("family: two workloads have the same name");
  const traces: string[] = [];
  const fleets: string[] = [];
  const workloads = family.map((w) => {
    const trace = `${w.name}.jsonl`;
    const fleetFile = `${w.name}.fleet.yaml`;
    writeFileSync(join(dir, trace), formatTrace(w.trace));
    writeFileSync(join(dir, fleetFile), fleetYaml(w.fleet));
    traces.push(join(dir, trace));
    fleets.push(join(dir, fleetFile));
    return { name: w.name, trace, fleetFile, requests: w.trace.length, params: w.params, fleet: w.fleet };
  });
  const index = join(dir, FAMILY_INDEX_FILE);
  writeFileSync(index, `${JSON.stringify({ workloads } satisfies FamilyIndex, null, 2)}\n`);
  return { index, traces, fleets };
}
