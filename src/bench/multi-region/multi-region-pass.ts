// One pass of the multi-region benchmark (multi-region.ts runs two): the regions' gateways and, for the
// director's pass, the director started on the pass's engines, a warm-up, the callers' load with the
// failing region's faults put on at their times, and what the pass leaves for the figures (the callers'
// records, the faults as applied, the director's decisions from its log).

import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { makeAgent, streamCompletion } from "../traffic/stream-client.js";
import {
  decisionsOf,
  type RequestRecord,
  regionStates,
  type StateSpan,
  withFirstRegions,
} from "./multi-region-figures.js";
import { requestBody, runLoad, type Target } from "./multi-region-load.js";
import {
  clearFaults,
  type DirectorProcess,
  directorYaml,
  type RegionEngines,
  type RegionGateway,
  setFaults,
  startDirectorProcess,
  startRegionGateway,
  waitReady,
  writeRegionConfig,
} from "./multi-region-processes.js";
import {
  type Arrival,
  FAILING_REGION,
  type MultiRegionSettings,
  nearestRegion,
  type Phase,
  REGIONS,
} from "./multi-region-scenario.js";

/** The children's own output (start-up lines, warnings), each under a heading. */
export const PROCESSES_LOG = "multi-region-processes.log";

export type PassName = "director" | "naive";

/** A fault put on the failing region's engines, when it was meant to and when it was. */
export interface FaultEvent {
  readonly phase: Phase;
  readonly what: string;
  readonly plannedMs: number;
  readonly appliedMs: number;
}

export interface PassRun {
  readonly name: PassName;
  readonly records: RequestRecord[];
  readonly events: FaultEvent[];
  readonly wallMs: number;
  /** Director pass: decision lines read from its log, and how many were retried on another region. */
  readonly decisionLines: number | null;
  readonly retried: number | null;
  /** Director pass: the failing region as its decisions saw it. */
  readonly failingStates: StateSpan[] | null;
}

/** Progress on stderr. */
export function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

// --- One pass ----------------------------------------------------------------------------------------------

export async function runPass(
  name: PassName,
  s: MultiRegionSettings,
  schedule: readonly Arrival[],
  engines: readonly RegionEngines[],
  work: string,
  outDir: string,
): Promise<PassRun> {
  const gateways: RegionGateway[] = [];
  let director: DirectorProcess | null = null;
  try {
    for (const e of engines) {
      const dir = join(work, `${name}-${e.region}`);
      writeRegionConfig(dir, e, s);
      const logFile = join(outDir, `multi-region-${name}-gateway-${e.region}.log`);
      rmSync(logFile, { force: true });
      gateways.push(
        await startRegionGateway(e.region, dir, logFile, join(work, `${name}-${e.region}-history.db`)),
      );
    }
    await Promise.all(gateways.map((g) => waitReady(g.url, `${g.region}'s gateway`)));
    await warmUp(gateways, s);
    if (name === "director") {
      const logFile = join(outDir, "multi-region-director.log");
      rmSync(logFile, { force: true });
      director = await startDirectorProcess(
        join(work, "director.yaml"),
        directorYaml(gateways, s),
        logFile,
        REGIONS,
      );
      writeFileSync(join(outDir, "multi-region-director.yaml"), directorYaml(gateways, s));
    }
    const failing = engines.find((e) => e.region === FAILING_REGION)!.urls;
    const byRegion = new Map(gateways.map((g) => [g.region, g.url]));
    const d = director;
    const targetOf = (a: Arrival): Target => {
      if (d !== null) return { url: d.url, region: null };
      const region = nearestRegion(a.callerRegion);
      return { url: byRegion.get(region)!, region };
    };
    const agent = makeAgent(4096);
    const t0 = performance.now();
    const t0Epoch = Date.now();
    const events: FaultEvent[] = [];
    const timeline = faultTimeline(s, failing, t0, events);
    let records: RequestRecord[];
    try {
      records = await runLoad(schedule, targetOf, {
        agent,
        timeoutMs: s.requestTimeoutMs,
        tracePrefix: name,
        t0,
      });
      await timeline;
    } finally {
      await agent.close();
    }
    const wallMs = performance.now() - t0;
    let decisionLines: number | null = null;
    let retried: number | null = null;
    let failingStates: StateSpan[] | null = null;
    if (director !== null) {
      await director.child.stop();
      const text = existsSync(director.logFile) ? readFileSync(director.logFile, "utf8") : "";
      const decisions = decisionsOf(text);
      decisionLines = decisions.size;
      retried = [...decisions.values()].filter((x) => x.retriedFrom !== null).length;
      records = withFirstRegions(records, decisions, name);
      failingStates = regionStates(decisions.values(), FAILING_REGION, t0Epoch);
    } else {
      records = records.map((r) => ({ ...r, firstRegion: r.region }));
    }
    return { name, records, events, wallMs, decisionLines, retried, failingStates };
  } finally {
    const outputs: string[] = [];
    if (director !== null) {
      await director.child.stop();
      outputs.push(`=== ${name}: tokengate director\n${director.child.output()}\n`);
    }
    for (const g of gateways) {
      await g.child.stop();
      outputs.push(`=== ${name}: ${g.region}'s tokengate gateway\n${g.child.output()}\n`);
    }
    writeFileSync(join(outDir, PROCESSES_LOG), outputs.join(""), { flag: "a" });
  }
}

/** The failing region's faults at the phases' starts: slowed, then failing, then cleared. */
async function faultTimeline(
  s: MultiRegionSettings,
  urls: readonly string[],
  t0: number,
  events: FaultEvent[],
): Promise<void> {
  const steps: { phase: Phase; what: string; apply: () => Promise<void> }[] = [
    {
      phase: "degrade",
      what: `slowdown ${s.slowdown}`,
      apply: () => setFaults(urls, { slowdown: s.slowdown }),
    },
    {
      phase: "fail",
      what: "errorRate 1 (503), healthFail",
      apply: () => setFaults(urls, { errorRate: 1, errorStatus: 503, healthFail: true }),
    },
    { phase: "recover", what: "faults cleared", apply: () => clearFaults(urls) },
  ];
  for (const step of steps) {
    const at = s.phases.find((p) => p.phase === step.phase)!.startMs;
    const wait = t0 + at - performance.now();
    if (wait > 0) await sleep(wait);
    await step.apply();
    events.push({
      phase: step.phase,
      what: step.what,
      plannedMs: at,
      appliedMs: Math.round(performance.now() - t0),
    });
    log(
      `multi-region: ${step.phase} at ${((performance.now() - t0) / 1000).toFixed(1)} s: ${FAILING_REGION} ${step.what}`,
    );
  }
}

/** A few requests on each gateway before the pass (three at a time), so its TTFT fit has learned. */
async function warmUp(gateways: readonly RegionGateway[], s: MultiRegionSettings): Promise<void> {
  const agent = makeAgent(64);
  try {
    await Promise.all(
      gateways.map(async (g) => {
        for (let i = 0; i < s.warmupRequests; i += 3) {
          await Promise.all(
            [0, 1, 2].map((k) =>
              streamCompletion(
                g.url,
                requestBody({
                  id: `warm-${i + k}`,
                  atMs: 0,
                  callerRegion: g.region,
                  tenant: "warmup",
                  session: null,
                  promptTokens: s.promptTokens[0],
                  maxTokens: s.maxTokens[0],
                  textSeed: 7_000 + i + k,
                }),
                { agent, headers: { "x-ai-tenant": "warmup" } },
              ),
            ),
          );
        }
      }),
    );
  } finally {
    await agent.close();
  }
}
