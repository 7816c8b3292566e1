// `tokengate bench`: runs a scenario's workload against each router over the same simulated fleet, one
// router after another with the engines reset in between, and gathers what the report shows.

import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { loadConfigTexts } from "../../config/index.js";
import type { PauseWhen } from "../../config/route-types.js";
import { makeEngineConfig } from "../../sim/engine-config.js";
import type { FleetSpec } from "../../sim/fleet.js";
import type { RequestTiming } from "../../sim/request-timings.js";
import { type BenchResults, type RouterResult, skippedRouter } from "../results.js";
import type { RouterName, Scenario, Topology } from "../scenarios/scenario.js";
import { type ShippedScenario, scenarioPhases } from "../scenarios/shipped.js";
import { type Child, startTokengate } from "../services/child-process.js";
import { startBaseline } from "../services/nginx.js";
import { favorRouter, type PriorityMode } from "../services/router-priority.js";
import { summarizeFlow } from "../summary/flow-summary.js";
import { loraLoadsDuring, readLoraLoads } from "../summary/lora-loads.js";
import { summarize } from "../summary/summarize.js";
import type { TraceRequest } from "../trace-formats/trace.js";
import { EngineSampler, type EngineTarget } from "../traffic/engine-sampler.js";
import { type Front, type ReplayRecord, replay } from "../traffic/replay.js";
import { makeAgent } from "../traffic/stream-client.js";
import { isPeerRouter, peerGatewayConfig } from "./peer-config.js";
import { Progress } from "./progress.js";

export interface RunOptions {
  seed: number;
  quick: boolean;
  durationS?: number;
  /** Only these routers (default: every router the scenario's topologies list). */
  routers?: readonly RouterName[];
  /** A user's trace instead of the scenario's generated one. */
  trace?: TraceRequest[];
  progress?: boolean;
  /** Copy tokengate's request log here as `gateway-<router key>.log` (to study its decisions). */
  keepLogDir?: string;
  /**
   * Also run tokengate as this many replicas behind each front (round-robin, by prefix, by session),
   * each replica with its own in-flight view and prefix index: keys `tokengate×N <front>`.
   */
  gatewayReplicas?: number;
  /** Run each topology's routers in the reverse of their listed order (`--repeat` alternates it). */
  reverseRouters?: boolean;
}

/** How many tokengate processes serve a run, and how the client spreads requests over them. */
interface Replicas {
  readonly count: number;
  readonly front: Front;
}

const FRONTS: readonly Front[] = ["round-robin", "prefix", "session"];

/** A running fleet of simulated engines and the endpoint URL of each replica. */
interface RunningFleet {
  child: Child;
  targets: EngineTarget[];
  byGroup: Record<string, string[]>;
  stop(): Promise<void>;
}

export async function runScenario(scenario: Scenario, opts: RunOptions): Promise<BenchResults> {
  const trace =
    opts.trace ?? scenario.generate({ seed: opts.seed, quick: opts.quick, durationS: opts.durationS });
  const results: BenchResults = {
    scenario: scenario.name,
    seed: opts.seed,
    date: new Date().toISOString(),
    quick: opts.quick,
    description: scenario.description,
    requests: trace.length,
    live_class: scenario.liveClass,
    ...((scenario as Partial<ShippedScenario>).prefillTargets ? { prefill_targets: true } : {}),
    routers: {},
  };
  for (const topo of scenario.topologies) {
    // A peer runs wherever tokengate does: it is tokengate's gateway with another picker.
    const routers = (opts.routers ?? topo.routers).filter(
      (r) => topo.routers.includes(r) || (isPeerRouter(r) && topo.routers.includes("tokengate")),
    );
    if (opts.reverseRouters) routers.reverse();
    if (routers.length === 0) continue;
    const fleet = await startFleetChild(topo.fleet);
    try {
      for (const router of routers) {
        const key = scenario.topologies.length > 1 ? `${router}@${topo.name}` : router;
        await resetEngines(fleet.targets);
        results.routers[key] = await runRouter(router, topo, fleet, trace, scenario, opts, key);
        const n = opts.gatewayReplicas ?? 1;
        if (router !== "tokengate" || n < 2) continue;
        for (const front of FRONTS) {
          const rkey = `tokengate×${n} ${front}${scenario.topologies.length > 1 ? `@${topo.name}` : ""}`;
          await resetEngines(fleet.targets);
          results.routers[rkey] = await runRouter(router, topo, fleet, trace, scenario, opts, rkey, {
            count: n,
            front,
          });
        }
      }
    } finally {
      await fleet.stop();
    }
  }
  return results;
}

async function runRouter(
  router: RouterName,
  topo: Topology,
  fleet: RunningFleet,
  trace: TraceRequest[],
  scenario: Scenario,
  opts: RunOptions,
  key: string,
  replicas: Replicas = { count: 1, front: "round-robin" },
): Promise<RouterResult> {
  const work = mkdtempSync(join(tmpdir(), `tokengate-bench-${router}-`));
  let stopRouter: () => Promise<void> = async () => {};
  let url: string;
  let urls: string[] = [];
  let logFile: string | null = null;
  let configFiles: Record<string, string> | null = null;
  let priority: PriorityMode = "none";
  try {
    if (router === "tokengate" || isPeerRouter(router)) {
      const configDir = join(work, "config");
      const own = topo.gatewayConfig(fleet.byGroup);
      configFiles = isPeerRouter(router) ? peerGatewayConfig(own, router) : own;
      writeConfig(configDir, configFiles);
      logFile = join(work, "gateway.log");
      const gws: Child[] = [];
      for (let i = 0; i < replicas.count; i++) {
        const log = replicas.count === 1 ? logFile : join(work, `gateway-${i}.log`);
        gws.push(
          await startTokengate(
            ["gateway", "--config", configDir, "--port", "0", "--log", log, "--history", ":memory:"],
            /listening on http:\/\/[\d.]+:\d+/,
          ),
        );
      }
      urls = gws.map((gw) => /listening on (http:\/\/[\d.]+:\d+)/.exec(gw.output())![1]!);
      url = urls[0]!;
      const merged = logFile;
      stopRouter = async () => {
        await Promise.all(gws.map((gw) => gw.stop()));
        // One log for the summary: the replicas' lines together.
        if (replicas.count > 1) {
          const parts = gws.map((_, i) => readFileSync(join(work, `gateway-${i}.log`), "utf8"));
          writeFileSync(merged, parts.join(""));
        }
      };
      for (const gw of gws) priority = favorRouter(gw.pid, [fleet.child.pid]);
    } else {
      const upstreams = fleet.targets.map((t) => t.url);
      const nginx = await startBaseline(router, upstreams);
      if ("skipped" in nginx) {
        return skippedRouter(nginx.skipped, topo.name);
      }
      url = nginx.url;
      stopRouter = nginx.stop;
      priority = favorRouter(nginx.pid, [fleet.child.pid]);
    }
    // Adapter loads are the engines' own counts, read on either side of the run (the reset before the
    // run zeroes them, so `before` is 0 unless something reached the engines in between).
    const withLora = hasLora(topo.fleet);
    const loraBefore = withLora ? await readLoraLoads(fleet.targets) : null;
    const sampler = new EngineSampler(fleet.targets, 500);
    const agent = makeAgent(4096);
    const progress = new Progress(`${router}@${topo.name}`, trace.length, opts.progress !== false);
    sampler.start();
    const t0 = performance.now();
    const startedAtEpochMs = Date.now();
    let records: ReplayRecord[];
    try {
      records = await replay(trace, {
        url,
        ...(replicas.count > 1 ? { replicas: { urls, front: replicas.front } } : {}),
        agent,
        model: modelFor(router, topo, configFiles),
        onDone: (rec, done) => progress.update(done, rec.result.error !== null),
      });
    } finally {
      progress.finish();
      await sampler.stop();
      await agent.close();
    }
    const durationS = (performance.now() - t0) / 1000;
    const engineTimings = await collectTimings(fleet.targets);
    const loraLoads = loraBefore
      ? loraLoadsDuring(fleet.targets, loraBefore, await readLoraLoads(fleet.targets))
      : undefined;
    await stopRouter();
    stopRouter = async () => {};
    const log = logFile ? readLog(logFile) : null;
    const phases = scenarioPhases(scenario, {
      seed: opts.seed,
      quick: opts.quick,
      durationS: opts.durationS,
    });
    if (logFile && opts.keepLogDir) {
      mkdirSync(opts.keepLogDir, { recursive: true });
      copyFileSync(logFile, join(opts.keepLogDir, `gateway-${key}.log`));
    }
    const result = summarize({
      records,
      sampler,
      fleet: fleet.targets,
      durationS,
      log,
      scenario,
      topology: topo.name,
      engineTimings,
      loraLoads,
      phases,
    });
    result.priority = priority;
    if (scenario.batchClass) {
      result.flow = summarizeFlow({
        records,
        batchClass: scenario.batchClass,
        phases,
        log,
        startedAtEpochMs,
        pauseWhen: configFiles ? batchPause(configFiles, scenario.batchClass) : null,
      });
    }
    return result;
  } catch (err) {
    return { ...skippedRouter(`${(err as Error).message}`, topo.name), status: "failed" };
  } finally {
    await stopRouter();
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The `model` callers send: tokengate's alias (the first one its route config declares), or for a
 * baseline the served model name itself (baselines run on topologies whose replicas all serve one model).
 */
function modelFor(router: RouterName, topo: Topology, configFiles: Record<string, string> | null): string {
  if ((router === "tokengate" || isPeerRouter(router)) && configFiles) {
    const loaded = loadConfigTexts(configFiles);
    if (loaded.ok) {
      const alias = loaded.config.route.aliases.keys().next().value;
      if (alias) return alias;
    }
  }
  return topo.fleet.groups[0]!.model;
}

/** Whether any engine of the fleet serves LoRA adapters (--enable-lora, implied by adapters or slots). */
function hasLora(fleet: FleetSpec): boolean {
  return fleet.groups.some((g) => makeEngineConfig(g.profile, g.model, g.engine).enableLora);
}

function writeConfig(dir: string, files: Record<string, string>): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
}

async function startFleetChild(spec: FleetSpec): Promise<RunningFleet> {
  const dir = mkdtempSync(join(tmpdir(), "tokengate-fleet-"));
  const file = join(dir, "fleet.yaml");
  writeFileSync(file, stringify(fleetDocument(spec)));
  const child = await startTokengate(["sim", "--fleet", file], /simulated replica\(s\)/, 30_000);
  const urls = [...child.output().matchAll(/^\s+(\S+)\s+(http:\/\/[\d.]+:\d+)/gm)].map((m) => ({
    name: m[1]!,
    url: m[2]!,
  }));
  const targets: EngineTarget[] = [];
  const byGroup: Record<string, string[]> = {};
  let i = 0;
  for (const g of spec.groups) {
    byGroup[g.name] = [];
    for (let k = 0; k < g.replicas; k++, i++) {
      const u = urls[i]!;
      targets.push({ name: u.name, group: g.name, url: u.url });
      byGroup[g.name]!.push(u.url);
    }
  }
  return {
    child,
    targets,
    byGroup,
    stop: async () => {
      await child.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The `kind: SimFleet` document `tokengate sim --fleet` is started with for a scenario's fleet. */
export function fleetDocument(spec: FleetSpec): Record<string, unknown> {
  return {
    apiVersion: "tokengate.dev/v1alpha1",
    kind: "SimFleet",
    metadata: { name: spec.name },
    spec: fleetYamlSpec(spec),
  };
}

function fleetYamlSpec(spec: FleetSpec): unknown {
  return {
    host: spec.host,
    seed: spec.seed,
    groups: spec.groups.map((g) => ({
      name: g.name,
      replicas: g.replicas,
      port: 0,
      profile: g.profile,
      model: g.model,
      dialect: g.dialect,
      engine: g.engine,
      outputLenDist: g.outputLenDist,
      streamInterval: g.streamInterval,
      faults: g.faults,
    })),
  };
}

/** Each engine's record of the requests it finished, by request id (the harness sends its trace ids). */
async function collectTimings(targets: readonly EngineTarget[]): Promise<Map<string, RequestTiming>> {
  const out = new Map<string, RequestTiming>();
  for (const t of targets) {
    const list = (await (await fetch(`${t.url}/admin/requests`)).json()) as RequestTiming[];
    for (const r of list) if (r.finish !== "abort" || !out.has(r.id)) out.set(r.id, r);
  }
  return out;
}

async function resetEngines(targets: readonly EngineTarget[]): Promise<void> {
  await Promise.all(
    targets.map((t) => fetch(`${t.url}/admin/reset`, { method: "POST" }).then((r) => r.text())),
  );
}

/** The pause of the rule that routes the batch class, from tokengate's config for the run. */
function batchPause(files: Record<string, string>, batchClass: string): PauseWhen | null {
  const loaded = loadConfigTexts(files);
  if (!loaded.ok) return null;
  const rule = loaded.config.route.rules.find((r) => r.when.requestClass?.includes(batchClass));
  return rule?.queuePolicy?.pauseWhen ?? null;
}

function readLog(file: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // A torn last line (the gateway was stopped mid-write) is not a request's line.
    }
  }
  return out;
}
