// What the gateway learns about one request as it passes the stages; turned into the one log line and
// the metrics at the end, whatever happened.

import type { Reservation } from "../budget/budget-ledger.js";
import type { AttemptOutcome } from "../proxy/upstream-attempt.js";
import { isoTime } from "../telemetry/iso-time.js";
import type { RequestLogLine } from "../telemetry/request-log.js";

export class RequestRecord {
  readonly t0 = performance.now();
  tenant: string | null = null;
  task: string | null = null;
  taskKnown = false;
  requestClass: string | null = null;
  modelAlias: string | null = null;
  modelVersion: string | null = null;
  /** The model name sent upstream: the pool's base model or a LoRA adapter. */
  servedModel: string | null = null;
  /** The W3C trace id (the caller's traceparent, or started here); equals traceId unless X-AI-Trace-Id was given. */
  w3cTraceId: string | null = null;
  configVersion: string | null = null;
  pool: string | null = null;
  routeReason: string | null = null;
  reasonLabel: string | null = null;
  endpoint: string | null = null;
  stream: boolean | null = null;
  inputTokensEstimated: number | null = null;
  inputTokensActual: number | null = null;
  cachedTokens: number | null = null;
  outputTokens: number | null = null;
  maxTokens: number | null = null;
  dispatchedAt = Number.NaN;
  /** When a request refused or abandoned in the gateway queue left it (its wait is logged too). */
  queueLeftAt = Number.NaN;
  /** Why it waited in the gateway queue (a QueueHold, `paused` or `queue_order`); null: placed at once. */
  queueReason: string | null = null;
  /** While it waited, the longest a candidate engine had no prefill of ours (RequestTicket). */
  heldWhileIdleMs: number | null = null;
  firstTokenAt = Number.NaN;
  runtimeQueueMs: number | null = null;
  prefillMs: number | null = null;
  decodeMs: number | null = null;
  kvCacheUsedRatio: number | null = null;
  fallbackReason: string | null = null;
  /** The endpoint picker's mode (degradation order), reason and top scores. */
  pickMode: string | null = null;
  pickReason: string | null = null;
  pickScores: string | null = null;
  /** The TTFT predicted when the endpoint was picked, ms from arrival (as `ttft_ms` is). */
  predictedTtftMs: number | null = null;
  clientCancelled = false;
  attempts = 0;
  httpStatus = 0;
  errorCode: string | null = null;
  status = "ok";
  prompt: unknown = undefined;
  /** The rollout stage that decided (shadow-label, canary, full), or `legacy_passthrough`; null: none. */
  rolloutStage: string | null = null;
  /** Sent to the legacy service: where and why tokengate would have routed it (its decision on paper). */
  wouldRoutePool: string | null = null;
  wouldRouteReason: string | null = null;
  /** Who served it under a rollout: the legacy service, the canary, or tokengate as routed; null: no rollout. */
  rolloutSide: "legacy" | "canary" | "routed" | null = null;
  /** A Batch API job's line run through the gateway's own path: its job and custom_id; null: not one. */
  batch: { readonly id: string; readonly customId: string } | null = null;
  /** What the tenant's budget holds for this request until it ends; null: not budgeted. */
  reservation: Reservation | null = null;

  constructor(readonly traceId: string) {}

  /** Ms since the request arrived. */
  elapsedMs(now = performance.now()): number {
    return now - this.t0;
  }

  /**
   * What an upstream's answer tells the record, whichever hand-off sent it (an engine, the legacy
   * service): its status as the client got it, the first token, the usage it reported, and whether it
   * was the upstream's own refusal or broke after it started.
   */
  recordAnswer(a: AttemptOutcome & { kind: "done" }, httpStatus: number): void {
    this.httpStatus = httpStatus;
    this.firstTokenAt = a.firstTokenAt;
    if (a.usage) {
      this.inputTokensActual = a.usage.prompt_tokens ?? null;
      this.outputTokens = a.usage.completion_tokens ?? null;
      this.cachedTokens = a.usage.prompt_tokens_details?.cached_tokens ?? null;
    }
    if (a.upstreamClientError) {
      this.status = "engine_rejected";
      this.errorCode = `engine_${a.status}`;
    } else if (a.brokenMidStream) {
      this.status = "broken_stream";
      this.errorCode = "upstream_error";
    }
  }

  /** Appends to the fallback reason (retries, degraded picks), comma-separated. */
  addFallback(reason: string): void {
    this.fallbackReason = this.fallbackReason ? `${this.fallbackReason},${reason}` : reason;
  }

  toLogLine(now = performance.now()): RequestLogLine {
    const ms = (x: number) => (Number.isFinite(x) ? Math.round(x * 10) / 10 : null);
    const ttft = ms(this.firstTokenAt - this.t0);
    const latency = now - this.t0;
    let tps: number | null = null;
    if (this.outputTokens !== null && this.outputTokens > 1) {
      const decode = this.decodeMs ?? (Number.isFinite(this.firstTokenAt) ? now - this.firstTokenAt : null);
      if (decode !== null && decode > 0) tps = Math.round(((this.outputTokens - 1) / decode) * 10000) / 10;
    }
    const line: RequestLogLine = {
      ts: isoTime(),
      event: this.pool && this.attempts > 0 ? "inference.completed" : "inference.rejected",
      trace_id: this.traceId,
      w3c_trace_id: this.w3cTraceId,
      tenant: this.tenant,
      task: this.task,
      task_known: this.pool && this.routeReason ? this.taskKnown : null,
      request_class: this.requestClass,
      model_alias: this.modelAlias,
      model_version: this.modelVersion,
      served_model: this.servedModel,
      route_pool: this.pool,
      route_reason: this.routeReason,
      endpoint: this.endpoint,
      input_tokens_estimated: this.inputTokensEstimated,
      input_tokens_actual: this.inputTokensActual,
      cached_tokens: this.cachedTokens,
      output_tokens: this.outputTokens,
      max_tokens: this.maxTokens,
      gateway_queue_ms: ms(
        (Number.isFinite(this.dispatchedAt) ? this.dispatchedAt : this.queueLeftAt) - this.t0,
      ),
      gateway_queue_reason: this.queueReason,
      held_while_idle_ms: this.heldWhileIdleMs === null ? null : ms(this.heldWhileIdleMs),
      runtime_queue_ms: this.runtimeQueueMs,
      prefill_ms: this.prefillMs,
      decode_ms: this.decodeMs,
      ttft_ms: ttft,
      latency_ms: Math.round(latency * 10) / 10,
      tokens_per_second: tps,
      kv_cache_used_ratio: this.kvCacheUsedRatio,
      gpu_memory_used_ratio: null,
      fallback_reason: this.fallbackReason,
      pick_mode: this.pickMode,
      pick_reason: this.pickReason,
      pick_scores: this.pickScores,
      predicted_ttft_ms: this.predictedTtftMs === null ? null : Math.round(this.predictedTtftMs),
      client_cancelled: this.clientCancelled,
      stream: this.stream,
      attempts: this.attempts,
      http_status: this.httpStatus,
      error_code: this.errorCode,
      status: this.status,
      config_version: this.configVersion,
    };
    if (this.rolloutStage !== null) {
      line.rollout_stage = this.rolloutStage;
      line.would_route_pool = this.wouldRoutePool;
      line.would_route_reason = this.wouldRouteReason;
    }
    if (this.batch !== null) {
      line.batch_id = this.batch.id;
      line.custom_id = this.batch.customId;
    }
    if (this.prompt !== undefined) line.prompt = this.prompt;
    return line;
  }
}
