// The streaming relay at an engine's pace, part of the overhead benchmark (issue 3). The instant engines
// of the other measurements produce a stream's tokens back to back, so its frames reach the router
// several to a read and share the cost of each read and write. A real engine sends every token on its
// own, one decode step after the last: each frame is then one read and one write at the router, the
// dearest case per frame and the one production sees. Here two `h100-llama8b` replicas pace the tokens
// (a decode step every few ms for ~128 sequences each) and PACED_STREAMS streams run at once; direct,
// tokengate, the bare Node proxy and nginx are measured one after another, each its own process.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeOnePoolGateway } from "../harness/one-pool-gateway.js";
import {
  type Child,
  cpuSeconds,
  startScript,
  startTokengate,
  treeCpuSeconds,
} from "../services/child-process.js";
import { type RunningNginx, startNginx } from "../services/nginx.js";
import { round } from "../stats.js";
import { LeanClient } from "../traffic/lean-client.js";
import { type CpuFigures, cpuMeter, leastContended, type PathUnderTest } from "./overhead-cpu.js";
import { BARE_PROXY, MODEL, type PathName } from "./overhead-settings.js";

export const PACED_PROFILE = "h100-llama8b";
export const PACED_STREAMS = 256;
export const PACED_TOKENS = 200;

export interface PacedRelayFigures {
  streams: number;
  max_tokens: number;
  engine_profile: string;
  streams_completed: number;
  errors: number;
  error_sample: string | null;
  /** Frames carrying generated text, counted by the client as they arrive. */
  events_per_s: number;
  router_cores: number | null;
  events_per_router_cpu_s: number | null;
  router_us_per_event: number | null;
  cpu: CpuFigures;
  attempts: number;
  discarded_other_cores: number[];
}

/** Starts its own engines and routers, measures each path for `seconds`, stops them. */
export async function runPacedRelay(
  seconds: number,
  log: (s: string) => void,
): Promise<Partial<Record<PathName, PacedRelayFigures>>> {
  const tmp = mkdtempSync(join(tmpdir(), "tokengate-paced-"));
  const children: Child[] = [];
  let nginx: RunningNginx | null = null;
  try {
    const sim = await startTokengate(
      ["sim", "--replicas", "2", "--port", "0", "--profile", PACED_PROFILE, "--model", MODEL],
      /simulated replica\(s\)/,
    );
    children.push(sim);
    const engines = [...new Set(sim.output().match(/http:\/\/[\d.]+:\d+/g) ?? [])];
    writeOnePoolGateway(tmp, {
      name: "paced",
      model: MODEL,
      engines,
      maxInputTokens: 100000,
      maxQueueMs: 10000,
      gatewaySpec: "",
    });
    const gw = await startTokengate(
      ["gateway", "--config", tmp, "--port", "0", "--log", "/dev/null"],
      /listening on http:\/\/[\d.]+:\d+/,
    );
    children.push(gw);
    const gwUrl = /listening on (http:\/\/[\d.]+:\d+)/.exec(gw.output())![1]!;
    const paths: PathUnderTest[] = [
      { name: "direct", urls: engines, routerCpu: null },
      { name: "tokengate", urls: [gwUrl], routerCpu: () => cpuSeconds(gw.pid) },
    ];
    const bare = await startScript(BARE_PROXY, ["0", ...engines], /listening on http:\/\/[\d.]+:\d+/);
    children.push(bare);
    const bareUrl = /listening on (http:\/\/[\d.]+:\d+)/.exec(bare.output())![1]!;
    paths.push({ name: "bare-node", urls: [bareUrl], routerCpu: () => cpuSeconds(bare.pid) });
    const ng = await startNginx({ upstreams: engines, balance: "least_conn" });
    if (!("skipped" in ng)) {
      nginx = ng;
      paths.push({ name: "nginx", urls: [ng.url], routerCpu: () => treeCpuSeconds(ng.pid) });
    }
    const out: Partial<Record<PathName, PacedRelayFigures>> = {};
    for (const p of paths) {
      const r = await leastContended(() => pacedRun(p, seconds, cpuMeter(sim.pid, p)));
      out[p.name] = r;
      log(
        `${p.name.padEnd(9)} paced relay: ${r.events_per_s} events/s, ` +
          `${r.router_us_per_event ?? "-"} µs of router CPU per event`,
      );
    }
    return out;
  } finally {
    if (nginx) await nginx.stop();
    for (const c of children.reverse()) await c.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function pacedRun(p: PathUnderTest, seconds: number, cpu: ReturnType<typeof cpuMeter>) {
  const clients = p.urls.map((u) => new LeanClient(u, PACED_STREAMS));
  const body = JSON.stringify({
    model: MODEL,
    messages: [{ role: "user", content: "Tell a long story about a lighthouse keeper." }],
    max_tokens: PACED_TOKENS,
    ignore_eos: true,
    stream: true,
  });
  let events = 0;
  let completed = 0;
  let errors = 0;
  let errorSample: string | null = null;
  let stop = false;
  const stream = async (i: number) => {
    for (let seq = i; !stop; seq += PACED_STREAMS) {
      const r = await clients[seq % clients.length]!.post("/v1/chat/completions", body, true);
      events += r.contentFrames;
      if (r.error) {
        errors++;
        errorSample ??= r.error;
        await sleep(10); // a failing path is not hammered in a tight loop
      } else completed++;
    }
  };
  const streams = Array.from({ length: PACED_STREAMS }, (_, i) => stream(i));
  // The streams start together; by now they are spread over the whole length of a stream.
  await sleep(3000);
  cpu.reset();
  const e0 = events;
  const c0 = completed;
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const n = events - e0;
  const done = completed - c0;
  const elapsed = (performance.now() - t0) / 1000;
  const used = cpu.read();
  stop = true;
  await Promise.all(streams);
  for (const c of clients) await c.close();
  const router = used.router_s;
  return {
    streams: PACED_STREAMS,
    max_tokens: PACED_TOKENS,
    engine_profile: PACED_PROFILE,
    streams_completed: done,
    errors,
    error_sample: errorSample,
    events_per_s: round(n / elapsed, 0),
    router_cores: router === null ? null : round(router / elapsed, 2),
    events_per_router_cpu_s: router ? round(n / router, 0) : null,
    router_us_per_event: router === null || n === 0 ? null : round((router * 1e6) / n, 1),
    cpu: used,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
