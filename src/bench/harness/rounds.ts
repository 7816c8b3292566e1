// `tokengate bench --repeat n`: the same trace n times, the routers' order alternating from round to
// round, so that a verdict rests on the median of n side-by-side rounds rather than on one round's
// noise (these machines share two cores between the router, the client and the engines).

import { join } from "node:path";
import { writeReport } from "../report/write.js";
import { type BenchResults, type RoundResult, roundRouter } from "../results.js";
import type { Scenario } from "../scenarios/scenario.js";
import { type RunOptions, runScenario } from "./runner.js";

/** Where round `k` (2 and on) writes its own full report, under the run's folder. */
export function roundDir(outDir: string, k: number): string {
  return join(outDir, `round-${k}`);
}

/** A round's record: its routers in the order they ran, without samples or gauges. */
export function roundOf(k: number, results: BenchResults): RoundResult {
  const routers = Object.fromEntries(
    Object.entries(results.routers).map(([name, r]) => [name, roundRouter(r)]),
  );
  return { round: k, order: Object.keys(results.routers), routers };
}

/**
 * Runs `n` rounds (n ≥ 1); even rounds run the routers in reverse order. Round 1's results come back
 * whole with every round in `rounds`; rounds 2..n also write their own report to `round-<k>/` (their
 * request logs too, with `keepLog`). The caller writes round 1's report to `outDir`.
 */
export async function runRounds(
  scenario: Scenario,
  opts: Omit<RunOptions, "keepLogDir" | "reverseRouters">,
  n: number,
  outDir: string,
  keepLog: boolean,
  onRound: (k: number) => void = () => {},
): Promise<BenchResults> {
  let first: BenchResults | null = null;
  const rounds: RoundResult[] = [];
  for (let k = 1; k <= n; k++) {
    onRound(k);
    const dir = k === 1 ? outDir : roundDir(outDir, k);
    const results = await runScenario(scenario, {
      ...opts,
      reverseRouters: k % 2 === 0,
      keepLogDir: keepLog ? dir : undefined,
    });
    rounds.push(roundOf(k, results));
    if (k === 1) first = results;
    else await writeReport(results, dir);
  }
  return n > 1 ? { ...first!, rounds } : first!;
}
