// `tokengate bench --family N [--seed S] [--real K]`: N generated workloads, every router on each in
// virtual time (family-virtual.ts), the verdict (family-verdict.ts) in family.md and family.json; with
// K > 0, K of them also over HTTP (the gateway, its queue and its hop, the simulated engines), `--repeat`
// rounds each, with a report per workload and a verdict over the medians of rounds.

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadFleetFile } from "../../sim/fleet.js";
import { runRounds } from "../harness/rounds.js";
import { writeReport } from "../report/write.js";
import type { BenchResults, RouterResult } from "../results.js";
import type { RouterName } from "../scenarios/scenario.js";
import { traceScenario } from "../scenarios/trace-replay.js";
import { renderFamilyReport } from "./family-report.js";
import { type FamilyVerdict, familyVerdict, type WorkloadFigures } from "./family-verdict.js";
import { type FamilyFigures, runFamilyWorkload } from "./family-virtual.js";
import { writeFamily } from "./files.js";
import { type FamilyWorkload, generateFamily } from "./generate.js";

/** The routers a `--real` run compares by default: nginx's three, the peers' four and tokengate. */
export const FAMILY_REAL_ROUTERS: readonly RouterName[] = [
  "tokengate",
  "least-request",
  "round-robin",
  "prefix-sticky",
  "llm-d",
  "sglang-cache-aware",
  "dynamo-kv",
  "aibrix-prefix-cache",
];

export interface FamilyBenchOptions {
  n: number;
  seed: number;
  quick: boolean;
  /** Workloads also run over HTTP. */
  real: number;
  repeat: number;
  routers?: readonly RouterName[];
  outDir: string;
  progress: (line: string) => void;
}

export interface FamilyBenchResult {
  virtual: { results: WorkloadFigures[]; verdict: FamilyVerdict };
  real: { results: WorkloadFigures[]; verdict: FamilyVerdict } | null;
  files: string[];
}

/** `k` of `family` spread over its range of load (the lightest, the heaviest and evenly between). */
export function spreadByLoad(family: readonly FamilyWorkload[], k: number): FamilyWorkload[] {
  const sorted = [...family].sort((a, b) => a.params.load - b.params.load);
  if (k >= sorted.length) return sorted;
  if (k <= 0) return [];
  if (k === 1) return [sorted[Math.floor(sorted.length / 2)]!];
  return Array.from({ length: k }, (_, i) => sorted[Math.round((i * (sorted.length - 1)) / (k - 1))]!);
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** A router's TTFT figures over HTTP, median of the rounds it ran in; null when it ran in none. */
function realFigures(results: BenchResults, router: string): FamilyFigures | null {
  const rounds = results.rounds?.map((r) => r.routers) ?? [results.routers];
  const ran = rounds
    .map((r) => r[router])
    .filter((r): r is RouterResult => r?.status === "ok" && r.overall?.ttft_ms.p50 != null);
  if (ran.length === 0) return null;
  const fig = (f: "p50" | "p90" | "p99") => median(ran.map((r) => r.overall!.ttft_ms[f]!));
  return { p50: fig("p50"), p90: fig("p90"), p99: fig("p99"), burstP90: null, othersDuringBurstP99: null };
}

export async function runFamilyBench(opts: FamilyBenchOptions): Promise<FamilyBenchResult> {
  const family = generateFamily({ n: opts.n, seed: opts.seed, quick: opts.quick });
  mkdirSync(opts.outDir, { recursive: true });
  const files: string[] = [];
  const virtual: WorkloadFigures[] = [];
  for (const w of family) {
    const t0 = performance.now();
    virtual.push(runFamilyWorkload(w, opts.seed));
    opts.progress(`virtual ${w.name}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  const vVerdict = familyVerdict(virtual);
  const header = { seed: opts.seed, n: opts.n, quick: opts.quick };
  const vPath = join(opts.outDir, "family.md");
  writeFileSync(
    vPath,
    renderFamilyReport(
      {
        ...header,
        mode: "virtual time",
        notes: [
          "Virtual time: the simulator's scheduler and step law, each router's own picker (tokengate's and the peers' inside the gateway's EndpointState), tokengate with its gateway queue (saturation bounds, fair order; the peers without, as over HTTP); no HTTP hop, no gateway CPU. One run per workload: virtual time has no machine noise.",
          "prefix-sticky is left out here (its consistent hash runs in nginx); `--real` runs it.",
        ],
      },
      virtual,
      vVerdict,
    ),
  );
  files.push(vPath);
  let real: FamilyBenchResult["real"] = null;
  if (opts.real > 0) {
    const chosen = spreadByLoad(family, opts.real);
    const traceDir = join(opts.outDir, "traces");
    const written = writeFamily(traceDir, chosen);
    files.push(written.index);
    const routers = opts.routers ?? FAMILY_REAL_ROUTERS;
    const results: WorkloadFigures[] = [];
    for (const [i, w] of chosen.entries()) {
      opts.progress(`over HTTP ${i + 1} of ${chosen.length}: ${w.name}`);
      const scenario = traceScenario(written.traces[i]!, loadFleetFile(written.fleets[i]!));
      const dir = join(opts.outDir, w.name);
      const r = await runRounds(
        scenario,
        { seed: opts.seed, quick: false, routers: [...routers], trace: w.trace, progress: false },
        opts.repeat,
        dir,
        false,
        (k) => opts.progress(`  round ${k} of ${opts.repeat}`),
      );
      files.push(...(await writeReport(r, dir)));
      const figs: Record<string, FamilyFigures> = {};
      for (const name of routers) {
        const f = realFigures(r, name);
        if (f) figs[name] = f;
      }
      results.push({ name: w.name, requests: w.trace.length, routers: figs });
    }
    const verdict = familyVerdict(results);
    const rPath = join(opts.outDir, "family-real.md");
    writeFileSync(
      rPath,
      renderFamilyReport(
        {
          ...header,
          mode: `over HTTP, median of ${opts.repeat} round${opts.repeat === 1 ? " (a single round)" : "s"}`,
          notes: [
            "Over HTTP: the gateway with its queue, nginx, the simulated engines on this machine; each figure is the median of the rounds, all routers in one invocation, their order alternating.",
            "The burst columns are judged in virtual time only (family.md).",
          ],
        },
        results,
        verdict,
      ),
    );
    files.push(rPath);
    real = { results, verdict };
  }
  const json = join(opts.outDir, "family.json");
  writeFileSync(
    json,
    `${JSON.stringify({ seed: opts.seed, n: opts.n, quick: opts.quick, virtual: { results: virtual, verdict: vVerdict }, real }, null, 2)}\n`,
  );
  files.push(json);
  return { virtual: { results: virtual, verdict: vVerdict }, real, files };
}
