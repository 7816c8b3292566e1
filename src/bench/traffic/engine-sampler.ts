// Samples every engine's /metrics during a benchmark run: waiting-queue depth and KV use over time, and
// the cumulative counters (prefix-cache hits and queries, prompt and generation tokens, requests) that
// the report turns into hit rates and per-endpoint load. vLLM and SGLang names both work.

import { Agent, request } from "undici";
import { parsePrometheusText } from "../../telemetry/prom-parse.js";
import type { TimePoint } from "../results.js";

export interface EngineTarget {
  name: string;
  group: string;
  url: string;
}

export interface EngineTotals {
  prefixHits: number;
  prefixQueries: number;
  promptTokens: number;
  generationTokens: number;
  requests: number;
}

const FAMILIES = new Set([
  "vllm:num_requests_waiting",
  "vllm:kv_cache_usage_perc",
  "vllm:prefix_cache_hits_total",
  "vllm:prefix_cache_queries_total",
  "vllm:prompt_tokens_total",
  "vllm:generation_tokens_total",
  "vllm:request_success_total",
  "sglang:num_queue_reqs",
  "sglang:token_usage",
  "sglang:cached_tokens_total",
  "sglang:prompt_tokens_total",
  "sglang:generation_tokens_total",
  "sglang:num_requests_total",
]);

export async function scrapeEngine(
  url: string,
  agent?: Agent,
): Promise<{ waiting: number; kv: number; totals: EngineTotals }> {
  const res = await request(`${url}/metrics`, { dispatcher: agent, headersTimeout: 2000, bodyTimeout: 2000 });
  const m = parsePrometheusText(await res.body.text(), { only: FAMILIES });
  const sum = (name: string) => (m.get(name) ?? []).reduce((a, s) => a + s.value, 0);
  const has = (name: string) => m.has(name);
  if (has("vllm:num_requests_waiting")) {
    return {
      waiting: sum("vllm:num_requests_waiting"),
      kv: sum("vllm:kv_cache_usage_perc"),
      totals: {
        prefixHits: sum("vllm:prefix_cache_hits_total"),
        prefixQueries: sum("vllm:prefix_cache_queries_total"),
        promptTokens: sum("vllm:prompt_tokens_total"),
        generationTokens: sum("vllm:generation_tokens_total"),
        requests: sum("vllm:request_success_total"),
      },
    };
  }
  const prompt = sum("sglang:prompt_tokens_total");
  return {
    waiting: sum("sglang:num_queue_reqs"),
    kv: sum("sglang:token_usage"),
    totals: {
      prefixHits: sum("sglang:cached_tokens_total"),
      prefixQueries: prompt,
      promptTokens: prompt,
      generationTokens: sum("sglang:generation_tokens_total"),
      requests: sum("sglang:num_requests_total"),
    },
  };
}

/** Polls every engine at `intervalMs` until stopped; keeps time series and the last totals. */
export class EngineSampler {
  readonly queue: Record<string, TimePoint[]> = {};
  readonly kv: Record<string, TimePoint[]> = {};
  readonly totals: Record<string, EngineTotals> = {};
  private timer: NodeJS.Timeout | null = null;
  private readonly agent = new Agent({ connections: 2 });
  private t0 = 0;
  private inFlight = false;

  constructor(
    private readonly targets: readonly EngineTarget[],
    private readonly intervalMs = 500,
  ) {
    for (const t of targets) {
      this.queue[t.name] = [];
      this.kv[t.name] = [];
    }
  }

  start(): void {
    this.t0 = performance.now();
    this.timer = setInterval(() => void this.sample(), this.intervalMs);
    void this.sample();
  }

  /** Stops polling after one last sample, so the totals cover the whole run. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    while (this.inFlight) await new Promise((r) => setTimeout(r, 5));
    await this.sample();
    await this.agent.close();
  }

  private async sample(): Promise<void> {
    if (this.inFlight) return;
    this.inFlight = true;
    const t = (performance.now() - this.t0) / 1000;
    try {
      await Promise.all(
        this.targets.map(async (target) => {
          try {
            const s = await scrapeEngine(target.url, this.agent);
            this.queue[target.name]!.push({ t_s: t, value: s.waiting });
            this.kv[target.name]!.push({ t_s: t, value: s.kv });
            this.totals[target.name] = s.totals;
          } catch {
            // A missed sample leaves a gap in the series; the engine's counters are read again next time.
          }
        }),
      );
    } finally {
      this.inFlight = false;
    }
  }
}
