// The shape of results.json, stable so scripts can compare runs. Documented in docs/benchmarks.md
// ("results.json"); add fields, never rename or remove them.

import type { PriorityMode } from "./services/router-priority.js";

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

/** One tenant's hop, gateway queue and holds while an engine idled (`src/bench/summary/tenant-flow.ts`). */
export interface TenantFlow {
  count: number;
  /** Client TTFT less engine TTFT, per request. */
  hop_ms: LatencyQuantiles;
  /**
   * The hop less the gateway queue wait (per request): the router's own cost and the machine's, apart
   * from a hold the queue made on purpose; null without a gateway log.
   */
  hop_after_queue_ms: LatencyQuantiles | null;
  /** The gateway's `gateway_queue_ms`; null without a gateway log. */
  gateway_queue_ms: LatencyQuantiles | null;
  /**
   * Summed over the tenant's requests, ms an engine idled while the gateway held them (a batch pause's
   * holds left out); null without a gateway log.
   */
  held_while_idle_ms_total: number | null;
  /** The tenant's requests that waited while an engine idled more than 10 ms; null without a log. */
  held_while_idle_requests: number | null;
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

/** LoRA adapter loads during one router's run, as the engines counted them (`src/bench/summary/lora-loads.ts`). */
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

/**
 * Client-side latency of one group of requests: a tenant, an input-size bucket, every request
 * (`src/bench/summary/breakdowns.ts`). Quantiles over the requests that finished without error.
 */
export interface GroupResult {
  count: number;
  errors: number;
  ttft_ms: LatencyQuantiles;
  e2e_ms: LatencyQuantiles;
}

/** Latency per tenant and per input-size bucket, within one scenario phase or the whole run. */
export interface Breakdown {
  /** By the trace's `tenant` (sent as X-AI-Tenant), tenants sorted by name. */
  by_tenant: Record<string, GroupResult>;
  /**
   * By the trace's `input_tokens` (the user message; a text's length in the simulator's tokenizer),
   * in bucket order: "<1024", "1024-4095", "4096-8191", ">=8192"; empty buckets left out.
   */
  by_input_size: Record<string, GroupResult>;
}

/**
 * How the gateway's predicted TTFT (`predicted_ttft_ms` on a request's log line, made when it picked
 * the endpoint) compared with the TTFT it then logged (`ttft_ms`); `src/bench/summary/prediction-error.ts`.
 */
export interface PredictionErrorResult {
  /** Log lines with both figures (a positive `ttft_ms`); 0 while the gateway logs no prediction. */
  count: number;
  /** |predicted − actual| / actual, as a percentage; null without lines. */
  relative_pct: { p50: number | null; p90: number | null };
  /** |predicted − actual|, ms. */
  absolute_ms: { p50: number | null; p90: number | null };
  /**
   * The same against the TTFT after the gateway queue (`ttft_ms − gateway_queue_ms`): the part a
   * prediction made at dispatch can see. Lines without `gateway_queue_ms` count as not queued.
   */
  after_queue: {
    relative_pct: { p50: number | null; p90: number | null };
    absolute_ms: { p50: number | null; p90: number | null };
  };
}

/** One tenant's burst against the others (noisy-neighbor): the quiet tenants' TTFT P99 with and without it. */
export interface BurstIsolationResult {
  burst_tenant: string;
  burst_phase: string;
  /** Requests of every other tenant that arrived during the burst phase / in the other phases. */
  quiet_during: GroupResult;
  quiet_without: GroupResult;
  /** quiet_during's TTFT P99 over quiet_without's; null when either is missing. */
  p99_ratio: number | null;
  /**
   * The quiet tenants' requests that arrived before the burst phase alone: unlike `quiet_without`, free
   * of the backlog's drain after the burst. With its ratio, for scale.
   */
  quiet_before: GroupResult;
  p99_ratio_before: number | null;
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
  /** Every request of the run, whatever its class. */
  overall?: GroupResult;
  /** Latency per tenant, over the whole run. */
  by_tenant?: Record<string, GroupResult>;
  /** Latency per input-size bucket, over the whole run (see Breakdown). */
  by_input_size?: Record<string, GroupResult>;
  /** Per tenant and input-size bucket within each phase, for scenarios with more than one phase. */
  by_phase?: Record<string, Breakdown>;
  /** For scenarios with one tenant's burst (noisy-neighbor). */
  burst_isolation?: BurstIsolationResult;
  /**
   * Per tenant: the hop, the gateway queue wait and the time engines idled while the gateway held the
   * tenant's requests (`src/bench/summary/tenant-flow.ts`).
   */
  tenant_flow?: Record<string, TenantFlow>;
  /** tokengate: its TTFT predictions against what followed; absent for routers that keep no log. */
  prediction_error?: PredictionErrorResult;
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
  /**
   * Whether the report judges issue 13's targets against least-request for this scenario (tokengate's
   * TTFT P90 and P99 at most 0.7×, short prompts' P99 at most 0.5×): noisy-neighbor, mixed-lengths.
   */
  prefill_targets?: boolean;
  routers: Record<string, RouterResult>;
  /**
   * `--repeat n`: every round of the same trace, round 1 being `routers` itself, each round's routers
   * without their per-request samples and gauges. The report judges the median round.
   */
  rounds?: RoundResult[];
}

/** One round of a repeated run: the routers in the order they ran, and what each measured. */
export interface RoundResult {
  round: number;
  order: string[];
  routers: Record<string, RouterResult>;
}

/** A router's result without what only charts need (samples, queue and KV gauges): a round's record. */
export function roundRouter(r: RouterResult): RouterResult {
  const { samples: _samples, ...rest } = r;
  return { ...rest, queue_depth: {}, kv_usage: {} };
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
