// What the shipped scenarios declare beyond `Scenario` (proposed for scenario.ts): the phases of a run,
// so reports can judge a phase apart (support-incident's batch-only phase, for batch throughput).

import type { GenerateOptions, Scenario } from "./scenario.js";

/** A stretch of the run with one traffic mix, in seconds from its start (arrival times, not completions). */
export interface ScenarioPhase {
  name: string;
  startS: number;
  endS: number;
}

export interface ShippedScenario extends Scenario {
  /** Phase boundaries for these options; the last phase ends when arrivals end. */
  phases(opts: GenerateOptions): ScenarioPhase[];
}

/** The phase an arrival at `tMs` falls in, or null past the end. */
export function phaseAt(phases: readonly ScenarioPhase[], tMs: number): ScenarioPhase | null {
  return phases.find((p) => tMs >= p.startS * 1000 && tMs < p.endS * 1000) ?? null;
}
