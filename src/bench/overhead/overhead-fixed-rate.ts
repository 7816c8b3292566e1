// The overhead benchmark's fixed-rate measurements: open-loop load at RATE on every path in rotating
// slices (so that other work on the machine falls on every path alike), pooled per path into latency
// percentiles, counts and the router's CPU per request.

import { percentile, round } from "../stats.js";
import { runOpenLoop } from "../traffic/load.js";
import { type FixedRateClient, type FixedRateResult, fixedRateClient } from "./overhead-client.js";
import type { CpuFigures, cpuMeter, PathUnderTest } from "./overhead-cpu.js";
import {
  CLIENT_CONNECTIONS,
  type PathName,
  RATE,
  SLICE_WARMUP_MS,
  SMALL,
  STREAM,
} from "./overhead-settings.js";
import type { RouterPauses } from "./router-pauses.js";

export function q(values: number[]): { p50: number; p90: number; p99: number; max: number } {
  return {
    p50: round(percentile(values, 50), 2),
    p90: round(percentile(values, 90), 2),
    p99: round(percentile(values, 99), 2),
    max: round(percentile(values, 100), 2),
  };
}

/** Router CPU per request in µs; null for direct. */
export const usPerRequest = (cpu: CpuFigures, n: number) =>
  cpu.router_s === null || n === 0 ? null : round((cpu.router_s * 1e6) / n, 0);

type Meter = ReturnType<typeof cpuMeter>;

export interface PathSamples<T> {
  results: T[];
  dropped: number;
  lateMs: number[];
  elapsedMs: number;
  cpu: CpuFigures;
  /** Wall-clock [start, end] ms of each measured slice. */
  windows: [number, number][];
  /** What paused the router in those windows, when it carries a pause probe. */
  pauses: RouterPauses | null;
}

/**
 * Open-loop load at RATE on every path, in `slices` alternating slices of `seconds / slices` each; a
 * path keeps its client connections from one slice to the next. Before each slice the load generator
 * collects its own garbage (when run with --expose-gc), so its GC pauses land between slices rather
 * than in whichever path's measurement they happened to hit. `cpu` sums the slices; its `others_s`
 * over all paths decides whether the whole measurement is repeated.
 */
async function interleaved<T>(
  paths: PathUnderTest[],
  seconds: number,
  slices: number,
  meter: (p: PathUnderTest) => Meter,
  send: (client: FixedRateClient, seq: number) => Promise<T>,
): Promise<{ byPath: Map<PathName, PathSamples<T>>; cpu: CpuFigures }> {
  const clients = new Map(paths.map((p) => [p.name, fixedRateClient(p.urls, CLIENT_CONNECTIONS)]));
  const byPath = new Map<PathName, PathSamples<T>>();
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let s = 0; s < slices; s++) {
    for (let i = 0; i < paths.length; i++) {
      const p = paths[(i + s) % paths.length]!;
      const client = clients.get(p.name)!;
      const cpu = meter(p);
      gc?.();
      let from = Date.now();
      const r = await runOpenLoop({
        ratePerSec: RATE,
        warmupMs: SLICE_WARMUP_MS,
        durationMs: (seconds * 1000) / slices,
        maxOutstanding: 2 * RATE,
        onMeasureStart: () => {
          cpu.reset();
          from = Date.now();
        },
        send: (seq) => send(client, seq),
      });
      const used = cpu.read();
      const window: [number, number] = [from, Date.now()];
      const acc = byPath.get(p.name);
      if (!acc) {
        byPath.set(p.name, { ...r, cpu: used, windows: [window], pauses: null });
        continue;
      }
      acc.windows.push(window);
      acc.results.push(...r.results);
      acc.dropped += r.dropped;
      acc.lateMs.push(...r.lateMs);
      acc.elapsedMs += r.elapsedMs;
      acc.cpu = addCpu(acc.cpu, used);
    }
  }
  await Promise.all([...clients.values()].map((c) => c.close()));
  if (paths.some((p) => p.routerPauses)) {
    await new Promise((r) => setTimeout(r, 400)); // the probes write every 250 ms
    for (const p of paths) {
      const acc = byPath.get(p.name);
      if (acc && p.routerPauses) acc.pauses = p.routerPauses(acc.windows);
    }
  }
  const cpu = [...byPath.values()].map((x) => x.cpu).reduce(addCpu);
  return { byPath, cpu };
}

function addCpu(a: CpuFigures, b: CpuFigures): CpuFigures {
  const sum = (x: number | null, y: number | null) => (x === null || y === null ? null : round(x + y, 2));
  return {
    seconds: round(a.seconds + b.seconds, 2),
    client_s: round(a.client_s + b.client_s, 2),
    engines_s: round(a.engines_s + b.engines_s, 2),
    router_s: sum(a.router_s, b.router_s),
    others_s: round(a.others_s + b.others_s, 2),
  };
}

function byPathOf<T, F>(
  r: { byPath: Map<PathName, PathSamples<T>>; cpu: CpuFigures },
  figures: (x: PathSamples<T>) => F,
): { byPath: Map<PathName, F>; cpu: CpuFigures } {
  return { byPath: new Map([...r.byPath].map(([name, x]) => [name, figures(x)])), cpu: r.cpu };
}

export async function latencyRun(
  paths: PathUnderTest[],
  seconds: number,
  slices: number,
  meter: (p: PathUnderTest) => Meter,
) {
  const r = await interleaved(paths, seconds, slices, meter, (client, seq) => client.send(seq, SMALL, false));
  return byPathOf(r, latencyFigures);
}

/** What every fixed-rate figure reports besides its latencies: counts, rate, lateness, CPU. */
function fixedRateCommon<T extends { error: string | null }>(r: PathSamples<T>, ok: readonly T[]) {
  return {
    offered_rps: RATE,
    sent: r.results.length,
    errors: r.results.length - ok.length,
    error_sample: r.results.find((x) => x.error)?.error ?? null,
    dropped: r.dropped,
    achieved_rps: round(ok.length / (r.elapsedMs / 1000), 1),
    generator_late_ms: { p50: round(percentile(r.lateMs, 50), 2), p99: round(percentile(r.lateMs, 99), 2) },
    cpu: r.cpu,
    router_cpu_us_per_request: usPerRequest(r.cpu, ok.length),
    router_pauses: r.pauses,
  };
}

function latencyFigures(r: PathSamples<FixedRateResult>) {
  const ok = r.results.filter((x) => !x.error);
  return { ...fixedRateCommon(r, ok), latency_ms: q(ok.map((x) => x.ms)) };
}

export async function streamingRun(
  paths: PathUnderTest[],
  seconds: number,
  slices: number,
  meter: (p: PathUnderTest) => Meter,
) {
  const r = await interleaved(paths, seconds, slices, meter, (client, seq) => client.send(seq, STREAM, true));
  return byPathOf(r, streamingFigures);
}

function streamingFigures(r: PathSamples<FixedRateResult>) {
  const ok = r.results.filter((x) => !x.error && x.contentFrames === 16);
  return {
    ...fixedRateCommon(r, ok),
    ttft_ms: q(ok.map((x) => x.ttftMs)),
    e2e_ms: q(ok.map((x) => x.e2eMs)),
  };
}

export type LatencyFigures = ReturnType<typeof latencyFigures>;
export type StreamingFigures = ReturnType<typeof streamingFigures>;
