// `tokengate bench <scenario | trace.jsonl>`: replays a workload against tokengate and baseline routers
// over the same simulated hardware, side by side in one run, and writes results.json, report.md and charts.

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { writeReport } from "../bench/report/write.js";
import { runScenario } from "../bench/runner.js";
import { getScenario, SCENARIOS } from "../bench/scenarios/index.js";
import type { RouterName, Scenario } from "../bench/scenarios/scenario.js";
import { traceScenario } from "../bench/scenarios/trace-replay.js";
import { parseTraceLines } from "../bench/trace.js";
import { loadFleetFile } from "../sim/fleet.js";

const ROUTERS: RouterName[] = ["tokengate", "least-request", "round-robin", "random", "prefix-sticky"];

export const BENCH_USAGE = `Usage: tokengate bench <scenario | trace.jsonl> [options]
       tokengate bench --list

Scenarios: ${Object.keys(SCENARIOS).join(", ")}

Options:
  --routers <a,b,...>  routers to run (default: the scenario's): ${ROUTERS.join(", ")}
  --duration <s>       traffic duration in seconds (default: the scenario's)
  --seed <n>           workload seed (default 1); the same seed replays the same arrivals
  --out <dir>          where results.json, report.md and the SVG charts go (default bench-results/<scenario>)
  --quick              the short version (under a minute per router), for CI smoke tests
  --keep-log           also keep tokengate's request log there (gateway-<router>.log), one line per request
  --fleet <file>       for a trace: the simulated engines (SimFleet YAML; default 4 × h100-llama8b)
  --no-progress        no progress bar
`;

export async function runBenchCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      routers: { type: "string" },
      duration: { type: "string" },
      seed: { type: "string" },
      out: { type: "string" },
      quick: { type: "boolean" },
      "keep-log": { type: "boolean" },
      fleet: { type: "string" },
      list: { type: "boolean" },
      "no-progress": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(BENCH_USAGE);
    return 0;
  }
  if (values.list) {
    for (const s of Object.values(SCENARIOS)) process.stdout.write(`${s.name.padEnd(18)} ${s.description}\n`);
    return 0;
  }
  const target = positionals[0];
  if (!target) {
    process.stderr.write(BENCH_USAGE);
    return 2;
  }
  const routers = values.routers?.split(",").map((r) => r.trim()) as RouterName[] | undefined;
  for (const r of routers ?? []) {
    if (!ROUTERS.includes(r))
      throw new Error(`--routers: unknown router "${r}" (known: ${ROUTERS.join(", ")})`);
  }
  const seed = values.seed === undefined ? 1 : Number(values.seed);
  const durationS = values.duration === undefined ? undefined : Number(values.duration);
  if (!Number.isInteger(seed)) throw new Error(`--seed: expected a whole number, got "${values.seed}"`);
  if (durationS !== undefined && !(durationS > 0))
    throw new Error(`--duration: expected seconds > 0, got "${values.duration}"`);
  let scenario: Scenario;
  let trace: ReturnType<typeof parseTraceLines> | undefined;
  if (target.endsWith(".jsonl")) {
    trace = parseTraceLines(readFileSync(target, "utf8"), target);
    scenario = traceScenario(target, values.fleet ? loadFleetFile(values.fleet) : undefined);
  } else {
    scenario = getScenario(target);
  }
  const outDir = values.out ?? `bench-results/${scenario.name}`;
  const results = await runScenario(scenario, {
    seed,
    quick: values.quick === true,
    durationS,
    routers,
    trace,
    progress: !values["no-progress"],
    keepLogDir: values["keep-log"] ? outDir : undefined,
  });
  const files = await writeReport(results, outDir);
  process.stderr.write(`\nwrote ${files.join(", ")}\n`);
  const failed = Object.entries(results.routers).filter(([, r]) => r.status === "failed");
  for (const [name, r] of failed) process.stderr.write(`router ${name} failed: ${r.reason}\n`);
  return failed.length > 0 ? 1 : 0;
}
