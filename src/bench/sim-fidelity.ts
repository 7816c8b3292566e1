// The simulator's fidelity and efficiency benchmark (issue 2):
//  1. one h100-llama8b replica under Poisson load of ~204 input / 64 output tokens, swept over offered
//     rates: where does it saturate, against the ~101 req/s published for Llama-3-8B on an H100
//     (vLLM v0.11, max-num-seqs 128, no prefix caching, no chunked prefill; reference/sim.md §3.3)?
//  2. 8 replicas in one process under 200 concurrent streams: how much CPU does the simulator cost?
// Engines run in a child process; this process only generates load. Reports go to bench-results/.

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { seededRandom } from "../sim/rng.js";
import { type Child, cpuSeconds, startTokengate } from "./services/child-process.js";
import { percentile, poissonGapMs, round } from "./stats.js";
import { scrapeEngine } from "./traffic/engine-sampler.js";
import { makeAgent, type StreamResult, streamCompletion } from "./traffic/stream-client.js";

export interface FidelityOptions {
  outDir: string;
  rates: number[];
  secondsPerRate: number;
  efficiencySeconds: number;
  seed: number;
}

interface RatePoint {
  offered_rps: number;
  sent: number;
  completed: number;
  errors: number;
  achieved_rps: number;
  ttft_ms: { p50: number; p90: number; p99: number };
  tpot_ms_mean: number;
}

const PROMPT_TOKENS = 204;
const OUTPUT_TOKENS = 64;
const READY = /simulated replica\(s\)/;

function randomPrompt(random: () => number): number[] {
  const p: number[] = [];
  for (let i = 0; i < PROMPT_TOKENS; i++) p.push(1000 + Math.floor(random() * 100_000));
  return p;
}

async function runRate(url: string, rate: number, seconds: number, random: () => number): Promise<RatePoint> {
  const agent = makeAgent(2048);
  const pending: Promise<StreamResult>[] = [];
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let next = t0;
  while (next < end) {
    const wait = next - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(
      streamCompletion(
        url,
        { model: "llama-3-8b", prompt: randomPrompt(random), max_tokens: OUTPUT_TOKENS, ignore_eos: true },
        { agent },
      ),
    );
    next += poissonGapMs(rate, random);
  }
  const results = await Promise.all(pending);
  const elapsed = (performance.now() - t0) / 1000;
  await agent.close();
  const ok = results.filter((r) => !r.error);
  const tpot = ok.map((r) => (r.e2eMs - r.ttftMs) / Math.max(1, r.contentFrames - 1));
  return {
    offered_rps: rate,
    sent: results.length,
    completed: ok.length,
    errors: results.length - ok.length,
    achieved_rps: round(ok.length / elapsed, 1),
    ttft_ms: {
      p50: round(
        percentile(
          ok.map((r) => r.ttftMs),
          50,
        ),
      ),
      p90: round(
        percentile(
          ok.map((r) => r.ttftMs),
          90,
        ),
      ),
      p99: round(
        percentile(
          ok.map((r) => r.ttftMs),
          99,
        ),
      ),
    },
    tpot_ms_mean: round(tpot.reduce((a, b) => a + b, 0) / Math.max(1, tpot.length), 2),
  };
}

async function fidelity(opts: FidelityOptions): Promise<{ points: RatePoint[]; saturation_rps: number }> {
  const sim = await startTokengate(
    [
      "sim",
      "--port",
      "0",
      "--profile",
      "h100-llama8b",
      "--model",
      "llama-3-8b",
      "--max-num-seqs",
      "128",
      "--max-model-len",
      "512",
      "--no-enable-chunked-prefill",
      "--no-enable-prefix-caching",
      "--seed",
      String(opts.seed),
    ],
    READY,
  );
  const url = /http:\/\/[\d.]+:\d+/.exec(sim.output())![0];
  const random = seededRandom(opts.seed);
  const points: RatePoint[] = [];
  try {
    for (const rate of opts.rates) {
      await fetch(`${url}/admin/reset`, { method: "POST" });
      const p = await runRate(url, rate, opts.secondsPerRate, random);
      points.push(p);
      process.stderr.write(
        `  offered ${rate} req/s → achieved ${p.achieved_rps} req/s, TTFT p50 ${p.ttft_ms.p50} ms p90 ${p.ttft_ms.p90} ms, TPOT ${p.tpot_ms_mean} ms\n`,
      );
    }
  } finally {
    await sim.stop();
  }
  return { points, saturation_rps: Math.max(...points.map((p) => p.achieved_rps)) };
}

async function efficiency(
  opts: FidelityOptions,
): Promise<{ cores: number; tokens_per_s: number; cpu_us_per_token: number; streams: number }> {
  const sim: Child = await startTokengate(
    ["sim", "--replicas", "8", "--port", "0", "--profile", "h100-llama8b", "--model", "llama-3-8b"],
    READY,
  );
  const urls = [...sim.output().matchAll(/http:\/\/[\d.]+:\d+/g)]
    .map((m) => m[0])
    .filter((u, i, a) => a.indexOf(u) === i);
  const agent = makeAgent(512);
  const random = seededRandom(opts.seed + 1);
  const streams = 200;
  let stop = false;
  const loop = async (i: number) => {
    while (!stop) {
      await streamCompletion(
        urls[i % urls.length]!,
        { model: "llama-3-8b", prompt: randomPrompt(random), max_tokens: 512, ignore_eos: true },
        { agent },
      );
    }
  };
  const loops = Array.from({ length: streams }, (_, i) => loop(i));
  try {
    await new Promise((r) => setTimeout(r, 2000)); // warm up to a steady state
    // Tokens streamed are counted by the engines themselves: a client count would only see finished requests.
    const generated = async () =>
      (await Promise.all(urls.map((u) => scrapeEngine(u)))).reduce(
        (a, s) => a + s.totals.generationTokens,
        0,
      );
    const c0 = cpuSeconds(sim.pid);
    const k0 = await generated();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, opts.efficiencySeconds * 1000));
    const c1 = cpuSeconds(sim.pid);
    const k1 = await generated();
    const seconds = (performance.now() - t0) / 1000;
    const cores = (c1 - c0) / seconds;
    const rate = (k1 - k0) / seconds;
    stop = true;
    await sim.stop();
    await Promise.allSettled(loops);
    return {
      cores: round(cores, 3),
      tokens_per_s: Math.round(rate),
      cpu_us_per_token: round((cores * 1e6) / rate, 1),
      streams,
    };
  } finally {
    stop = true;
    await sim.stop();
    await agent.close();
  }
}

export async function runSimFidelity(opts: FidelityOptions): Promise<void> {
  process.stderr.write("sim fidelity: one h100-llama8b replica, 204 in / 64 out, Poisson arrivals\n");
  const fid = await fidelity(opts);
  process.stderr.write("sim efficiency: 8 replicas in one process, 200 concurrent streams\n");
  const eff = await efficiency(opts);
  const published = 101;
  const result = {
    benchmark: "sim-fidelity",
    date: new Date().toISOString(),
    workload: {
      prompt_tokens: PROMPT_TOKENS,
      output_tokens: OUTPUT_TOKENS,
      arrivals: "poisson",
      seed: opts.seed,
    },
    engine:
      "h100-llama8b, --max-num-seqs 128 --max-model-len 512 --no-enable-chunked-prefill --no-enable-prefix-caching",
    published_saturation_rps: published,
    saturation_rps: fid.saturation_rps,
    saturation_vs_published: round(fid.saturation_rps / published, 3),
    points: fid.points,
    efficiency: { replicas: 8, profile: "h100-llama8b", ...eff },
  };
  mkdirSync(opts.outDir, { recursive: true });
  writeFileSync(join(opts.outDir, "sim-fidelity.json"), `${JSON.stringify(result, null, 2)}\n`);
  const rows = fid.points
    .map(
      (p) =>
        `| ${p.offered_rps} | ${p.achieved_rps} | ${p.ttft_ms.p50} | ${p.ttft_ms.p90} | ${p.ttft_ms.p99} | ${p.tpot_ms_mean} | ${p.errors} |`,
    )
    .join("\n");
  const md = `# Simulator fidelity and efficiency

${result.date}. Engine: ${result.engine}. Workload: ${PROMPT_TOKENS} prompt tokens (unique), ${OUTPUT_TOKENS} output tokens
(ignore_eos), Poisson arrivals, ${opts.secondsPerRate} s per rate, client-side streaming measurements.

**Saturation: ${fid.saturation_rps} req/s** (highest completion rate reached) against the published ~${published} req/s
for Llama-3-8B on one H100 (vLLM v0.11, same settings): ratio ${result.saturation_vs_published}.

| offered req/s | achieved req/s | TTFT p50 ms | TTFT p90 ms | TTFT p99 ms | TPOT mean ms | errors |
|---|---|---|---|---|---|---|
${rows}

**Efficiency:** 8 h100-llama8b replicas in one process, ${eff.streams} concurrent streams (${eff.tokens_per_s} tokens/s
streamed): the simulator process used **${eff.cores} cores** (${eff.cpu_us_per_token} µs of CPU per streamed token).
`;
  writeFileSync(join(opts.outDir, "sim-fidelity.md"), md);
  process.stdout.write(md);
}
