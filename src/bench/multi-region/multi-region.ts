// `tokengate bench multi-region [--quick]` (issue 18): three regions on loopback — eu-west, us-east,
// ap-south, each a `tokengate gateway` (region.name set, one pool of two simulated h100-llama8b engines
// from its own `tokengate sim --fleet`, the alias `chat`) — with callers in each region (several
// tenants, two of them under data residency, some with sessions) sending streaming chat requests at a
// steady open-loop rate, while us-east first degrades (its engines slowed), then fails (its engines
// answer 503 and fail health), then recovers (faults cleared). Two passes on the same engines (reset
// between) with the same arrivals:
//   (a) director: every caller sends to one `tokengate director` (mode forward) in front of the three;
//   (b) naive: a GeoDNS — each caller sends straight to the gateway of the region with the lowest
//       latency from its own, whatever its health, capacity or the tenant's residency.
// WAN latency does not exist on loopback: the figures add the latency matrix's round trip (caller
// region → serving region) to each measured TTFT; the director hop itself is real. Figures:
// multi-region-figures.ts; writes multi-region.json, multi-region.md and the processes' logs.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FigureInputs, type PassFigures, passFigures } from "./multi-region-figures.js";
import { log, type PassRun, PROCESSES_LOG, runPass } from "./multi-region-pass.js";
import {
  clearFaults,
  type RegionEngines,
  resetEngines,
  startRegionEngines,
} from "./multi-region-processes.js";
import { multiRegionMarkdown, type PassReport, type Targets } from "./multi-region-report.js";
import {
  type Arrival,
  arrivals,
  CALLER_TENANTS,
  ENGINE_PROFILE,
  ENGINES_PER_REGION,
  FAILING_REGION,
  LATENCY_MS,
  type MultiRegionSettings,
  multiRegionSettings,
  REGIONS,
  RESIDENCY,
} from "./multi-region-scenario.js";

export interface MultiRegionOptions {
  readonly outDir: string;
  readonly quick?: boolean;
  readonly seed?: number;
}

export async function runMultiRegion(opts: MultiRegionOptions): Promise<{ failed: boolean }> {
  const s = multiRegionSettings(opts.quick === true);
  const seed = opts.seed ?? 1;
  const schedule = arrivals(s, seed);
  mkdirSync(opts.outDir, { recursive: true });
  rmSync(join(opts.outDir, PROCESSES_LOG), { force: true });
  const work = mkdtempSync(join(tmpdir(), "tokengate-multi-region-"));
  const engines: RegionEngines[] = [];
  const problems: string[] = [];
  const runs: PassRun[] = [];
  try {
    try {
      for (const [i, region] of REGIONS.entries())
        engines.push(await startRegionEngines(region, work, seed * 100 + i));
    } catch (err) {
      problems.push(`the engines could not start: ${(err as Error).message}`);
    }
    const allUrls = engines.flatMap((e) => e.urls);
    if (problems.length === 0) {
      log(
        `multi-region: ${schedule.length} arrivals over ${s.durationMs / 1000} s per pass; phases ` +
          s.phases.map((p) => `${p.phase} ${p.startMs / 1000}–${p.endMs / 1000} s`).join(", "),
      );
      for (const name of ["director", "naive"] as const) {
        log(`multi-region: pass (${name === "director" ? "a" : "b"}) ${name}`);
        try {
          await clearFaults(allUrls);
          await resetEngines(allUrls);
          runs.push(await runPass(name, s, schedule, engines, work, opts.outDir));
        } catch (err) {
          problems.push(`pass ${name} could not run: ${(err as Error).message}`);
          log(`multi-region: pass ${name} failed: ${(err as Error).message}`);
        }
      }
      await clearFaults(allUrls).catch(() => {});
    }
    writeFileSync(
      join(opts.outDir, PROCESSES_LOG),
      engines.map((e) => `=== ${e.region}'s engines (tokengate sim --fleet)\n${e.child.output()}\n`).join(""),
      { flag: "a" },
    );
    return report(opts, s, seed, schedule, runs, problems);
  } finally {
    for (const e of engines) await e.child.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

function figureInputs(s: MultiRegionSettings): FigureInputs {
  return {
    phases: s.phases,
    latencyMs: LATENCY_MS,
    residency: RESIDENCY,
    failingRegion: FAILING_REGION,
    callerRegions: REGIONS,
    regions: REGIONS,
    binMs: s.binMs,
    movedShare: 0.9,
  };
}

function report(
  opts: MultiRegionOptions,
  s: MultiRegionSettings,
  seed: number,
  schedule: readonly Arrival[],
  runs: readonly PassRun[],
  problems: string[],
): { failed: boolean } {
  const inputs = figureInputs(s);
  const passes: PassReport[] = runs.map((r) => ({
    figures: passFigures(r.name, r.records, inputs),
    events: r.events,
    wallS: Math.round(r.wallMs / 100) / 10,
    decisionLines: r.decisionLines,
    retried: r.retried,
    failingStates: r.failingStates,
  }));
  const director = passes.find((p) => p.figures.name === "director")?.figures ?? null;
  const naive = passes.find((p) => p.figures.name === "naive")?.figures ?? null;
  if (director === null && !problems.some((p) => p.includes("director")))
    problems.push("the director pass did not run");
  if (director !== null && director.residency.violations > 0)
    problems.push(
      `tokengate's director served ${director.residency.violations} request(s) outside their tenant's regions`,
    );
  const targets = targetsOf(s, director, naive);
  const setup = setupText(s, seed, schedule);
  const failed = problems.length > 0;
  const doc = {
    date: new Date().toISOString(),
    seed,
    quick: s.quick,
    failed,
    problems,
    setup,
    settings: s,
    arrivals: arrivalCounts(schedule),
    targets,
    passes,
  };
  writeFileSync(join(opts.outDir, "multi-region.json"), `${JSON.stringify(doc, null, 2)}\n`);
  writeFileSync(
    join(opts.outDir, "multi-region.md"),
    multiRegionMarkdown({ setup, passes, targets, problems, s }),
  );
  process.stdout.write(summaryLine(director, naive, failed, problems));
  return { failed };
}

function targetsOf(s: MultiRegionSettings, d: PassFigures | null, n: PassFigures | null): Targets {
  const failErrors = (p: PassFigures | null) => p?.errorsByPhase.fail.errors ?? null;
  return {
    residencyViolations: d?.residency.violations ?? null,
    failoverMs: d?.failover.failoverMs ?? null,
    failoverTargetMs: s.failoverTargetMs,
    failoverMet: d !== null && d.failover.failoverMs !== null && d.failover.failoverMs <= s.failoverTargetMs,
    flappingPerMin: d?.switches.homePerMinInDegrade ?? null,
    flappingTargetPerMin: s.flappingTargetPerMin,
    flappingMet: d !== null && d.switches.homePerMinInDegrade <= s.flappingTargetPerMin,
    failErrorsDirector: failErrors(d),
    failErrorsNaive: failErrors(n),
    fewerFailErrorsMet: d !== null && n !== null && failErrors(d)! < failErrors(n)!,
    backMs: d?.failover.backMs ?? null,
    backMet: d !== null && d.failover.backMs !== null,
  };
}

function arrivalCounts(schedule: readonly Arrival[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of schedule) {
    const k = `${a.callerRegion}/${a.tenant}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

function setupText(s: MultiRegionSettings, seed: number, schedule: readonly Arrival[]): string {
  const callers = REGIONS.map(
    (r) =>
      `${r} ${s.ratePerCaller[r]}/s (${(CALLER_TENANTS[r] ?? []).map((t) => `${t.tenant} ${Math.round(t.share * 100)}%`).join(", ")})`,
  ).join("; ");
  const phases = s.phases.map((p) => `${p.phase} ${p.startMs / 1000}–${p.endMs / 1000} s`).join(", ");
  const d = s.director;
  const res = Object.entries(RESIDENCY)
    .map(([t, r]) => `${t} only in ${r.join(", ")}`)
    .join("; ");
  return (
    `Three regions on loopback (${REGIONS.join(", ")}), each a \`tokengate gateway\` with region.name set and one pool of ` +
    `${ENGINES_PER_REGION} simulated ${ENGINE_PROFILE} engines (its own \`tokengate sim --fleet\`; flowControl.maxInflight ` +
    `${s.maxInflightPerEngine} per engine), the alias \`chat\`. Callers (seed ${seed}, ${schedule.length} arrivals per pass, ` +
    `Poisson, streaming, prompts ${s.promptTokens[0]}–${s.promptTokens[1]} tokens, ${s.maxTokens[0]}–${s.maxTokens[1]} output ` +
    `tokens, ${Math.round(s.sessionShare * 100)}% with a session header): ${callers}. Residency: ${res}. Phases: ${phases}; ` +
    `${FAILING_REGION} degrades (its engines ${s.slowdown}× slower), fails (its engines answer 503 to every request and ` +
    `fail /health) and recovers (faults cleared). Pass (a) sends everything to one \`tokengate director\` (mode forward; ` +
    `default weights; dwell ${d.dwellMs} ms, margin ${d.switchMargin}; breaker ${d.failuresToOpen} failures or error rate ` +
    `${d.errorRateToOpen}, open ${d.openMs} ms, ${d.halfOpenProbes} probes; spillover below headroom ${d.minHeadroom}, at most ` +
    `${d.maxShare}; affinity ${d.affinityTtlMs} ms; polling every ${d.intervalMs} ms, stale after ${d.staleAfterMs} ms). Pass (b) ` +
    `is a naive GeoDNS: each caller sends straight to the gateway of the region with the lowest latency from its own ` +
    `(its own region), ignoring health, capacity and residency. Both passes on the same engines (reset between) and the ` +
    `same arrivals. WAN latency does not exist on loopback: every TTFT below adds the latency matrix's round trip from ` +
    `the caller's region to the serving region (same region ${LATENCY_MS["eu-west"]!["eu-west"]} ms, eu↔us ` +
    `${LATENCY_MS["eu-west"]!["us-east"]}, eu↔ap ${LATENCY_MS["eu-west"]!["ap-south"]}, us↔ap ` +
    `${LATENCY_MS["us-east"]!["ap-south"]}); the director's own hop is real (loopback).`
  );
}

function summaryLine(
  d: PassFigures | null,
  n: PassFigures | null,
  failed: boolean,
  problems: string[],
): string {
  const sec = (ms: number | null | undefined) =>
    ms === null || ms === undefined ? "never" : `${(ms / 1000).toFixed(1)} s`;
  const one = (p: PassFigures | null) =>
    p === null
      ? "did not run"
      : `failover ${sec(p.failover.failoverMs)}, back ${sec(p.failover.backMs)}, errors ${p.errors}/${p.requests} ` +
        `(fail phase ${p.errorsByPhase.fail.errors}), home switches ${p.switches.home} (${p.switches.homePerMinInDegrade}/min ` +
        `degrading), spilled ${p.spilledShare === null ? "–" : `${(p.spilledShare * 100).toFixed(1)}%`}, residency ` +
        `violations ${p.residency.violations}`;
  return (
    `multi-region: director: ${one(d)}\nmulti-region: naive: ${one(n)}\n` +
    `multi-region: ${failed ? `FAILED (${problems.join("; ")})` : "ok"}\n`
  );
}
