// The gateway's own Prometheus metrics, named as in seed 004 (ai_gateway_*, ai_runtime_*). Labels stay
// low-cardinality: pool, endpoint, task (unknown tasks collapse to "unknown"), status, reason, code,
// tenant. Trace ids never become labels.

import { type Counter, type Gauge, type Histogram, MetricsRegistry } from "./metrics.js";

const LATENCY_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.8, 1, 1.5, 2, 3, 5, 7.5, 10, 15, 20, 30, 60, 120, 300,
];
const PHASE_BUCKETS = [0.01, 0.05, 0.1, 0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 60, 120, 240, 480];

export class GatewayMetrics {
  readonly registry = new MetricsRegistry();
  readonly requests: Counter;
  readonly routeDecisions: Counter;
  readonly queueSeconds: Histogram;
  readonly ttftSeconds: Histogram;
  readonly durationSeconds: Histogram;
  readonly rejections: Counter;
  readonly tasks: Counter;
  readonly retries: Counter;
  readonly clientCancels: Counter;
  readonly inflight: Gauge;
  readonly circuitState: Gauge;
  readonly ejectionsCapped: Counter;
  readonly runtimeQueueSeconds: Histogram;
  readonly runtimePrefillSeconds: Histogram;
  readonly runtimeDecodeSeconds: Histogram;
  readonly kvCacheUsedRatio: Gauge;
  readonly endpointHealthy: Gauge;
  readonly pendingPrefillTokens: Gauge;
  readonly discoverySynced: Gauge;
  readonly discoveryApiReachable: Gauge;
  readonly discoveryEndpoints: Gauge;
  readonly decodingRequests: Gauge;
  readonly prefillMsPerKToken: Gauge;
  readonly inputTokens: Counter;
  readonly outputTokens: Counter;
  readonly tokenEstimateError: Gauge;
  readonly tokenCorrectionFactor: Gauge;
  readonly budgetStoreUp: Gauge;
  readonly batchLines: Counter;
  readonly batchLinesInFlight: Gauge;
  readonly batchJobsEnded: Counter;
  readonly configInfo: Gauge;
  readonly queueDepth: Gauge;
  readonly queueOutcomes: Counter;
  readonly heldWhileIdleSeconds: Counter;
  readonly queuePaused: Gauge;
  readonly queuePauseTransitions: Counter;
  readonly queueWatchedTtftP95: Gauge;
  readonly eventLoopDelay: Gauge;

  constructor() {
    const r = this.registry;
    this.requests = r.counter("ai_gateway_requests_total", "Requests finished, by pool, task and status.", [
      "pool",
      "task",
      "status",
    ]);
    this.routeDecisions = r.counter("ai_gateway_route_decisions_total", "Route decisions by pool and rule.", [
      "pool",
      "reason",
    ]);
    this.queueSeconds = r.histogram(
      "ai_gateway_queue_seconds",
      "Time requests waited in the gateway before dispatch.",
      ["pool"],
      LATENCY_BUCKETS,
    );
    this.ttftSeconds = r.histogram(
      "ai_gateway_ttft_seconds",
      "Time from request arrival at the gateway to the first token (streams) or to the response (non-streaming).",
      ["pool"],
      LATENCY_BUCKETS,
    );
    this.durationSeconds = r.histogram(
      "ai_gateway_request_duration_seconds",
      "End-to-end request time at the gateway.",
      ["pool"],
      LATENCY_BUCKETS,
    );
    this.rejections = r.counter(
      "ai_gateway_rejections_total",
      "Requests refused by the gateway, by error code.",
      ["code", "tenant"],
    );
    this.tasks = r.counter(
      "ai_gateway_tasks_total",
      "Requests by whether their task is known (seed 004's unknown-task ratio).",
      ["known"],
    );
    this.retries = r.counter(
      "ai_gateway_upstream_retries_total",
      "Upstream attempts retried on another endpoint.",
      ["pool", "reason"],
    );
    this.clientCancels = r.counter("ai_gateway_client_cancelled_total", "Requests the client abandoned.", [
      "pool",
    ]);
    this.inflight = r.gauge("ai_gateway_inflight_requests", "Requests in flight to an endpoint.", [
      "pool",
      "endpoint",
    ]);
    this.circuitState = r.gauge(
      "ai_gateway_endpoint_circuit_state",
      "An endpoint's circuit breaker: 0 closed, 1 open, 2 half-open (probing).",
      ["pool", "endpoint"],
    );
    this.ejectionsCapped = r.counter(
      "ai_gateway_ejections_capped_total",
      "Ejections refused because they would pass the pool's maxEjectionPercent (the pool keeps every endpoint).",
      ["pool"],
    );
    this.runtimeQueueSeconds = r.histogram(
      "ai_runtime_queue_seconds",
      "Engine-side queue time reported by the engine (Server-Timing).",
      ["pool"],
      PHASE_BUCKETS,
    );
    this.runtimePrefillSeconds = r.histogram(
      "ai_runtime_prefill_seconds",
      "Engine-side prefill time reported by the engine (Server-Timing).",
      ["pool"],
      PHASE_BUCKETS,
    );
    this.runtimeDecodeSeconds = r.histogram(
      "ai_runtime_decode_seconds",
      "Engine-side decode time reported by the engine (Server-Timing).",
      ["pool"],
      PHASE_BUCKETS,
    );
    this.kvCacheUsedRatio = r.gauge(
      "ai_runtime_kv_cache_used_ratio",
      "KV-cache use scraped from each engine.",
      ["pool", "pod"],
    );
    this.endpointHealthy = r.gauge(
      "ai_gateway_endpoint_healthy",
      "1 when the endpoint passes health checks.",
      ["pool", "endpoint"],
    );
    this.pendingPrefillTokens = r.gauge(
      "ai_gateway_endpoint_pending_prefill_tokens",
      "Prompt tokens the gateway sent an endpoint that have not had their first token yet.",
      ["pool", "endpoint"],
    );
    this.discoverySynced = r.gauge(
      "ai_gateway_discovery_synced",
      "1 once a discovered pool's pods have been listed from the Kubernetes API, 0 before.",
      ["pool"],
    );
    this.discoveryApiReachable = r.gauge(
      "ai_gateway_discovery_api_reachable",
      "1 while the Kubernetes API answers a discovered pool's watch; 0: its last known pods are kept.",
      ["pool"],
    );
    this.discoveryEndpoints = r.gauge(
      "ai_gateway_discovery_endpoints",
      "Endpoints discovery found for a pool, by state (ready, draining).",
      ["pool", "state"],
    );
    this.decodingRequests = r.gauge(
      "ai_gateway_endpoint_decoding_requests",
      "Requests in flight on an endpoint past their first token.",
      ["pool", "endpoint"],
    );
    this.prefillMsPerKToken = r.gauge(
      "ai_gateway_endpoint_prefill_ms_per_ktoken",
      "Learned prefill time per 1,000 prompt tokens on an endpoint (the prior until it has learned).",
      ["pool", "endpoint"],
    );
    this.inputTokens = r.counter("ai_gateway_input_tokens_total", "Prompt tokens reported by engines.", [
      "pool",
      "tenant",
    ]);
    this.outputTokens = r.counter(
      "ai_gateway_output_tokens_total",
      "Completion tokens reported by engines.",
      ["pool", "tenant"],
    );
    this.tokenEstimateError = r.gauge(
      "ai_gateway_token_estimate_p90_relative_error",
      "P90 relative error of the input-token estimate against engine usage (after correction).",
      ["model"],
    );
    this.tokenCorrectionFactor = r.gauge(
      "ai_gateway_token_estimate_correction_factor",
      "Learned multiplier applied to input-token estimates.",
      ["model"],
    );
    this.budgetStoreUp = r.gauge(
      "ai_gateway_budget_store_up",
      "Whether the tenant-budget store answers (1), or not (0: Redis unreachable, its configured mode applies).",
      ["store"],
    );
    this.batchLines = r.counter(
      "ai_gateway_batch_lines_total",
      "Batch API lines run by this replica, by outcome (succeeded, failed, deferred: told to wait and put back with its attempt, retried: the engine failed, abandoned: its lease was lost).",
      ["outcome"],
    );
    this.batchLinesInFlight = r.gauge(
      "ai_gateway_batch_lines_in_flight",
      "Batch API lines this replica is running now.",
      [],
    );
    this.batchJobsEnded = r.counter(
      "ai_gateway_batch_jobs_finalized_total",
      "Batch API jobs this replica finalized, by final status (completed, cancelled, expired).",
      ["status"],
    );
    this.configInfo = r.gauge("ai_gateway_config_info", "The route config version in force (value 1).", [
      "version",
    ]);
    this.queueDepth = r.gauge(
      "ai_gateway_queue_depth",
      "Requests waiting in the gateway's queue for a pool, by priority band.",
      ["pool", "priority"],
    );
    this.queueOutcomes = r.counter(
      "ai_gateway_queue_requests_total",
      "Requests that had to wait in the gateway queue, by how the wait ended (dispatched, timed_out, cancelled, refused_full).",
      ["pool", "outcome"],
    );
    this.heldWhileIdleSeconds = r.counter(
      "ai_gateway_queue_held_while_idle_seconds_total",
      "Time requests waited in the gateway queue while an engine they could have gone to had no prefill of this gateway's (the longest such engine per request), by pool and tenant; batch pauses not counted. Work-conserving flow control keeps it near 0.",
      ["pool", "tenant"],
    );
    this.queuePaused = r.gauge(
      "ai_gateway_queue_paused",
      "1 while a rule's requests are held by its batch pause (queuePolicy.pauseWhen).",
      ["pool", "rule"],
    );
    this.queuePauseTransitions = r.counter(
      "ai_gateway_queue_pause_transitions_total",
      "Batch pauses and resumes.",
      ["pool", "rule", "to"],
    );
    this.queueWatchedTtftP95 = r.gauge(
      "ai_gateway_queue_watched_ttft_p95_seconds",
      "The TTFT P95 a batch pause watches (its window), as last evaluated.",
      ["pool", "rule", "watched_pool"],
    );
    this.eventLoopDelay = r.gauge(
      "ai_gateway_event_loop_delay_seconds",
      "How long the gateway's event loop kept work waiting, over the last 10 s window (quantile 1 = max).",
      ["quantile"],
    );
  }
}
