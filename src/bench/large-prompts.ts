// The load a peer's picker stalled under (TTFT over 1 s): 150 concurrent streaming requests with ~220 KB
// prompts. The engines are `instant` simulated replicas with room for every prompt, so what the figures
// show is the path in front of them: the same closed loop is run straight to the engines and through
// tokengate, one after the other, and tokengate's share is the difference. The gateway's own log says
// how long a request spent between arriving and being dispatched (body read, parse, token estimate,
// prompt hashing, the pick), and the pick and hashing are also timed in this process on the same prompts.
// `node dist/bench/large-prompts.js [--quick] [--concurrency 150] [--out bench-results]`

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEndpointPickerConfig } from "../picker/config/endpoint-picker-config.js";
import { pickEndpoint } from "../picker/framework/pick-endpoint.js";
import { staticEndpoint } from "../picker/framework/static-endpoint.js";
import { buildPickerProfile, createPrefixIndex, promptHashesFor } from "../picker/picker-profile.js";
import { writeOnePoolGateway } from "./harness/one-pool-gateway.js";
import { type Child, cpuSeconds, startTokengate } from "./services/child-process.js";
import { percentile, round } from "./stats.js";
import { runClosedLoop } from "./traffic/load.js";
import { makeAgent, type StreamResult, streamCompletion } from "./traffic/stream-client.js";
import { generatedText } from "./workload/generated-text.js";

export interface LargePromptOptions {
  outDir: string;
  quick: boolean;
  /** Clients, each with one request outstanding (default 150). */
  concurrency?: number;
}

const MODEL = "m";
const REPLICAS = 4;
/** ~220 KB of English: about 4 bytes per token. */
const PROMPT_TOKENS = 55_000;
/** Distinct long documents the prompts start with (RAG-style: a document, then a question). */
const DOCUMENTS = 16;
const QUESTION_TOKENS = 64;
const MAX_TOKENS = 16;

export interface PathFigures {
  requests: number;
  errors: number;
  /** The first few distinct errors, as the client saw them. */
  error_samples: string[];
  throughput_rps: number;
  ttft_ms: { p50: number; p90: number; p99: number; max: number };
  e2e_ms: { p50: number; p99: number };
}

export interface LargePromptReport {
  benchmark: "large-prompts";
  quick: boolean;
  setup: Record<string, string | number>;
  direct: PathFigures;
  tokengate: PathFigures & {
    /** TTFT through tokengate minus straight to the engines, same load, same machine. */
    added_ttft_ms: { p50: number; p99: number };
    /** From the gateway's log: arrival → dispatch (body, parse, estimate, hashing, pick), ms. */
    gateway_dispatch_ms: { p50: number; p90: number; p99: number; max: number };
    /** From the gateway's log: its own TTFT (arrival → first token relayed), ms. */
    gateway_ttft_ms: { p50: number; p99: number };
    pick_modes: Record<string, number>;
    router_cpu_ms_per_request: number;
  };
  /** In this process, on the same prompts and the default picker config over 4 endpoints. */
  in_process_us: {
    hash_prompt_p50: number;
    hash_prompt_p99: number;
    pick_p50: number;
    pick_p99: number;
  };
}

function figures(results: StreamResult[], elapsedMs: number): PathFigures {
  const ok = results.filter((r) => r.error === null);
  const ttft = ok.map((r) => r.ttftMs);
  const e2e = ok.map((r) => r.e2eMs);
  return {
    requests: results.length,
    errors: results.length - ok.length,
    error_samples: [...new Set(results.filter((r) => r.error !== null).map((r) => r.error!))].slice(0, 3),
    throughput_rps: round((ok.length / elapsedMs) * 1000, 1),
    ttft_ms: {
      p50: round(percentile(ttft, 50), 1),
      p90: round(percentile(ttft, 90), 1),
      p99: round(percentile(ttft, 99), 1),
      max: round(Math.max(...ttft), 1),
    },
    e2e_ms: { p50: round(percentile(e2e, 50), 1), p99: round(percentile(e2e, 99), 1) },
  };
}

function prompts(): { documents: string[]; question: (seq: number) => string } {
  const documents = Array.from({ length: DOCUMENTS }, (_, d) =>
    generatedText("en", PROMPT_TOKENS - QUESTION_TOKENS, 7919 * (d + 1)),
  );
  const questions = Array.from({ length: 256 }, (_, q) => generatedText("en", QUESTION_TOKENS, 104_729 + q));
  return { documents, question: (seq) => `${questions[seq % questions.length]!} (${seq})` };
}

/** The pick and the prompt hashing alone, as the gateway runs them, on the benchmark's prompts. */
function inProcess(documents: string[]): LargePromptReport["in_process_us"] {
  const parsed = parseEndpointPickerConfig({});
  if (!parsed.ok) throw new Error("default picker config must parse");
  const profile = buildPickerProfile(parsed.config);
  const index = createPrefixIndex(parsed.config);
  const eps = Array.from({ length: REPLICAS }, (_, i) => staticEndpoint(`engine-${i}`));
  const text = documents.map((d, i) => `${d}\n${i}`);
  const hashUs: number[] = [];
  const pickUs: number[] = [];
  for (let i = 0; i < 6000; i++) {
    const t0 = performance.now();
    const blockHashes = promptHashesFor(parsed.config, text[i % text.length]!, MODEL, null);
    const t1 = performance.now();
    const r = pickEndpoint(
      profile,
      {
        request: {
          model: MODEL,
          modelVersion: null,
          lora: null,
          inputTokens: PROMPT_TOKENS,
          maxTokens: MAX_TOKENS,
          blockHashes,
          sessionKey: null,
        },
        now: Date.now(),
        prefixIndex: index,
      },
      eps,
    );
    const t2 = performance.now();
    index.record(r.endpoint!.name, blockHashes);
    if (i >= 1000) {
      hashUs.push((t1 - t0) * 1000);
      pickUs.push((t2 - t1) * 1000);
    }
  }
  return {
    hash_prompt_p50: round(percentile(hashUs, 50), 1),
    hash_prompt_p99: round(percentile(hashUs, 99), 1),
    pick_p50: round(percentile(pickUs, 50), 1),
    pick_p99: round(percentile(pickUs, 99), 1),
  };
}

export async function runLargePrompts(opts: LargePromptOptions): Promise<LargePromptReport> {
  const concurrency = opts.concurrency ?? 150;
  const seconds = opts.quick ? 5 : 15;
  const warmupMs = opts.quick ? 1500 : 3000;
  const { documents, question } = prompts();
  const tmp = mkdtempSync(join(tmpdir(), "tokengate-large-prompts-"));
  const children: Child[] = [];
  try {
    // Room for every prompt at once, so the engines neither queue nor evict: 150 × 55k tokens.
    const sim = await startTokengate(
      [
        "sim",
        ...["--replicas", String(REPLICAS), "--port", "0", "--profile", "instant", "--model", MODEL],
        ...["--num-gpu-blocks", "1200000", "--max-num-batched-tokens", "1048576", "--max-num-seqs", "1024"],
      ],
      /simulated replica\(s\)/,
    );
    children.push(sim);
    const engines = [...new Set(sim.output().match(/http:\/\/[\d.]+:\d+/g) ?? [])];
    writeOnePoolGateway(tmp, {
      name: "long",
      model: MODEL,
      engines,
      maxInputTokens: 131072,
      maxQueueMs: 60000,
      gatewaySpec:
        "  limits: { maxBodyBytes: 4194304 }\n  timeouts: { connectMs: 2000, firstByteMs: 60000, idleMs: 60000, totalMs: 600000 }\n",
    });
    const logFile = join(tmp, "gateway.log");
    const gw = await startTokengate(
      ["gateway", "--config", tmp, "--port", "0", "--log", logFile],
      /listening on http:\/\/[\d.]+:\d+/,
    );
    children.push(gw);
    const gwUrl = /listening on (http:\/\/[\d.]+:\d+)/.exec(gw.output())![1]!;

    const run = async (urlOf: (client: number) => string, measured: Set<string> | null) => {
      const agent = makeAgent(concurrency * 2);
      let measuring = false;
      try {
        return await runClosedLoop<StreamResult>({
          concurrency,
          durationMs: seconds * 1000,
          warmupMs,
          onMeasureStart: () => {
            measuring = true;
          },
          send: (client, seq) => {
            const id = `lp-${seq}`;
            if (measuring) measured?.add(id);
            const body = {
              model: MODEL,
              max_tokens: MAX_TOKENS,
              ignore_eos: true,
              messages: [
                { role: "system", content: documents[seq % DOCUMENTS]! },
                { role: "user", content: question(seq) },
              ],
            };
            return streamCompletion(urlOf(client), body, { agent, headers: { "x-ai-trace-id": id } });
          },
        });
      } finally {
        await agent.close();
      }
    };

    const direct = await run((c) => engines[c % engines.length]!, null);
    const measured = new Set<string>();
    const cpu0 = cpuSeconds(gw.pid);
    const through = await run(() => gwUrl, measured);
    const cpuS = cpuSeconds(gw.pid) - cpu0;
    await gw.stop();

    const lines = readFileSync(logFile, "utf8")
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((r) => r.event === "inference.completed" && measured.has(String(r.trace_id)));
    const num = (k: string) => lines.map((r) => Number(r[k])).filter((v) => Number.isFinite(v));
    const dispatch = num("gateway_queue_ms");
    const gwTtft = num("ttft_ms");
    const modes: Record<string, number> = {};
    for (const r of lines) modes[String(r.pick_mode)] = (modes[String(r.pick_mode)] ?? 0) + 1;

    const d = figures(direct.results, direct.elapsedMs);
    const t = figures(through.results, through.elapsedMs);
    const report: LargePromptReport = {
      benchmark: "large-prompts",
      quick: opts.quick,
      setup: {
        concurrency,
        prompt: `~${Math.round((documents[0]!.length + 400) / 1024)} KB (${PROMPT_TOKENS} tokens): one of ${DOCUMENTS} documents + a ${QUESTION_TOKENS}-token question`,
        max_tokens: MAX_TOKENS,
        engines: `${REPLICAS} × instant (one \`tokengate sim\` process), KV room for every prompt`,
        seconds_per_path: seconds,
        warmup_ms: warmupMs,
      },
      direct: d,
      tokengate: {
        ...t,
        added_ttft_ms: {
          p50: round(t.ttft_ms.p50 - d.ttft_ms.p50, 1),
          p99: round(t.ttft_ms.p99 - d.ttft_ms.p99, 1),
        },
        gateway_dispatch_ms: {
          p50: round(percentile(dispatch, 50), 1),
          p90: round(percentile(dispatch, 90), 1),
          p99: round(percentile(dispatch, 99), 1),
          max: round(Math.max(...dispatch), 1),
        },
        gateway_ttft_ms: { p50: round(percentile(gwTtft, 50), 1), p99: round(percentile(gwTtft, 99), 1) },
        pick_modes: modes,
        router_cpu_ms_per_request: round((cpuS * 1000) / Math.max(1, through.results.length), 2),
      },
      in_process_us: inProcess(documents),
    };
    mkdirSync(opts.outDir, { recursive: true });
    writeFileSync(join(opts.outDir, "large-prompts.json"), `${JSON.stringify(report, null, 2)}\n`);
    return report;
  } finally {
    for (const c of children.reverse()) await c.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

export function largePromptsSummary(r: LargePromptReport): string {
  const t = r.tokengate;
  return (
    `${r.setup.concurrency} concurrent ${r.setup.prompt}, ${r.setup.engines}:\n` +
    `  direct:    TTFT p50 ${r.direct.ttft_ms.p50} / p90 ${r.direct.ttft_ms.p90} / p99 ${r.direct.ttft_ms.p99} ms, ${r.direct.throughput_rps} req/s, ${r.direct.errors} errors\n` +
    `  tokengate: TTFT p50 ${t.ttft_ms.p50} / p90 ${t.ttft_ms.p90} / p99 ${t.ttft_ms.p99} ms (max ${t.ttft_ms.max}), ${t.throughput_rps} req/s, ${t.errors} errors\n` +
    `  added TTFT: p50 ${t.added_ttft_ms.p50} ms, p99 ${t.added_ttft_ms.p99} ms; gateway CPU ${t.router_cpu_ms_per_request} ms per request\n` +
    `  in the gateway, arrival → dispatch: p50 ${t.gateway_dispatch_ms.p50} / p99 ${t.gateway_dispatch_ms.p99} ms; its own TTFT p50 ${t.gateway_ttft_ms.p50} / p99 ${t.gateway_ttft_ms.p99} ms; modes ${JSON.stringify(t.pick_modes)}\n` +
    `  in process: hashing the prompt p50 ${r.in_process_us.hash_prompt_p50} / p99 ${r.in_process_us.hash_prompt_p99} µs, one pick p50 ${r.in_process_us.pick_p50} / p99 ${r.in_process_us.pick_p99} µs\n`
  );
}

if (process.argv[1]?.endsWith("large-prompts.js")) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const concurrency = arg("--concurrency");
  const report = await runLargePrompts({
    outDir: arg("--out") ?? "bench-results",
    quick: process.argv.includes("--quick"),
    ...(concurrency ? { concurrency: Number(concurrency) } : {}),
  });
  process.stdout.write(largePromptsSummary(report));
}
