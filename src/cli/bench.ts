// `tokengate bench <scenario | trace.jsonl | trace.csv>`: replays a workload against tokengate and baseline
// routers over the same simulated hardware, side by side in one run, and writes results.json, report.md
// and charts. A trace is read in any of the formats bench/trace-formats/ knows.

import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { roundDir, runRounds } from "../bench/harness/rounds.js";
import { writeReport } from "../bench/report/write.js";
import { getScenario, SCENARIOS } from "../bench/scenarios/index.js";
import type { RouterName, Scenario } from "../bench/scenarios/scenario.js";
import { traceScenario } from "../bench/scenarios/trace-replay.js";
import { isTraceFile, readTraceFile } from "../bench/trace-formats/read-trace.js";
import type { TraceRequest } from "../bench/trace-formats/trace.js";
import { renderVirtual, virtualRows } from "../bench/virtual/virtual-report.js";
import { PEER_ALGORITHMS } from "../picker/peers/peer-algorithm.js";
import { loadFleetFile } from "../sim/fleet.js";
import { intFlag, numberFlag, parseFlags, textFlag, UsageError, usageFailure } from "./args.js";

const ROUTERS: RouterName[] = [
  "tokengate",
  "least-request",
  "round-robin",
  "random",
  "prefix-sticky",
  ...PEER_ALGORITHMS,
];

/** Seed 004's rollback drill (bench/rollback-drill/rollback-drill.ts): a run of its own, not a router comparison. */
const DRILL = "rollback-drill";
/** Issue 16's batch day (bench/batch-day/batch-day.ts): the backlog as Batch API jobs across a gateway restart. */
const BATCH_DAY = "batch-day";
/** Issue 18's three regions behind `tokengate director` (bench/multi-region/multi-region.ts), one degrading then failing. */
const MULTI_REGION = "multi-region";

export const BENCH_USAGE = `Usage: tokengate bench <scenario | trace.jsonl | trace.csv> [options]
       tokengate bench --list

Scenarios: ${Object.keys(SCENARIOS).join(", ")}
Also: ${DRILL} — seed 004's rollbacks drilled under streaming load (bad version, config rollback,
legacy_passthrough on and off, model-alias rollback), tokengate alone; exit 1 if a target is missed
      ${BATCH_DAY} — seed 004's incident with the backlog as Batch API jobs (openai client) and the gateway
SIGKILLed mid-jobs, against the same backlog as synchronous calls; exit 1 if a line is lost or twice in
the output, or a job does not complete
      ${MULTI_REGION} — three regions (a gateway and simulated engines each) behind tokengate director, one
degrading, failing and recovering mid-run, against a director that follows the lowest latency alone;
exit 1 if a tenant's residency is violated

Traces (docs/benchmarks.md, "Trace format"): tokengate's own JSONL; JSONL with hash_ids (Mooncake's:
timestamp, input_length, output_length, one id per 512-token prompt block, shared ids shared text); CSV
of arrival time, context tokens, generated tokens (Azure's TIMESTAMP,ContextTokens,GeneratedTokens, or a
numeric time column named with its unit: timestamp_s, arrival_time_ms)

Options:
  --routers <a,b,...>  routers to run (default: the scenario's): ${ROUTERS.join(", ")};
                       ${PEER_ALGORITHMS.join(", ")} are those projects' default algorithms inside
                       tokengate's own gateway (its pools and routes, no gateway queue), wherever tokengate runs
  --duration <s>       traffic duration in seconds (default: the scenario's)
  --seed <n>           workload seed, an integer >= 0 (default 1); the same seed replays the same arrivals
  --out <dir>          where results.json, report.md and the SVG charts go (default bench-results/<scenario>)
  --quick              the short version (under a minute per router), for CI smoke tests
  --keep-log           also keep tokengate's request log there (gateway-<router>.log), one line per request
  --fleet <file>       for a trace: the simulated engines (SimFleet YAML; default 4 × h100-llama8b)
  --no-progress        no progress bar
  --repeat <n>         run the same trace n times (1..9), the routers' order alternating each round;
                       report.md judges the median round's ratios and lists every round (rounds 2..n
                       also write their own report to <out>/round-<k>/)
  --gateway-replicas <n>  also run tokengate as n replicas (2..16) behind a round-robin front, a front
                       choosing by prompt prefix and one choosing by session, each replica with its own
                       in-flight view and prefix index (keys "tokengate×n <front>")
  --virtual            a scenario in virtual time instead (the simulator's scheduler and step law, no
                       HTTP, seconds to run) under the baselines and an ideal prefill-aware router:
                       what any router could reach; prints a table and writes virtual.md to --out

Workload family (no scenario or trace):
  tokengate bench --family <n> [--seed <s>] [--quick] [--real <k> [--repeat <r>] [--routers ...]]
  --family <n>         n generated workloads (load 30–120% of the fleet's capacity, prompt mixes,
                       bursts, tenants, prefix sharing, output lengths; workload i depends on seed and i
                       only), every router on each in virtual time; family.md: the targets and how many
                       workloads met each, every router's worst case and rank, a row per workload
  --real <k>           also k of them over HTTP, spread over the range of load (default: every router),
                       --repeat rounds each, a report per workload and family-real.md over the medians
`;

function routerList(flag: string | undefined): RouterName[] | undefined {
  if (flag === undefined) return undefined;
  const routers = flag.split(",").map((r) => r.trim()) as RouterName[];
  for (const r of routers) {
    if (!ROUTERS.includes(r))
      throw new UsageError(`--routers: unknown router "${r}" (known: ${ROUTERS.join(", ")})`);
  }
  return routers;
}

function readBenchArgs(argv: string[]) {
  const { values, positionals } = parseFlags({
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
      virtual: { type: "boolean" },
      "gateway-replicas": { type: "string" },
      repeat: { type: "string" },
      family: { type: "string" },
      real: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help" as const;
  if (values.list) return "list" as const;
  const [target, ...extra] = positionals;
  if (values.family !== undefined) {
    if (target !== undefined)
      throw new UsageError(`--family: generates its own workloads, not "${target}" too`);
    return {
      kind: "family" as const,
      family: intFlag(values.family, "family", 1, 1000)!,
      real: intFlag(values.real, "real", 0, 1000) ?? 0,
      seed: intFlag(values.seed, "seed", 0) ?? 1,
      quick: values.quick === true,
      repeat: intFlag(values.repeat, "repeat", 1, 9) ?? 1,
      routers: routerList(values.routers),
      out: textFlag(values.out, "out", "a folder"),
      progress: !values["no-progress"],
    };
  }
  if (values.real !== undefined) throw new UsageError("--real: only with --family");
  if (target === undefined) throw new UsageError("expected a scenario or a trace.jsonl or trace.csv");
  if (extra.length > 0)
    throw new UsageError(`unexpected argument "${extra[0]}" (a run takes one scenario or trace)`);
  const isTrace = isTraceFile(target);
  if (isTrace && !existsSync(target)) throw new UsageError(`no trace file "${target}"`);
  const special = [DRILL, BATCH_DAY, MULTI_REGION];
  if (!isTrace && !Object.hasOwn(SCENARIOS, target) && !special.includes(target))
    throw new UsageError(
      `unknown scenario "${target}" (known: ${Object.keys(SCENARIOS).join(", ")}, ${special.join(", ")}; or a trace.jsonl or trace.csv)`,
    );
  if (values.virtual && isTrace) throw new UsageError("--virtual: only for a scenario");
  if (values.fleet !== undefined && !isTrace)
    throw new UsageError("--fleet: only for a trace (a scenario brings its own engines)");
  const routers = routerList(values.routers);
  return {
    target,
    isTrace,
    routers,
    seed: intFlag(values.seed, "seed", 0) ?? 1,
    durationS: numberFlag(values.duration, "duration", 0, Number.POSITIVE_INFINITY, true),
    out: textFlag(values.out, "out", "a folder"),
    quick: values.quick === true,
    keepLog: values["keep-log"] === true,
    fleet: textFlag(values.fleet, "fleet", "a SimFleet file"),
    progress: !values["no-progress"],
    virtual: values.virtual === true,
    gatewayReplicas: intFlag(values["gateway-replicas"], "gateway-replicas", 2, 16),
    repeat: intFlag(values.repeat, "repeat", 1, 9) ?? 1,
  };
}

export async function runBenchCommand(argv: string[]): Promise<number> {
  let args: ReturnType<typeof readBenchArgs>;
  try {
    args = readBenchArgs(argv);
  } catch (err) {
    return usageFailure("bench", err, BENCH_USAGE);
  }
  if (args === "help") {
    process.stdout.write(BENCH_USAGE);
    return 0;
  }
  if (args === "list") {
    for (const s of Object.values(SCENARIOS)) process.stdout.write(`${s.name.padEnd(18)} ${s.description}\n`);
    process.stdout.write(
      `${DRILL.padEnd(18)} seed 004's three rollbacks under streaming load: time to effect, failures\n` +
        `${BATCH_DAY.padEnd(18)} seed 004's backlog as Batch API jobs across a gateway SIGKILL: live TTFT, lines lost\n` +
        `${MULTI_REGION.padEnd(18)} three regions behind tokengate director, one failing: failover, flapping, residency\n`,
    );
    return 0;
  }
  if (args.kind === "family") return runFamily(args);
  const { target, routers, seed, durationS } = args;
  if (target === DRILL) {
    // Not a routing comparison: seed 004's rollbacks under load, against tokengate alone.
    const { runRollbackDrill } = await import("../bench/rollback-drill/rollback-drill.js");
    const f = await runRollbackDrill({ outDir: args.out ?? `bench-results/${DRILL}`, quick: args.quick });
    return f.targets.met && f.targets.noFailedRequestByAnAct ? 0 : 1;
  }
  if (target === BATCH_DAY) {
    // Not a routing comparison either: it restarts the gateway mid-run. Loaded only here: it drives the
    // Batch API with the official openai client, which the package does not install.
    const { runBatchDay } = await import("../bench/batch-day/batch-day.js").catch((err: unknown) => {
      if ((err as { code?: string }).code === "ERR_MODULE_NOT_FOUND" && /'openai'/.test(String(err)))
        throw new Error(
          `${BATCH_DAY} drives the Batch API through the official openai client, which tokengate does not install: run \`npm install openai\` beside it first`,
        );
      throw err;
    });
    const f = await runBatchDay({
      outDir: args.out ?? `bench-results/${BATCH_DAY}`,
      quick: args.quick,
      seed,
    });
    const t = f.targets;
    return t.noLostLines && t.noDuplicatedLines && t.jobsCompleted ? 0 : 1;
  }
  if (target === MULTI_REGION) {
    const { runMultiRegion } = await import("../bench/multi-region/multi-region.js");
    const f = await runMultiRegion({
      outDir: args.out ?? `bench-results/${MULTI_REGION}`,
      quick: args.quick,
      seed,
    });
    return f.failed ? 1 : 0;
  }
  let scenario: Scenario;
  let trace: TraceRequest[] | undefined;
  if (args.isTrace) {
    trace = readTraceFile(target);
    scenario = traceScenario(target, args.fleet ? loadFleetFile(args.fleet) : undefined);
  } else {
    scenario = getScenario(target);
  }
  if (args.virtual) {
    const s = getScenario(target);
    const md = renderVirtual(s, virtualRows(s, { seed, quick: args.quick, durationS }), seed);
    process.stdout.write(md);
    if (args.out !== undefined) {
      mkdirSync(args.out, { recursive: true });
      writeFileSync(join(args.out, "virtual.md"), md);
    }
    return 0;
  }
  const outDir = args.out ?? `bench-results/${scenario.name}`;
  const n = args.repeat;
  const results = await runRounds(
    scenario,
    {
      seed,
      quick: args.quick,
      durationS,
      routers,
      trace,
      progress: args.progress,
      gatewayReplicas: args.gatewayReplicas,
    },
    n,
    outDir,
    args.keepLog,
    (k) => {
      if (n > 1) process.stderr.write(`round ${k} of ${n}\n`);
    },
  );
  const files = await writeReport(results, outDir);
  process.stderr.write(`\nwrote ${files.join(", ")}\n`);
  if (n > 1) process.stderr.write(`rounds 2..${n}: ${roundDir(outDir, 2).replace(/2$/, "<k>")}\n`);
  const failed = (results.rounds ?? [{ round: 1, routers: results.routers }]).flatMap((round) =>
    Object.entries(round.routers)
      .filter(([, r]) => r.status === "failed")
      .map(([name, r]) => ({ name, round: round.round, reason: r.reason })),
  );
  for (const f of failed)
    process.stderr.write(`router ${f.name} failed${n > 1 ? ` in round ${f.round}` : ""}: ${f.reason}\n`);
  return failed.length > 0 ? 1 : 0;
}

async function runFamily(args: {
  kind: "family";
  family: number;
  real: number;
  seed: number;
  quick: boolean;
  repeat: number;
  routers: RouterName[] | undefined;
  out: string | undefined;
  progress: boolean;
}): Promise<number> {
  const { runFamilyBench } = await import("../bench/family/family-bench.js");
  const outDir = args.out ?? `bench-results/family-seed${args.seed}`;
  const r = await runFamilyBench({
    n: args.family,
    seed: args.seed,
    quick: args.quick,
    real: args.real,
    repeat: args.repeat,
    ...(args.routers ? { routers: args.routers } : {}),
    outDir,
    progress: (line) => {
      if (args.progress) process.stderr.write(`${line}\n`);
    },
  });
  const say = (what: string, v: { verdict: { counts: { all: { met: number; of: number } } } }) =>
    process.stdout.write(
      `${what}: tokengate met every target on ${v.verdict.counts.all.met} of ${v.verdict.counts.all.of} workloads\n`,
    );
  say("virtual time", r.virtual);
  if (r.real) say("over HTTP", r.real);
  process.stderr.write(`wrote ${r.files.join(", ")}\n`);
  return 0;
}
