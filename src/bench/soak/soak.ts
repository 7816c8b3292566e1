// The soak benchmark (issue 12): simulated engines and the gateway as child processes, steady mixed
// streaming and non-streaming load from this process for `--minutes` (default 30; `--quick` 1), with
// client cancels and one engine crash and restart every few minutes — and what that leaves behind:
// the gateway's memory after the warm-up and at the end, its event-loop delay and fds, anything still
// counted in flight or queued once the load stopped, and every failure classified (soak-classify.ts).
// Reports go to bench-results/soak.{json,md}.
// `node --expose-gc dist/bench/soak/soak.js [--minutes 30] [--quick] [--rate 50] [--retry-budget 10] [--out bench-results]`

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { writeOnePoolGateway } from "../harness/one-pool-gateway.js";
import { type Child, cpuSeconds, startTokengate } from "../services/child-process.js";
import { percentile, round } from "../stats.js";
import { EngineSampler } from "../traffic/engine-sampler.js";
import { runOpenLoop } from "../traffic/load.js";
import { makeAgent } from "../traffic/stream-client.js";
import { randomStream } from "../workload/distributions.js";
import { classifyOutcome, FleetTimeline, groupFailures, type SoakOutcome } from "./soak-classify.js";
import { sendSoakRequest } from "./soak-client.js";
import {
  type CrashRecord,
  crashRecovery,
  growthPercent,
  memoryAt,
  type ReportedGroup,
  rssSlopeMibPerHour,
  type SoakReport,
  soakTargets,
} from "./soak-figures.js";
import { endState, postFault, routableEndpoints } from "./soak-fleet.js";
import { readGatewayLog } from "./soak-gateway-log.js";
import { soakMarkdown } from "./soak-report.js";
import { crashSchedule } from "./soak-schedule.js";
import {
  FleetWatch,
  GatewaySampler,
  GatewayView,
  procFdCount,
  procRssBytes,
  readProbe,
  SOAK_ADMIN_TOKEN,
} from "./soak-watch.js";
import { SOAK_MIX, soakWorkload } from "./soak-workload.js";

export interface SoakOptions {
  outDir: string;
  /** Length of the load; default 30, or 1 with `quick`. */
  minutes?: number;
  quick: boolean;
  /** Offered requests per second; default RATE. */
  rate?: number;
  seed?: number;
  /**
   * The gateway's `retry.budgetPercent` (default: the shipped 10). A variant to tell whether failures
   * during a crash come from the retry budget.
   */
  retryBudgetPercent?: number;
}

/**
 * The engines: `a100-llama8b`, not `h100-llama8b`. Measured on this 2-core machine with this mix, one
 * h100 replica takes ~80–100 req/s before its TTFT climbs (API-server bound), so 60% of three would be
 * ~150 req/s — about 1.3 cores of client, engines and gateway on 2 cores shared with other work, and the
 * soak would measure the machine. One a100 replica takes ~30 req/s with TTFT p50 83 ms and no queue
 * (at 40: p50 359 ms, a waiting queue of up to 29), so three take ~90.
 */
export const PROFILE = "a100-llama8b";
export const REPLICAS = 3;
/** What the three take at this mix before queueing (measured as above). */
export const FLEET_CAPACITY_RPS = 90;
/** ~55% of the three engines' ~90 req/s; with one down, ~83% of the two left (still no queue). */
export const RATE = 50;
const RESTART_AFTER_MS = 5000;
const SETTLE_MS = 5000;
/** Longest wait for idle connections to close after the load (not with --quick). */
const IDLE_WAIT_MS = 75_000;
const CLIENT_TIMEOUT_MS = 120_000;
const MAX_OUTSTANDING = 2000;
/** The warm-up is the first 20% of the run. */
const WARMUP_SHARE = 0.2;
const PROBE = pathToFileURL(fileURLToPath(new URL("./soak-probe.js", import.meta.url))).href;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (s: string) => process.stderr.write(`  soak: ${s}\n`);

export async function runSoak(opts: SoakOptions): Promise<SoakReport> {
  const minutes = opts.minutes ?? (opts.quick ? 1 : 30);
  if (!(minutes > 0)) throw new Error(`soak: --minutes must be a number > 0, got ${minutes}`);
  const durationMs = Math.round(minutes * 60_000);
  const rate = opts.rate ?? RATE;
  const seed = opts.seed ?? 1;
  const sampleMs = Math.min(5000, Math.max(2000, Math.round(durationMs / 120)));
  const warmupEndMs = durationMs * WARMUP_SHARE;
  // Memory is the median of a window: after the warm-up, and the same length at the end of the load.
  const windowMs = Math.max(3 * sampleMs, durationMs * 0.05);
  const tmp = mkdtempSync(join(tmpdir(), "tokengate-soak-"));
  const probeFile = join(tmp, "probe.jsonl");
  const logFile = join(tmp, "gateway.log");
  const children: Child[] = [];
  const loadBefore = loadavg()[0]!;
  try {
    const sim = await startTokengate(
      [
        "sim",
        ...["--replicas", String(REPLICAS), "--port", "0", "--profile", PROFILE, "--model", SOAK_MIX.model],
        ...["--seed", String(seed)],
      ],
      /simulated replica\(s\)/,
    );
    children.push(sim);
    const urls = [...new Set(sim.output().match(/http:\/\/[\d.]+:\d+/g) ?? [])];
    if (urls.length !== REPLICAS)
      throw new Error(`soak: expected ${REPLICAS} engine URLs, got ${urls.length}`);
    writeOnePoolGateway(tmp, {
      name: "soak",
      model: SOAK_MIX.model,
      engines: urls,
      maxInputTokens: 16384,
      maxQueueMs: 10000,
      // Everything else (timeouts, retries, ejection, circuit breaker, health every 1 s) as shipped.
      gatewaySpec:
        opts.retryBudgetPercent === undefined
          ? ""
          : `  retry: { budgetPercent: ${opts.retryBudgetPercent} }\n`,
    });
    const gw = await startTokengate(
      ["gateway", "--config", tmp, "--port", "0", "--log", logFile],
      /listening on http:\/\/[\d.]+:\d+/,
      15_000,
      {
        nodeArgs: ["--expose-gc", "--import", PROBE],
        env: {
          TOKENGATE_SOAK_PROBE: probeFile,
          TOKENGATE_SOAK_PROBE_MS: String(sampleMs),
          TOKENGATE_ADMIN_TOKEN: SOAK_ADMIN_TOKEN,
        },
      },
    );
    children.push(gw);
    const gwUrl = /listening on (http:\/\/[\d.]+:\d+)/.exec(gw.output())![1]!;
    const adminUrl = /metrics at (http:\/\/[\d.]+:\d+)\/metrics/.exec(gw.output())![1]!;
    const engines = await routableEndpoints(adminUrl, urls);
    log(
      `${REPLICAS} × ${PROFILE} (${engines.map((e) => e.name).join(", ")}), gateway pid ${gw.pid}, ${minutes} min at ${rate} req/s`,
    );

    const timeline = new FleetTimeline(engines.map((e) => e.name));
    const origin = performance.now();
    const fleet = new FleetWatch(engines, timeline, origin);
    const view = new GatewayView(adminUrl, origin);
    const sampler = new GatewaySampler(gw.pid, adminUrl, probeFile, origin, sampleMs);
    const engineSampler = new EngineSampler(
      engines.map((e) => ({ name: e.name, group: "soak", url: e.url })),
      2000,
    );
    let loadMax = loadBefore;
    const loadTimer = setInterval(() => {
      loadMax = Math.max(loadMax, loadavg()[0]!);
    }, 5000);
    fleet.start();
    view.start();
    sampler.start();
    engineSampler.start();

    const schedule = crashSchedule({ durationMs, replicas: REPLICAS, restartAfterMs: RESTART_AFTER_MS });
    const crashes: (CrashRecord & { atMs: number })[] = [];
    const timers: NodeJS.Timeout[] = schedule.map((c) =>
      setTimeout(() => {
        const e = engines[c.replica]!;
        const atMs = fleet.crashing(e.name);
        const rec = {
          replica: c.replica,
          endpoint: e.name,
          atMs,
          at_s: round(atMs / 1000, 1),
          posted: false,
          engine_back_at_s: null,
          gateway_out_at_s: null,
          gateway_back_at_s: null,
          gateway_why: [],
        };
        crashes.push(rec);
        log(`crashing ${e.name} at ${rec.at_s} s (restart after ${RESTART_AFTER_MS} ms)`);
        void postFault(e.url, { crashAtMs: 0, restartAfterMs: RESTART_AFTER_MS }).then((ok) => {
          rec.posted = ok;
        });
      }, c.atMs),
    );
    // A full GC in the gateway at the end of the warm-up window and at the end of the load.
    const gcAt = [warmupEndMs + windowMs, durationMs];
    const gcMarks: number[] = [];
    for (const at of gcAt)
      timers.push(
        setTimeout(() => {
          gcMarks.push(Date.now());
          gw.proc.kill("SIGUSR2");
        }, at),
      );

    const fdsBefore = procFdCount(gw.pid);
    const workload = soakWorkload(SOAK_MIX, seed);
    const agent = makeAgent(1024);
    const cpu0 = { gw: cpuSeconds(gw.pid), sim: cpuSeconds(sim.pid), me: process.cpuUsage() };
    const arrivals = randomStream(seed, "soak-arrivals");
    const run = await runOpenLoop<SoakOutcome>({
      ratePerSec: rate,
      durationMs,
      arrivals: "poisson",
      random: arrivals,
      maxOutstanding: MAX_OUTSTANDING,
      send: (seq) =>
        sendSoakRequest(gwUrl, workload.next(seq), { agent, originMs: origin, timeoutMs: CLIENT_TIMEOUT_MS }),
    });
    const loadSeconds = (performance.now() - origin) / 1000;
    const cpu = {
      gateway_cores: round((cpuSeconds(gw.pid) - cpu0.gw) / loadSeconds, 2),
      engines_cores: round((cpuSeconds(sim.pid) - cpu0.sim) / loadSeconds, 2),
      client_cores: round(
        (process.cpuUsage(cpu0.me).user + process.cpuUsage(cpu0.me).system) / 1e6 / loadSeconds,
        2,
      ),
    };
    for (const t of timers) clearTimeout(t);
    log(`load done: ${run.results.length} requests; settling ${SETTLE_MS} ms`);
    await agent.close();
    await sleep(SETTLE_MS);
    const end = await endState(adminUrl, gw.pid, SETTLE_MS);
    const settledRss = procRssBytes(gw.pid);
    await sampler.sample();
    // Idle keep-alive connections close after 60 s (the gateway's upstream pools) and 65 s (its
    // listener): with no traffic, the fds must come back to where they were before the load.
    end.fds_before_load = fdsBefore;
    if (!opts.quick) {
      const idleFrom = performance.now();
      while (performance.now() - idleFrom < IDLE_WAIT_MS) {
        await sleep(5000);
        end.fds_after_idle = procFdCount(gw.pid);
        end.idle_wait_s = round((performance.now() - idleFrom) / 1000, 0);
        if (end.fds_after_idle !== null && fdsBefore !== null && end.fds_after_idle <= fdsBefore) break;
      }
    }
    clearInterval(loadTimer);
    await Promise.all([fleet.stop(), view.stop(), sampler.stop(), engineSampler.stop()]);
    await gw.stop();
    children.splice(children.indexOf(gw), 1);

    // Failures, classified against the engines' state at the moment each was seen.
    const failures = run.results.map((o) => classifyOutcome(o, timeline)).filter((f) => f !== null);
    const groups = groupFailures(failures);
    const wanted = new Set(groups.flatMap((g) => g.samples.map((s) => s.traceId)));
    const { lines: gwLog, summary: gwLogSummary } = await readGatewayLog(logFile, wanted);
    const reported: ReportedGroup[] = groups.map((g) => ({
      ...g,
      samples: g.samples.map((s) => ({
        trace_id: s.traceId,
        at_s: round(s.atMs / 1000, 2),
        since_crash_ms: s.sinceCrashMs,
        down: s.downEngines,
        endpoint: s.endpoint,
        detail: s.detail,
        gateway_log: gwLog.get(s.traceId) ?? null,
      })),
    }));
    const count = (cls: string) => failures.filter((f) => f.class === cls).length;

    // Memory: the warm-up window and the end window, with the post-GC readings next to them.
    const samples = sampler.samples;
    const warm = memoryAt(samples, warmupEndMs / 1000, (warmupEndMs + windowMs) / 1000);
    const last = memoryAt(samples, (durationMs - windowMs) / 1000, durationMs / 1000);
    // Halfway through the measured period: a plateau shows as no growth from here to the end.
    const midMs = (warmupEndMs + durationMs) / 2;
    const mid = memoryAt(samples, (midMs - windowMs / 2) / 1000, (midMs + windowMs / 2) / 1000);
    const probe = readProbe(probeFile).filter((p) => p.gc);
    const afterGc = (mark: number | undefined) =>
      probe.find((p) => mark !== undefined && p.at >= mark) ?? null;
    const [gcWarm, gcEnd] = [afterGc(gcMarks[0]), afterGc(gcMarks[1])];
    const mibOf = (b: number | undefined) => (b === undefined ? null : round(b / 1048576, 1));
    warm.rss_after_gc_mib = mibOf(gcWarm?.rss);
    warm.heap_after_gc_mib = mibOf(gcWarm?.heapUsed);
    last.rss_after_gc_mib = mibOf(gcEnd?.rss);
    last.heap_after_gc_mib = mibOf(gcEnd?.heapUsed);
    const measured = samples.filter((s) => s.t_s >= warmupEndMs / 1000 && s.t_s <= durationMs / 1000);
    const loopP99 = measured.map((s) => s.loop_p99_ms).filter((x): x is number => x !== null);
    const loopMax = measured.map((s) => s.loop_max_ms).filter((x): x is number => x !== null);
    const fds = samples.map((s) => s.fds).filter((x): x is number => x !== null);
    const rssAll = samples.map((s) => s.rss_mib).filter((x): x is number => x !== null);

    const outcomes = run.results;
    const ok = outcomes.filter((o) => o.error === null && !o.cancelled);
    const rssGrowth = growthPercent(warm.rss_mib, last.rss_mib);
    const engineStats: SoakReport["engines"] = {};
    for (const e of engines) {
      const q = engineSampler.queue[e.name] ?? [];
      engineStats[e.name] = {
        waiting_max: q.reduce((a, p) => Math.max(a, p.value), 0),
        waiting_nonzero_share: q.length === 0 ? 0 : round(q.filter((p) => p.value > 0).length / q.length, 3),
        requests: engineSampler.totals[e.name]?.requests ?? null,
      };
    }
    const report: SoakReport = {
      benchmark: "soak",
      date: new Date().toISOString(),
      quick: opts.quick,
      minutes,
      machine: {
        cpus: cpus().length,
        cpu_model: cpus()[0]?.model ?? "unknown",
        node: process.version,
        load_average_1m_before: round(loadBefore, 2),
        load_average_1m_after: round(loadavg()[0]!, 2),
        load_average_1m_max_during: round(loadMax, 2),
      },
      setup: {
        engines: `${REPLICAS} × \`${PROFILE}\` (one \`tokengate sim\` child process; ~30 req/s each at this mix before queueing)`,
        load:
          `Poisson arrivals at ${rate} req/s (~${Math.round((rate / FLEET_CAPACITY_RPS) * 100)}% of the fleet's ~${FLEET_CAPACITY_RPS}), chat completions, ${SOAK_MIX.streamShare * 100}% streamed, ` +
          `max_tokens ${SOAK_MIX.maxTokens.min}–${SOAK_MIX.maxTokens.max}, user messages of median ${SOAK_MIX.userTokens.median} tokens ` +
          `after one of ${SOAK_MIX.systemPromptTokens.length} system prompts of 0–${Math.max(...SOAK_MIX.systemPromptTokens)} tokens; ` +
          `${SOAK_MIX.streamCancelShare * 100}% of streams aborted at a random text frame, ${SOAK_MIX.replyCancelShare * 100}% of ` +
          `non-streaming requests aborted after 1–${SOAK_MIX.replyCancelMaxMs} ms; client timeout ${CLIENT_TIMEOUT_MS / 1000} s`,
        faults: `${schedule.length} engine crash(es) (sim POST /admin/faults {"crashAtMs":0,"restartAfterMs":${RESTART_AFTER_MS}}), rotating over the replicas`,
        gateway:
          "`tokengate gateway` child process, one pool, admin on the main listener, request log to a file, shipped defaults " +
          `for timeouts, retries (2 attempts, ${opts.retryBudgetPercent === undefined ? "10% budget (shipped)" : `**${opts.retryBudgetPercent}% budget (not the shipped 10%)**`}, floor 3), ` +
          "ejection, circuit breaker and health checks (1 s); " +
          "heap read by a memory probe loaded with --import (soak-probe.ts), RSS and fds from /proc",
        warmup: `first ${WARMUP_SHARE * 100}% of the run; memory windows of ${round(windowMs / 1000, 1)} s`,
        sample_interval_ms: sampleMs,
        seed,
        ...cpu,
      },
      load: {
        offered_rps: rate,
        achieved_rps: round(outcomes.length / (durationMs / 1000), 1),
        requests: outcomes.length,
        streams: outcomes.filter((o) => o.stream).length,
        ok: ok.length,
        cancelled_by_client: outcomes.filter((o) => o.cancelled).length,
        failed: failures.length,
        dropped_at_max_outstanding: run.dropped,
        ttft_ms: {
          p50: round(
            percentile(
              ok.map((o) => o.ttftMs),
              50,
            ),
            1,
          ),
          p99: round(
            percentile(
              ok.map((o) => o.ttftMs),
              99,
            ),
            1,
          ),
        },
        e2e_ms: {
          p50: round(
            percentile(
              ok.map((o) => o.endMs - o.startMs),
              50,
            ),
            1,
          ),
          p99: round(
            percentile(
              ok.map((o) => o.endMs - o.startMs),
              99,
            ),
            1,
          ),
        },
      },
      engines: engineStats,
      crashes: crashes.map(({ atMs, ...c }, i) => {
        const next = crashes.slice(i + 1).find((n) => n.endpoint === c.endpoint);
        const until = next?.atMs ?? Number.POSITIVE_INFINITY;
        const back = timeline
          .intervals()
          .find((d) => d.engine === c.endpoint && d.cause === "crash" && d.fromMs === atMs);
        // Failures seen from this crash until the next one (of any engine).
        const nextAny = crashes[i + 1]?.atMs ?? Number.POSITIVE_INFINITY;
        const mine = failures.filter((f) => f.atMs >= atMs && f.atMs < nextAny);
        return {
          ...c,
          engine_back_at_s: back?.toMs != null ? round(back.toMs / 1000, 1) : null,
          ...crashRecovery({ endpoint: c.endpoint, atMs, until }, view.changes),
          failed_while_healthy: mine.filter((f) => f.class === "failed_while_healthy_capacity").length,
          streams_cut: mine.filter((f) => f.class === "stream_cut_by_its_engine_crash").length,
        };
      }),
      memory: {
        warmup: warm,
        end: last,
        rss_growth_percent: rssGrowth,
        heap_growth_percent: growthPercent(warm.heap_used_mib, last.heap_used_mib),
        heap_after_gc_growth_percent: growthPercent(warm.heap_after_gc_mib, last.heap_after_gc_mib),
        rss_slope_mib_per_hour: rssSlopeMibPerHour(samples, warmupEndMs / 1000, durationMs / 1000),
        rss_mid_mib: mid.rss_mib,
        rss_growth_second_half_percent: growthPercent(mid.rss_mib, last.rss_mib),
        rss_peak_mib: rssAll.length ? Math.max(...rssAll) : null,
      },
      loop_delay_ms: {
        p99_median: loopP99.length ? percentile(loopP99, 50) : null,
        p99_max: loopP99.length ? Math.max(...loopP99) : null,
        max: loopMax.length ? Math.max(...loopMax) : null,
      },
      fds: {
        warmup: warm.fds,
        end: last.fds,
        max: fds.length ? Math.max(...fds) : null,
        after_settle: end.fds,
      },
      end_state: end,
      failures: {
        total: failures.length,
        while_healthy_capacity: count("failed_while_healthy_capacity"),
        stream_cut_by_its_engine_crash: count("stream_cut_by_its_engine_crash"),
        without_healthy_capacity: count("failed_without_healthy_capacity"),
        groups: reported,
      },
      targets: soakTargets({
        rssGrowthPercent: rssGrowth,
        end,
        failedWhileHealthy: count("failed_while_healthy_capacity"),
      }),
      gateway_log: gwLogSummary,
      gateway_view: view.changes,
      series: samples,
    };
    if (settledRss !== null) report.setup.rss_after_settle_mib = round(settledRss / 1048576, 1);
    mkdirSync(opts.outDir, { recursive: true });
    writeFileSync(join(opts.outDir, "soak.json"), `${JSON.stringify(report, null, 2)}\n`);
    const md = soakMarkdown(report);
    writeFileSync(join(opts.outDir, "soak.md"), md);
    process.stdout.write(`${md}\n`);
    return report;
  } finally {
    for (const c of children.reverse()) await c.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith("soak.js")) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const minutes = arg("--minutes");
  const rate = arg("--rate");
  const budget = arg("--retry-budget");
  await runSoak({
    outDir: arg("--out") ?? "bench-results",
    quick: process.argv.includes("--quick"),
    ...(minutes ? { minutes: Number(minutes) } : {}),
    ...(rate ? { rate: Number(rate) } : {}),
    ...(budget ? { retryBudgetPercent: Number(budget) } : {}),
  });
}
