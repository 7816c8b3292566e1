// /metrics of a simulated replica under the exact names and labels of vLLM V1 or SGLang, so the
// gateway's scraper is tested against what real engines print (reference/sim.md §2).

import {
  type Counter,
  type CounterChild,
  type GaugeChild,
  type HistogramChild,
  MetricsRegistry,
} from "../telemetry/metrics.js";
import type { Engine, EngineStats } from "./engine.js";
import type { EngineRequest } from "./engine-request.js";
import { LORA_INFO_LABELS, LoraInfoSeries } from "./lora-info.js";

export type Dialect = "vllm" | "sglang";

const TTFT_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640,
  2560,
];
const ITL_BUCKETS = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80,
];
const PHASE_BUCKETS = [
  0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680,
];

function tokenBuckets(maxModelLen: number): number[] {
  const out: number[] = [];
  for (let m = 1; m <= maxModelLen; m *= 10) {
    for (const f of [1, 2, 5]) if (m * f <= maxModelLen) out.push(m * f);
  }
  return out;
}

/** The latency and count observations one finished request contributes. */
interface RequestHistograms {
  ttft: HistogramChild;
  itl: HistogramChild;
  e2e: HistogramChild;
  queue: HistogramChild | null;
  prefill: HistogramChild | null;
  decode: HistogramChild | null;
  inference: HistogramChild | null;
  tpot: HistogramChild | null;
  promptTokens: HistogramChild | null;
  generationTokens: HistogramChild | null;
}

interface Counters {
  prompt: CounterChild;
  generation: CounterChild;
  prefixQueries: CounterChild | null;
  prefixHits: CounterChild;
  preemptions: CounterChild | null;
}

export class EngineMetrics {
  readonly registry = new MetricsRegistry({ pythonStyle: true });
  readonly dialect: Dialect;
  private readonly engine: Engine;
  private hist!: RequestHistograms;
  private counters!: Counters;
  private success!: (reason: string) => CounterChild;
  private exported: EngineStats | null = null;
  /** Adapter loads onto the simulated GPU: the simulator's own counter, for benchmarks comparing routers. */
  private readonly loraLoads: Counter;
  private exportedLoraLoads = 0;
  /** The LoRA info series and those left behind; null without LoRA, as vLLM then has no such gauge. */
  private loraInfo: LoraInfoSeries | null = null;

  constructor(engine: Engine, dialect: Dialect) {
    this.engine = engine;
    this.dialect = dialect;
    if (dialect === "vllm") this.defineVllm();
    else this.defineSglang();
    this.loraLoads = this.registry.counter(
      "tokengate_sim_lora_loads_total",
      "LoRA adapter loads onto the simulated GPU (the tokengate simulator's metric; vLLM exports none).",
    );
  }

  /** Records one finished request (called by the engine observer). */
  onFinished(req: EngineRequest): void {
    this.success(req.finishReason ?? "abort").inc();
    if (req.finishReason === "abort" || req.outputLen === 0) return;
    const h = this.hist;
    const s = (ms: number) => ms / 1000;
    h.ttft.observe(s(req.firstTokenAt - req.arrivedAt));
    h.e2e.observe(s(req.finishedAt - req.arrivedAt));
    h.queue?.observe(s(req.firstScheduledAt - req.queuedAt));
    h.prefill?.observe(s(req.firstTokenAt - req.firstScheduledAt));
    h.decode?.observe(s(req.finishedAt - req.firstTokenAt));
    h.inference?.observe(s(req.finishedAt - req.firstScheduledAt));
    if (req.outputLen > 1) h.tpot?.observe(s((req.finishedAt - req.firstTokenAt) / (req.outputLen - 1)));
    h.promptTokens?.observe(req.promptLen);
    h.generationTokens?.observe(req.outputLen);
  }

  /** Records the gap between two consecutive tokens of one stream. */
  onInterToken(ms: number): void {
    this.hist.itl.observe(ms / 1000);
  }

  reset(): void {
    this.registry.reset();
    this.exported = null;
    this.exportedLoraLoads = 0;
    this.loraInfo?.clear();
    if (this.dialect === "vllm") this.bindVllm();
    else this.bindSglang();
  }

  expose(): string {
    return this.registry.expose();
  }

  /** Counters follow the engine's cumulative statistics; they are advanced by the difference at scrape time. */
  private syncCounters(): void {
    const st = this.engine.stats;
    const prev = this.exported;
    // An engine reset (crash, /admin/reset) zeroes its statistics: the counters then advance by all of them.
    const sameRun = prev !== null && prev.steps <= st.steps;
    const d = (
      k: "promptTokens" | "generationTokens" | "prefixCacheQueries" | "prefixCacheHits" | "preemptions",
    ) => Math.max(0, st[k] - (sameRun ? prev[k] : 0));
    this.counters.prompt.inc(d("promptTokens"));
    this.counters.generation.inc(d("generationTokens"));
    this.counters.prefixQueries?.inc(d("prefixCacheQueries"));
    this.counters.prefixHits.inc(d("prefixCacheHits"));
    this.counters.preemptions?.inc(d("preemptions"));
    const loads = this.engine.lora.loads;
    this.loraLoads.inc(Math.max(0, loads - (sameRun ? this.exportedLoraLoads : 0)));
    this.exportedLoraLoads = loads;
    this.exported = { ...st, finished: { ...st.finished } };
  }

  private defineVllm(): void {
    const r = this.registry;
    const L = ["model_name", "engine"];
    const e = this.engine;
    const cfg = e.cfg;
    r.gauge("vllm:num_requests_running", "Number of requests in model execution batches.", L);
    r.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", L);
    r.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", L);
    r.gauge("vllm:cache_config_info", "Information of the LLMEngine CacheConfig", [
      "block_size",
      "cache_dtype",
      "enable_prefix_caching",
      "gpu_memory_utilization",
      "num_gpu_blocks",
    ]);
    // vLLM registers the LoRA gauge only with LoRA enabled (a lora_config).
    if (cfg.enableLora) {
      this.loraInfo = new LoraInfoSeries(
        r.gauge("vllm:lora_requests_info", "Running stats on lora requests.", LORA_INFO_LABELS),
      );
    }
    r.counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", L);
    r.counter("vllm:generation_tokens_total", "Number of generation tokens processed.", L);
    r.counter(
      "vllm:prefix_cache_queries_total",
      "Prefix cache queries, in terms of number of queried tokens.",
      L,
    );
    r.counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", L);
    r.counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", L);
    r.counter("vllm:request_success_total", "Count of successfully processed requests.", [
      ...L,
      "finished_reason",
    ]);
    r.histogram(
      "vllm:time_to_first_token_seconds",
      "Histogram of time to first token in seconds.",
      L,
      TTFT_BUCKETS,
    );
    r.histogram(
      "vllm:inter_token_latency_seconds",
      "Histogram of inter-token latency in seconds.",
      L,
      ITL_BUCKETS,
    );
    r.histogram(
      "vllm:request_time_per_output_token_seconds",
      "Histogram of time_per_output_token_seconds per request.",
      L,
      ITL_BUCKETS,
    );
    r.histogram(
      "vllm:e2e_request_latency_seconds",
      "Histogram of e2e request latency in seconds.",
      L,
      PHASE_BUCKETS,
    );
    r.histogram(
      "vllm:request_queue_time_seconds",
      "Histogram of time spent in WAITING phase for request.",
      L,
      PHASE_BUCKETS,
    );
    r.histogram(
      "vllm:request_inference_time_seconds",
      "Histogram of time spent in RUNNING phase for request.",
      L,
      PHASE_BUCKETS,
    );
    r.histogram(
      "vllm:request_prefill_time_seconds",
      "Histogram of time spent in PREFILL phase for request.",
      L,
      PHASE_BUCKETS,
    );
    r.histogram(
      "vllm:request_decode_time_seconds",
      "Histogram of time spent in DECODE phase for request.",
      L,
      PHASE_BUCKETS,
    );
    const tb = tokenBuckets(cfg.maxModelLen);
    r.histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", L, tb);
    r.histogram("vllm:request_generation_tokens", "Number of generation tokens processed.", L, tb);
    r.onCollect(() => this.collectVllm());
    this.bindVllm();
  }

  private bindVllm(): void {
    const r = this.registry;
    const lv = [this.engine.cfg.modelName, "0"];
    const c = (n: string) => (r.get(n) as { labels(...v: string[]): CounterChild }).labels(...lv);
    const h = (n: string) => (r.get(n) as { labels(...v: string[]): HistogramChild }).labels(...lv);
    this.counters = {
      prompt: c("vllm:prompt_tokens_total"),
      generation: c("vllm:generation_tokens_total"),
      prefixQueries: c("vllm:prefix_cache_queries_total"),
      prefixHits: c("vllm:prefix_cache_hits_total"),
      preemptions: c("vllm:num_preemptions_total"),
    };
    const success = r.get("vllm:request_success_total") as { labels(...v: string[]): CounterChild };
    this.success = (reason) => success.labels(...lv, reason);
    for (const reason of ["stop", "length", "abort"]) this.success(reason);
    this.hist = {
      ttft: h("vllm:time_to_first_token_seconds"),
      itl: h("vllm:inter_token_latency_seconds"),
      tpot: h("vllm:request_time_per_output_token_seconds"),
      e2e: h("vllm:e2e_request_latency_seconds"),
      queue: h("vllm:request_queue_time_seconds"),
      inference: h("vllm:request_inference_time_seconds"),
      prefill: h("vllm:request_prefill_time_seconds"),
      decode: h("vllm:request_decode_time_seconds"),
      promptTokens: h("vllm:request_prompt_tokens"),
      generationTokens: h("vllm:request_generation_tokens"),
    };
  }

  private collectVllm(): void {
    const r = this.registry;
    const e = this.engine;
    const cfg = e.cfg;
    const lv = [cfg.modelName, "0"];
    const g = (n: string) => r.get(n) as { labels(...v: string[]): GaugeChild };
    g("vllm:num_requests_running")
      .labels(...lv)
      .set(e.numRunning);
    g("vllm:num_requests_waiting")
      .labels(...lv)
      .set(e.numWaiting);
    g("vllm:kv_cache_usage_perc")
      .labels(...lv)
      .set(e.kv.usage());
    g("vllm:cache_config_info")
      .labels(String(cfg.blockSize), "auto", String(cfg.enablePrefixCaching), "0.9", String(cfg.numGpuBlocks))
      .set(1);
    if (this.loraInfo) {
      const waiting = [...new Set(e.waiting.map((q) => q.lora).filter((x): x is string => !!x))];
      this.loraInfo.update(cfg.maxLoras, e.lora.runningAdapters(), waiting);
    }
    this.syncCounters();
  }

  private defineSglang(): void {
    const r = this.registry;
    const L = ["model_name"];
    r.gauge("sglang:num_running_reqs", "The number of running requests.", L);
    r.gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", L);
    r.gauge("sglang:num_used_tokens", "The number of used tokens.", L);
    r.gauge("sglang:token_usage", "The token usage.", L);
    r.gauge("sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.", L);
    r.gauge("sglang:cache_hit_rate", "The prefix cache hit rate.", L);
    r.gauge("sglang:gen_throughput", "The generation throughput (token/s).", L);
    r.gauge("sglang:cache_config_info", "Cache configuration.", ["model_name", "page_size", "num_pages"]);
    r.counter("sglang:prompt_tokens_total", "Number of prefill tokens processed.", L);
    r.counter("sglang:generation_tokens_total", "Number of generation tokens processed.", L);
    r.counter("sglang:cached_tokens_total", "Number of cached prompt tokens.", L);
    r.counter("sglang:num_requests_total", "Number of requests processed.", L);
    r.counter("sglang:num_aborted_requests_total", "Number of requests aborted.", L);
    r.histogram(
      "sglang:time_to_first_token_seconds",
      "Histogram of time to first token in seconds.",
      L,
      TTFT_BUCKETS,
    );
    r.histogram(
      "sglang:inter_token_latency_seconds",
      "Histogram of inter-token latency in seconds.",
      L,
      ITL_BUCKETS,
    );
    r.histogram(
      "sglang:e2e_request_latency_seconds",
      "Histogram of End-to-end request latency in seconds",
      L,
      PHASE_BUCKETS,
    );
    r.onCollect(() => this.collectSglang());
    this.bindSglang();
  }

  private bindSglang(): void {
    const r = this.registry;
    const m = this.engine.cfg.modelName;
    const c = (n: string) => (r.get(n) as { labels(...v: string[]): CounterChild }).labels(m);
    const h = (n: string) => (r.get(n) as { labels(...v: string[]): HistogramChild }).labels(m);
    this.counters = {
      prompt: c("sglang:prompt_tokens_total"),
      generation: c("sglang:generation_tokens_total"),
      prefixQueries: null,
      prefixHits: c("sglang:cached_tokens_total"),
      preemptions: null,
    };
    const total = c("sglang:num_requests_total");
    const aborted = c("sglang:num_aborted_requests_total");
    this.success = (reason) => {
      if (reason === "abort") return aborted;
      return total;
    };
    this.hist = {
      ttft: h("sglang:time_to_first_token_seconds"),
      itl: h("sglang:inter_token_latency_seconds"),
      e2e: h("sglang:e2e_request_latency_seconds"),
      queue: null,
      prefill: null,
      decode: null,
      inference: null,
      tpot: null,
      promptTokens: null,
      generationTokens: null,
    };
  }

  private collectSglang(): void {
    const r = this.registry;
    const e = this.engine;
    const cfg = e.cfg;
    const m = cfg.modelName;
    const g = (n: string) => (r.get(n) as { labels(...v: string[]): GaugeChild }).labels(m);
    const capacity = cfg.numGpuBlocks * cfg.blockSize;
    const used = Math.round(e.kv.usage() * capacity);
    g("sglang:num_running_reqs").set(e.numRunning);
    g("sglang:num_queue_reqs").set(e.numWaiting);
    g("sglang:num_used_tokens").set(used);
    g("sglang:token_usage").set(e.kv.usage());
    g("sglang:max_total_num_tokens").set(capacity);
    const st = e.stats;
    g("sglang:cache_hit_rate").set(
      st.prefixCacheQueries > 0 ? st.prefixCacheHits / st.prefixCacheQueries : 0,
    );
    g("sglang:gen_throughput").set(st.busyMs > 0 ? (st.generationTokens / st.busyMs) * 1000 : 0);
    (r.get("sglang:cache_config_info") as { labels(...v: string[]): GaugeChild })
      .labels(m, String(cfg.blockSize), String(cfg.numGpuBlocks))
      .set(1);
    this.syncCounters();
  }
}
