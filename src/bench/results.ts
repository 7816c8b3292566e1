// The shape of results.json, stable so scripts can compare runs. Documented in docs/benchmarks.md
// ("results.json"); add fields, never rename or remove them.

import type { PriorityMode } from "./router-priority.js";

export interface LatencyQuantiles {
  p50: number | null;
  p90: number | null;
  p95: number | null;
  p99: number | null;
}

export interface ClassResult {
  count: number;
  errors: number;
  /** Client-side: from send to the first content token. */
  ttft_ms: LatencyQuantiles;
  /** Client-side: from send to the end of the reply. */
  e2e_ms: LatencyQuantiles;
  /** Engine-side queue time (Server-Timing), when the engine reports it. */
  runtime_queue_ms: LatencyQuantiles;
  /**
   * Engine-side TTFT (queue + prefill, the engine's own record): what routing decided, without the hop.
   * Optional: absent in results written before it existed.
   */
  engine_ttft_ms?: LatencyQuantiles;
  /**
   * Per request, client TTFT minus engine TTFT: the router's hop (and the client's and the machine's
   * delays), apart from where the request was sent.
   */
  hop_ms?: LatencyQuantiles;
  /** Requests that finished without error, over all sent. */
  completion_rate: number;
  output_tokens: number;
}

/** Seed 004's acceptance table, for the class named interactive ("live") and long. */
export interface Acceptance {
  live_ttft_p95_ms: number | null;
  live_e2e_p95_ms: number | null;
  runtime_queue_p95_ms: number | null;
  long_context_completion_rate: number | null;
  /** Share of requests with a complete route log line; null for routers that keep none. */
  route_log_completeness: number | null;
  /** Share of requests whose task the router did not know; null for routers that do not classify. */
  unknown_task_ratio: number | null;
}

export interface EndpointLoad {
  endpoint: string;
  group: string;
  requests: number;
  prompt_tokens: number;
  generation_tokens: number;
  /** LoRA adapters this engine loaded onto its GPU during the run (its own count); absent without LoRA. */
  lora_loads?: number;
}

/** LoRA adapter loads during one router's run, as the engines counted them (`src/bench/lora-loads.ts`). */
export interface LoraLoadResult {
  /** Sum over the engines of `loraLoads` in GET /admin/state, after the run minus before it. */
  total: number;
  by_endpoint: Record<string, number>;
  /** The same from the engines' `tokengate_sim_lora_loads_total` counters; null if one exports none. */
  counter_total: number | null;
}

/** Client-side latency of the requests that named one `model` (traces that name models per request). */
export interface ModelResult {
  count: number;
  errors: number;
  ttft_ms: LatencyQuantiles;
}

export interface TimePoint {
  t_s: number;
  value: number;
}

/** The batch pause as measured (tokengate with a `queuePolicy.pauseWhen`); times in s from the run's start. */
export interface PauseResult {
  watched_pool: string;
  threshold_ms: number;
  window_s: number;
  /** When the watched pool's TTFT P95 over the window first passed the threshold, as the clients saw it. */
  threshold_passed_s: number | null;
  /** The gateway's `queue.paused` / `queue.resumed` events. */
  paused_at_s: number[];
  resumed_at_s: number[];
  /** From the threshold passing to the pause taking hold: the last batch dispatch after it, or the pause. */
  effective_after_s: number | null;
  /** Batch requests that left the gateway queue while a pause was on (should be 0). */
  batch_dispatched_while_paused: number;
}

/** Batch work and queueing (issue 6), for scenarios with a batch class. */
export interface BatchFlowResult {
  batch_sent: number;
  batch_completed: number;
  /** Sent and never completed: errors, timeouts, refusals. */
  batch_lost: number;
  /** When the last batch reply finished, s from the run's start (the backlog's drain). */
  batch_last_completion_s: number | null;
  /** Batch replies finished within each scenario phase, per second of the phase. */
  batch_throughput_by_phase: Record<string, { requests_per_s: number; output_tokens_per_s: number }>;
  /** Gateway queue wait P95 by class, ms (tokengate only; empty for other routers). */
  gateway_queue_p95_ms: Record<string, number | null>;
  pause: PauseResult | null;
}

export interface RouterResult {
  status: "ok" | "skipped" | "failed";
  /** Why it was skipped or failed. */
  reason?: string;
  /** Which fleet topology the router ran on (scenarios may judge topology and policy apart). */
  topology?: string;
  classes: Record<string, ClassResult>;
  acceptance?: Acceptance;
  /** Engine-side prefix cache: hits / queries over the run (tokens). */
  prefix_cache_hit_rate: number | null;
  throughput_rps: number;
  output_tokens_per_s: number;
  errors: number;
  /** Busiest endpoint's requests over the mean (1.0 = perfectly even). */
  endpoint_load_max_over_mean: number | null;
  endpoints: EndpointLoad[];
  /** On fleets with LoRA enabled: adapter loads over the run, from the engines. */
  lora_loads?: LoraLoadResult;
  /** When the trace names models per request: latency by the model each request named. */
  by_model?: Record<string, ModelResult>;
  /** Engine waiting-queue depth per endpoint, sampled during the run. */
  queue_depth: Record<string, TimePoint[]>;
  /** Engine KV-cache use per endpoint, sampled during the run. */
  kv_usage: Record<string, TimePoint[]>;
  /** Per-request client measurements (for charts); ms. */
  samples?: { cls: string; ttft_ms: number | null; e2e_ms: number; ok: boolean; t_s: number }[];
  /** Batch and flow-control figures, for scenarios that name a batch class. */
  flow?: BatchFlowResult;
  /** How the router under test was put ahead of the harness on the shared CPUs (router-priority.ts). */
  priority?: PriorityMode;
  duration_s: number;
}

export interface BenchResults {
  scenario: string;
  seed: number;
  date: string;
  quick: boolean;
  description: string;
  requests: number;
  /** The scenario's live class (seed 004's "live summary"), when it has one. */
  live_class?: string;
  routers: Record<string, RouterResult>;
}

/** A router that did not run (or failed to), with why: reports list it, never drop it. */
export function skippedRouter(reason: string, topology: string): RouterResult {
  return {
    status: "skipped",
    reason,
    topology,
    classes: {},
    prefix_cache_hit_rate: null,
    throughput_rps: 0,
    output_tokens_per_s: 0,
    errors: 0,
    endpoint_load_max_over_mean: null,
    endpoints: [],
    queue_depth: {},
    kv_usage: {},
    duration_s: 0,
  };
}
