// The gateway's overhead (issue 3): two `instant` engines reached directly, through tokengate, through a
// bare Node proxy and through nginx (least_conn), in one run — added latency at a fixed 1,000 req/s
// (overhead-fixed-rate.ts), maximum throughput, the streaming relay's events per CPU-second, and the
// relay at an engine's pace (overhead-paced.ts); judged in overhead-targets.ts. Reports go to
// bench-results/.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  type Child,
  cpuSeconds,
  pinTree,
  startInstantEngines,
  startScript,
  startTokengate,
  treeCpuSeconds,
} from "../services/child-process.js";
import { type RunningNginx, startNginx } from "../services/nginx.js";
import { round } from "../stats.js";
import { runClosedLoop, timedRequest } from "../traffic/load.js";
import { makeAgent, streamCompletion } from "../traffic/stream-client.js";
import { CLIENT_KIND } from "./overhead-client.js";
import { attemptsOf, cpuMeter, leastContended, type PathUnderTest } from "./overhead-cpu.js";
import type {
  ByPath,
  LatencyFigures,
  OverheadReport,
  RelayFigures,
  StreamingFigures,
  ThroughputFigures,
} from "./overhead-figures.js";
import { latencyRun, streamingRun } from "./overhead-fixed-rate.js";
import { runPacedRelay } from "./overhead-paced.js";
import { markdown } from "./overhead-report.js";
import { relayRun, throughputRun, urlOf } from "./overhead-saturated.js";
import {
  BARE_PROXY,
  CLIENT_CONNECTIONS,
  CONCURRENCY,
  MODEL,
  PROMPT,
  RATE,
  SLICE_WARMUP_MS,
  SLICES,
  SMALL,
  writeOverheadGateway,
} from "./overhead-settings.js";
import { targets } from "./overhead-targets.js";
import { pausesWithin, readPauseEvents } from "./router-pauses.js";

export interface OverheadOptions {
  outDir: string;
  quick: boolean;
  /**
   * Give the router (tokengate or nginx) the last CPU to itself and the client and the engines the
   * others, as a gateway is deployed on cores of its own, so the added latency is the router's and not
   * the scheduler's. Needs 3+ CPUs to mean anything: on 2, the client and the engines saturate their one
   * core at 1,000 streaming req/s. Reports go to `overhead-pinned.{json,md}`.
   */
  pinned?: boolean;
}

/** The pause probe each router is started with (`node --import`). */
const PAUSE_PROBE = pathToFileURL(fileURLToPath(new URL("./pause-probe.js", import.meta.url))).href;

/** With `pinned`: the last CPU for the router, the others for the client and the engines. */
const ROUTER_CPU = String(cpus().length - 1);
const CLIENT_CPUS = cpus().length > 2 ? `0-${cpus().length - 2}` : "0";
/** Runs the whole comparison, writes overhead.json and overhead.md under `outDir`, prints the Markdown. */
export async function runOverhead(opts: OverheadOptions): Promise<OverheadReport> {
  const seconds = opts.quick ? 3 : 10;
  const tmp = mkdtempSync(join(tmpdir(), "tokengate-overhead-"));
  const children: Child[] = [];
  let nginx: RunningNginx | null = null;
  try {
    const { child: sim, urls: engines } = await startInstantEngines(MODEL);
    children.push(sim);
    writeOverheadGateway(tmp, engines);
    // Request logs are written (serialised, batched, flushed) as in production, to /dev/null.
    // Each router carries a probe of its own pauses (pause-probe.ts): what paused it while measured.
    const probed = (name: string) => ({
      nodeArgs: ["--import", PAUSE_PROBE],
      env: { TOKENGATE_PAUSE_PROBE: join(tmp, `${name}-pauses.jsonl`) },
    });
    const pausesOf = (name: string) => (windows: readonly (readonly [number, number])[]) =>
      pausesWithin(readPauseEvents(join(tmp, `${name}-pauses.jsonl`)), windows);
    const gw = await startTokengate(
      ["gateway", "--config", tmp, "--port", "0", "--log", "/dev/null"],
      /listening on http:\/\/[\d.]+:\d+/,
      15_000,
      probed("tokengate"),
    );
    children.push(gw);
    if (opts.pinned) {
      pinTree(process.pid, CLIENT_CPUS);
      pinTree(sim.pid, CLIENT_CPUS);
      pinTree(gw.pid, ROUTER_CPU);
    }
    const gwUrl = /listening on (http:\/\/[\d.]+:\d+)/.exec(gw.output())![1]!;
    const bare = await startScript(
      BARE_PROXY,
      ["0", ...engines],
      /listening on http:\/\/[\d.]+:\d+/,
      15_000,
      probed("bare-node"),
    );
    children.push(bare);
    if (opts.pinned) pinTree(bare.pid, ROUTER_CPU);
    const bareUrl = /listening on (http:\/\/[\d.]+:\d+)/.exec(bare.output())![1]!;
    const ng = await startNginx({ upstreams: engines, balance: "least_conn" });
    if (!("skipped" in ng)) nginx = ng;
    if (nginx && opts.pinned) pinTree(nginx.pid, ROUTER_CPU);
    // No priority here (unlike scenario runs, router-priority.ts): the instant engines do no simulated
    // work to protect, and a router at nice −10 preempted them at every streamed token (an A/B, quick
    // runs: tokengate's streaming TTFT p50 1.3 → 2.8 ms, e2e p99 33 → 90 ms).
    const paths: PathUnderTest[] = [
      { name: "direct", urls: engines, routerCpu: null },
      {
        name: "tokengate",
        urls: [gwUrl],
        routerCpu: () => cpuSeconds(gw.pid),
        routerPauses: pausesOf("tokengate"),
      },
      {
        name: "bare-node",
        urls: [bareUrl],
        routerCpu: () => cpuSeconds(bare.pid),
        routerPauses: pausesOf("bare-node"),
      },
    ];
    if (nginx) paths.push({ name: "nginx", urls: [nginx.url], routerCpu: () => treeCpuSeconds(nginx!.pid) });
    const cpu = (p: PathUnderTest) => cpuMeter(sim.pid, p);

    const log = (s: string) => process.stderr.write(`  ${s}\n`);
    const loadBefore = loadavg()[0]!;
    // Freshly started processes run cold (unoptimised) code; each path first carries traffic that is not counted.
    for (const p of paths) await warmUp(p);
    const latency: ByPath<LatencyFigures> = {};
    const streaming: ByPath<StreamingFigures> = {};
    const throughput: ByPath<ThroughputFigures> = {};
    const relay: ByPath<RelayFigures> = {};
    const slices = opts.quick ? 4 : SLICES;
    const lat = await leastContended(() => latencyRun(paths, seconds, slices, cpu));
    for (const p of paths) {
      const r = { ...lat.byPath.get(p.name)!, ...attemptsOf(lat) };
      latency[p.name] = r;
      log(
        `${p.name.padEnd(9)} ${RATE} req/s non-streaming: p50 ${r.latency_ms.p50} ms, p99 ${r.latency_ms.p99} ms`,
      );
    }
    const str = await leastContended(() => streamingRun(paths, seconds, slices, cpu));
    for (const p of paths) {
      const r = { ...str.byPath.get(p.name)!, ...attemptsOf(str) };
      streaming[p.name] = r;
      log(
        `${p.name.padEnd(9)} ${RATE} req/s streaming: TTFT p99 ${r.ttft_ms.p99} ms, e2e p99 ${r.e2e_ms.p99} ms`,
      );
    }
    for (const p of paths) {
      const r = await leastContended(() => throughputRun(p, seconds, cpu(p)));
      throughput[p.name] = r;
      log(`${p.name.padEnd(9)} closed loop ×${CONCURRENCY}: ${r.rps} req/s`);
    }
    for (const p of paths) {
      const r = await leastContended(() => relayRun(p, seconds, cpu(p)));
      relay[p.name] = r;
      log(
        `${p.name.padEnd(9)} relay: ${r.events_per_s} events/s, ${r.events_per_router_cpu_s ?? "-"} per router CPU-s`,
      );
    }
    // Not pinned: its engines and routers are processes of their own.
    const pacedRelay = opts.pinned ? {} : await runPacedRelay(seconds, log);
    const report: OverheadReport = {
      benchmark: "overhead",
      quick: opts.quick,
      machine: {
        cpus: cpus().length,
        cpu_model: cpus()[0]?.model ?? "unknown",
        node: process.version,
        nginx: nginx ? "found" : (ng as { skipped: string }).skipped,
        load_average_1m_before: round(loadBefore, 2),
        load_average_1m_after: round(loadavg()[0]!, 2),
      },
      setup: {
        engines: "2 replicas, profile instant, one `tokengate sim` child process",
        cpu_pinning: opts.pinned
          ? `router (tokengate or nginx) alone on CPU ${ROUTER_CPU}; client and engines on CPUs ${CLIENT_CPUS}`
          : "none: client, engines and router share every CPU",
        priority:
          "everything at the same priority (raising the router made it preempt the engines at every token)",
        tokengate: "`tokengate gateway` child process, anonymous auth, request log to /dev/null",
        nginx: "nginx least_conn, 1 worker, keepalive 256, no buffering, no access log",
        "bare-node":
          "src/bench/overhead/bare-proxy.ts: node:http server, undici Pool per engine, least busy, res.write per chunk, nothing else (the stack's own price)",
        client:
          CLIENT_KIND === "lean"
            ? `this process; fixed-rate and throughput runs: the lean client (plain keep-alive sockets, ${CLIENT_CONNECTIONS} per origin, about half the undici client's CPU per request); relay and warm-up: undici Agent, ${CLIENT_CONNECTIONS} per origin`
            : `this process: undici Agent with ${CLIENT_CONNECTIONS} keep-alive connections per origin, open loop (constant arrivals) or closed loop`,
        request: `chat completion, ${PROMPT[0]!.content.length}-character prompt, max_tokens 16`,
        measured_seconds: seconds,
        warmup_seconds: 1,
        fixed_rate_slices: slices,
        fixed_rate_slice_warmup_seconds: SLICE_WARMUP_MS / 1000,
        process_warmup:
          "before any measurement, 3 s of closed-loop traffic (non-streaming, then streaming) through each path",
      },
      latency,
      streaming,
      throughput,
      relay,
      paced_relay: pacedRelay,
      targets: targets(latency, streaming, throughput, relay, pacedRelay),
    };
    mkdirSync(opts.outDir, { recursive: true });
    const base = opts.pinned ? "overhead-pinned" : "overhead";
    writeFileSync(join(opts.outDir, `${base}.json`), `${JSON.stringify(report, null, 2)}\n`);
    const md = markdown(report);
    writeFileSync(join(opts.outDir, `${base}.md`), md);
    process.stdout.write(`${md}\n`);
    return report;
  } finally {
    // This process carries on (other benchmarks after this one): give it every CPU back.
    if (opts.pinned) pinTree(process.pid, `0-${cpus().length - 1}`);
    if (nginx) await nginx.stop();
    for (const c of children.reverse()) await c.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Counts CPU of the client (this process), the engines and the router, and of everything else on the
 * machine (other work competing for the same cores); `read()` gives the use since the last `reset()`.
 */
async function warmUp(p: PathUnderTest): Promise<void> {
  const agent = makeAgent(64);
  const stream = { model: MODEL, messages: PROMPT, max_tokens: 16 };
  const url = (seq: number) => urlOf(p, seq);
  await runClosedLoop({
    concurrency: 16,
    durationMs: 1500,
    send: (_c, seq) => timedRequest(`${url(seq)}/v1/chat/completions`, SMALL, agent),
  });
  await runClosedLoop({
    concurrency: 16,
    durationMs: 1500,
    send: (_c, seq) => streamCompletion(url(seq), stream, { agent }),
  });
  await agent.close();
}
