// `tokengate bench <scenario> --virtual`: the scenario's trace on its engines in virtual time under the
// baselines and the ideal prefill-aware policies (virtual-policies.ts), as a Markdown table with each
// figure's ratio to least-request. It bounds what any router can reach on a workload: if the ideal
// policy with exact knowledge cannot get a target, no real one will.

import { makeEngineConfig } from "../../sim/engine-config.js";
import { mdTable } from "../report/md-table.js";
import type { ShippedScenario } from "../scenarios/shipped.js";
import { percentile } from "../stats.js";
import { runVirtual, type VirtualPolicy, type VirtualRequest } from "./virtual-fleet.js";
import { leastRequest, predictedTtft, QUEUE_ORDERS, roundRobin } from "./virtual-policies.js";

/** Prompts under this many tokens are "short" (issue 13's short-prompt target, the reports' first bucket). */
const SHORT_TOKENS = 1024;
const QUEUE_BOUND_MS = 300;

export interface VirtualRow {
  policy: string;
  ttftMs: { p50: number; p90: number; p99: number };
  shortP99Ms: number;
  /** The burst scenario's other tenants: TTFT P99 during the burst phase and in the phase before it. */
  quiet: { burstP99Ms: number; beforeP99Ms: number } | null;
}

export function virtualPolicies(): VirtualPolicy[] {
  return [
    roundRobin(),
    leastRequest(),
    predictedTtft(),
    ...QUEUE_ORDERS.map((order) => predictedTtft({ boundMs: QUEUE_BOUND_MS, order })),
  ];
}

/** Runs the scenario's trace under every policy; the scenario must have one group of engines. */
export function virtualRows(
  s: ShippedScenario,
  opts: { seed: number; quick: boolean; durationS?: number },
): VirtualRow[] {
  const topology = s.topologies[0]!;
  const groups = topology.fleet.groups;
  if (groups.length !== 1)
    throw new Error(`--virtual models one group of engines; ${s.name} has ${groups.length}`);
  const g = groups[0]!;
  const cfg = makeEngineConfig(g.profile, g.model, g.engine);
  const trace = s.generate(opts);
  const phases = s.phases(opts);
  return virtualPolicies().map((policy) => {
    const reqs = runVirtual(trace, cfg, g.replicas, policy);
    const ttft = (rs: readonly VirtualRequest[]) => rs.map((r) => r.firstTokenMs - r.trace.t_ms);
    const all = ttft(reqs);
    let quiet: VirtualRow["quiet"] = null;
    if (s.burst) {
      const i = phases.findIndex((p) => p.name === s.burst!.phase);
      const inPhase = (k: number) => (r: VirtualRequest) =>
        r.trace.tenant !== s.burst!.tenant &&
        r.trace.t_ms >= phases[k]!.startS * 1000 &&
        r.trace.t_ms < phases[k]!.endS * 1000;
      quiet = {
        burstP99Ms: percentile(ttft(reqs.filter(inPhase(i))), 99),
        beforeP99Ms: i > 0 ? percentile(ttft(reqs.filter(inPhase(i - 1))), 99) : Number.NaN,
      };
    }
    return {
      policy: policy.name,
      ttftMs: { p50: percentile(all, 50), p90: percentile(all, 90), p99: percentile(all, 99) },
      shortP99Ms: percentile(ttft(reqs.filter((r) => (r.trace.input_tokens ?? 0) < SHORT_TOKENS)), 99),
      quiet,
    };
  });
}

export function renderVirtual(s: ShippedScenario, rows: readonly VirtualRow[], seed: number): string {
  const base = rows.find((r) => r.policy === "least-request")!;
  const cell = (ms: number, baseMs: number) =>
    `${Math.round(ms)} ms${baseMs > 0 ? ` (${(ms / baseMs).toFixed(2)}×)` : ""}`;
  const header = ["Policy", "TTFT P50", "TTFT P90", "TTFT P99", `P99, < ${SHORT_TOKENS} tokens`];
  if (base.quiet) header.push("Others' P99 in the burst", "Others' P99 before it");
  const table = mdTable(
    header,
    rows.map((r) => [
      r.policy,
      cell(r.ttftMs.p50, base.ttftMs.p50),
      cell(r.ttftMs.p90, base.ttftMs.p90),
      cell(r.ttftMs.p99, base.ttftMs.p99),
      cell(r.shortP99Ms, base.shortP99Ms),
      ...(r.quiet
        ? [cell(r.quiet.burstP99Ms, base.quiet!.burstP99Ms), `${Math.round(r.quiet.beforeP99Ms)} ms`]
        : []),
    ]),
    ["left", "right", "right", "right", "right", "right", "right"],
  );
  return (
    `# ${s.name} in virtual time (seed ${seed})\n\n` +
    "The scenario's trace on its engines as the simulator models them (scheduler, step law, API server), " +
    "without HTTP or a wall clock. TTFT from arrival; ratios against least-request. The ideal policies " +
    "know every engine's pending prefill exactly: a bound on what a prefill-aware router can reach, " +
    "not tokengate's own figures.\n\n" +
    `${table}\n`
  );
}
