// The gateway's error catalogue: every error a caller can see has a stable code, an HTTP status and the
// OpenAI error shape, extended as in seed 004 with retry_after_seconds, route and fallback_options.

import type { ServerResponse } from "node:http";

export type GatewayErrorCode =
  | "invalid_json"
  | "invalid_request"
  | "request_too_large"
  | "request_timeout"
  | "missing_api_key"
  | "invalid_api_key"
  | "untrusted_tenant_header"
  | "model_not_found"
  | "context_length_exceeded"
  | "max_tokens_exceeded"
  | "no_eligible_pool"
  | "model_version_unavailable"
  | "no_healthy_endpoint"
  | "queue_full"
  | "queue_timeout"
  | "inference_queue_paused"
  | "upstream_error"
  | "upstream_timeout"
  | "upstream_unavailable"
  | "upstream_overloaded"
  | "gateway_shutdown"
  | "not_found"
  | "method_not_allowed"
  | "admin_unauthorized"
  | "residency_unavailable"
  | "model_unavailable"
  | "no_region"
  | "config_invalid"
  | "config_conflict"
  | "version_exists"
  | "version_not_found"
  | "reload_without_source"
  | "rollout_gates_failed"
  | "rollout_not_forward"
  | "budget_exceeded"
  | "concurrency_limit"
  | "outside_allowed_window"
  | "input_too_large"
  | "budget_store_unavailable"
  | "batches_disabled"
  | "file_not_found"
  | "file_too_large"
  | "invalid_multipart"
  | "batch_not_found"
  | "batch_not_cancellable"
  | "internal_error";

const CATALOGUE: Record<GatewayErrorCode, { status: number; type: string }> = {
  invalid_json: { status: 400, type: "invalid_request_error" },
  invalid_request: { status: 400, type: "invalid_request_error" },
  request_too_large: { status: 413, type: "invalid_request_error" },
  request_timeout: { status: 408, type: "invalid_request_error" },
  missing_api_key: { status: 401, type: "authentication_error" },
  invalid_api_key: { status: 401, type: "authentication_error" },
  untrusted_tenant_header: { status: 403, type: "permission_error" },
  model_not_found: { status: 404, type: "invalid_request_error" },
  context_length_exceeded: { status: 400, type: "invalid_request_error" },
  max_tokens_exceeded: { status: 400, type: "invalid_request_error" },
  no_eligible_pool: { status: 400, type: "invalid_request_error" },
  model_version_unavailable: { status: 503, type: "service_unavailable_error" },
  no_healthy_endpoint: { status: 503, type: "service_unavailable_error" },
  queue_full: { status: 429, type: "rate_limit_error" },
  queue_timeout: { status: 503, type: "service_unavailable_error" },
  inference_queue_paused: { status: 503, type: "service_unavailable_error" },
  upstream_error: { status: 502, type: "server_error" },
  upstream_timeout: { status: 504, type: "server_error" },
  upstream_unavailable: { status: 503, type: "service_unavailable_error" },
  upstream_overloaded: { status: 503, type: "service_unavailable_error" },
  gateway_shutdown: { status: 503, type: "service_unavailable_error" },
  not_found: { status: 404, type: "invalid_request_error" },
  method_not_allowed: { status: 405, type: "invalid_request_error" },
  admin_unauthorized: { status: 401, type: "authentication_error" },
  residency_unavailable: { status: 503, type: "service_unavailable_error" },
  model_unavailable: { status: 503, type: "service_unavailable_error" },
  no_region: { status: 503, type: "service_unavailable_error" },
  config_invalid: { status: 422, type: "invalid_request_error" },
  config_conflict: { status: 409, type: "invalid_request_error" },
  version_exists: { status: 409, type: "invalid_request_error" },
  version_not_found: { status: 404, type: "invalid_request_error" },
  reload_without_source: { status: 400, type: "invalid_request_error" },
  rollout_gates_failed: { status: 409, type: "invalid_request_error" },
  rollout_not_forward: { status: 400, type: "invalid_request_error" },
  budget_exceeded: { status: 429, type: "rate_limit_error" },
  concurrency_limit: { status: 429, type: "rate_limit_error" },
  outside_allowed_window: { status: 429, type: "rate_limit_error" },
  input_too_large: { status: 400, type: "invalid_request_error" },
  budget_store_unavailable: { status: 503, type: "service_unavailable_error" },
  batches_disabled: { status: 404, type: "invalid_request_error" },
  file_not_found: { status: 404, type: "invalid_request_error" },
  file_too_large: { status: 413, type: "invalid_request_error" },
  invalid_multipart: { status: 400, type: "invalid_request_error" },
  batch_not_found: { status: 404, type: "invalid_request_error" },
  batch_not_cancellable: { status: 409, type: "invalid_request_error" },
  internal_error: { status: 500, type: "server_error" },
};

export interface GatewayErrorOptions {
  param?: string | null;
  retryAfterSeconds?: number | null;
  route?: string | null;
  fallbackOptions?: readonly string[];
  /** Overrides the catalogue status (e.g. an engine's 4xx passed on). */
  status?: number;
  /** More fields of the error object (a rejected config's `errors`, the `current_version`). */
  details?: Readonly<Record<string, unknown>>;
}

export class GatewayError extends Error {
  readonly code: GatewayErrorCode;
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly retryAfterSeconds: number | null;
  readonly route: string | null;
  readonly fallbackOptions: readonly string[];
  readonly details: Readonly<Record<string, unknown>> | null;

  constructor(code: GatewayErrorCode, message: string, opts: GatewayErrorOptions = {}) {
    super(message);
    const entry = CATALOGUE[code];
    this.code = code;
    this.status = opts.status ?? entry.status;
    this.type = entry.type;
    this.param = opts.param ?? null;
    this.retryAfterSeconds = opts.retryAfterSeconds ?? null;
    this.route = opts.route ?? null;
    this.fallbackOptions = opts.fallbackOptions ?? [];
    this.details = opts.details ?? null;
  }

  /** The response body: `{"error": {...}}`. */
  body(traceId: string): string {
    return JSON.stringify({
      error: {
        message: this.message,
        type: this.type,
        param: this.param,
        code: this.code,
        retry_after_seconds: this.retryAfterSeconds,
        route: this.route,
        fallback_options: this.fallbackOptions,
        trace_id: traceId,
        ...this.details,
      },
    });
  }

  /** Answers with this error: its status, headers and body, with a Content-Length (not chunked). */
  send(res: ServerResponse, traceId: string): void {
    sendBody(res, this.status, this.headers(), this.body(traceId));
  }

  headers(): Record<string, string> {
    const h: Record<string, string> = { "content-type": "application/json" };
    if (this.retryAfterSeconds !== null)
      h["retry-after"] = String(Math.max(0, Math.ceil(this.retryAfterSeconds)));
    return h;
  }
}

/** A whole reply at once, with its Content-Length: a client reads it without chunked framing. */
export function sendBody(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: string | Buffer,
): void {
  res.writeHead(status, { ...headers, "content-length": String(Buffer.byteLength(body)) }).end(body);
}

export function errorCatalogue(): { code: GatewayErrorCode; status: number; type: string }[] {
  return (Object.keys(CATALOGUE) as GatewayErrorCode[]).map((code) => ({ code, ...CATALOGUE[code] }));
}
