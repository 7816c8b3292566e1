// What the shipped scenarios declare beyond `Scenario` (proposed for scenario.ts): the phases of a run,
// so reports can judge a phase apart (support-incident's batch-only phase, for batch throughput;
// noisy-neighbor's burst), and the targets their reports judge.

import type { GenerateOptions, Scenario } from "./scenario.js";

/** A stretch of the run with one traffic mix, in seconds from its start (arrival times, not completions). */
export interface ScenarioPhase {
  name: string;
  startS: number;
  endS: number;
}

/** One tenant bursting in one phase, against the others (noisy-neighbor). */
export interface BurstSpec {
  tenant: string;
  phase: string;
}

export interface ShippedScenario extends Scenario {
  /** Phase boundaries for these options; the last phase ends when arrivals end. */
  phases(opts: GenerateOptions): ScenarioPhase[];
  /** The tenant whose burst the others should not feel: reports compare their TTFT P99 with and without it. */
  burst?: BurstSpec;
  /**
   * Whether reports judge issue 13's targets against least-request: tokengate's TTFT P90 and P99 at
   * most 0.7× least-request's, short prompts' (< 1,024 tokens) P99 at most 0.5×.
   */
  prefillTargets?: boolean;
}

/** The scenario's phases for these options; none for a scenario that declares none (a user's trace). */
export function scenarioPhases(scenario: Scenario, opts: GenerateOptions): ScenarioPhase[] {
  return "phases" in scenario ? (scenario as ShippedScenario).phases(opts) : [];
}

/** The phase an arrival at `tMs` falls in, or null past the end. */
export function phaseAt(phases: readonly ScenarioPhase[], tMs: number): ScenarioPhase | null {
  return phases.find((p) => tMs >= p.startS * 1000 && tMs < p.endS * 1000) ?? null;
}
