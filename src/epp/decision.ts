// The seam between the ext_proc protocol layer and the gateway's decision pipeline: what the endpoint
// picker protocol hands the picker for one request, and what the picker answers.

/** One HTTP request as Envoy handed it over: its headers, its whole body and the proxy's subset hint. */
export interface EppRequest {
  /**
   * Request headers, names lower-cased as Envoy sends them, pseudo-headers (`:method`, `:path`,
   * `:authority`) included; repeated headers joined with ", ". Always has `x-request-id` (generated
   * when the client sent none, and then set on the request too).
   */
  headers: Readonly<Record<string, string>>;
  /** The whole request body (empty for a request without one). */
  body: Buffer;
  /**
   * The endpoints (`ip:port`) the proxy allows, from `metadata_context.filter_metadata`
   * `envoy.lb.subset_hint` / `x-gateway-destination-endpoint-subset`; null when the proxy sent no hint.
   * The picker must choose only from it; an empty list means none is eligible: refuse with 503.
   */
  subset: readonly string[] | null;
}

/** Where the request goes, or why it does not go anywhere. */
export type EppDecision =
  | {
      kind: "route";
      /** The primary endpoint, `ip:port`: the `x-gateway-destination-endpoint` header. */
      endpoint: string;
      /** Endpoints to retry on, in order, after the primary (the metadata list's tail). */
      fallbacks: readonly string[];
      /** Extra request headers to set. They cannot override the destination, content-length or x-request-id. */
      headers?: Readonly<Record<string, string>>;
      /**
       * The response began: `served` from `metadata_context` `envoy.lb` /
       * `x-gateway-destination-endpoint-served` (null when Envoy sends none), `status` from `:status`.
       */
      responseStarted?(served: string | null, status: number | null): void;
      /** A chunk of the response body as it passes (the first one of a stream is its first token). */
      responseBody?(chunk: Buffer, endOfStream: boolean): void;
      /**
       * Called exactly once, when the exchange is over: the response ended (its last body chunk or its
       * trailers), the stream ended or was cancelled, or the decision could not be sent. `served` and
       * `status` as `responseStarted` saw them, (null, null) when the response never began.
       */
      done(served: string | null, status: number | null): void;
    }
  | {
      kind: "refuse";
      /** The HTTP status Envoy answers with: 4xx or 5xx (429 when shed, 503 when nothing is eligible). */
      status: number;
      /** A stable error code, e.g. `no_healthy_endpoint`: the JSON error's `code`. */
      code: string;
      message: string;
      /** Sent as `retry-after` (seconds, rounded up). */
      retryAfterSeconds?: number;
    };

/**
 * The gateway's decision pipeline as the endpoint picker protocol calls it: once per request, after the
 * whole body has arrived. `signal` aborts when Envoy cancels the stream or ends it early.
 *
 * @example
 * const picker: EppPicker = {
 *   async decide(req) {
 *     const [first] = req.subset ?? ["10.0.0.7:8000"];
 *     if (!first) return { kind: "refuse", status: 503, code: "no_healthy_endpoint", message: "no endpoint" };
 *     return { kind: "route", endpoint: first, fallbacks: [], done() {} };
 *   },
 * };
 */
export interface EppPicker {
  decide(req: EppRequest, signal: AbortSignal): Promise<EppDecision>;
}
