// One ext_proc Process stream, i.e. one HTTP request through Envoy in FULL_DUPLEX_STREAMED mode: gather
// the request's headers and body, ask the picker, answer headers → body → trailers, pass the response
// through and tell the picker which endpoint served it.

import { randomUUID } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import type { EppDecision, EppPicker } from "./decision.js";
import { DESTINATION_HEADER, destinationMetadata, headerRecord, readServed, readSubset } from "./metadata.js";
import {
  BodySendMode,
  type HttpBody,
  type HttpHeaders,
  type ProcessingRequest,
  type ProcessingResponse,
  type ProtocolConfiguration,
} from "./protos.js";
import {
  bodyChunkReply,
  bodyReplies,
  continueHeadersReply,
  immediateReply,
  type Refusal,
  routedHeadersReply,
  trailersReply,
} from "./replies.js";
import { checkRoute } from "./route-check.js";

/** What every stream of one server shares. */
export interface ExchangeOptions {
  picker: EppPicker;
  /** Largest request body buffered for the picker; a larger one is refused with 413. */
  maxBodyBytes: number;
}

/** The server side of `ExternalProcessor/Process`. */
export type ProcessCall = grpc.ServerDuplexStream<ProcessingRequest, ProcessingResponse>;

type Route = Extract<EppDecision, { kind: "route" }>;

/**
 * Where the exchange is: reading the request, waiting for the picker, routed (waiting for the response
 * headers), passing the response through, or over.
 */
type Phase = "request-headers" | "request-body" | "deciding" | "routed" | "response" | "over";

const DUPLEX_OR_NONE: readonly number[] = [BodySendMode.NONE, BodySendMode.FULL_DUPLEX_STREAMED];

/** Serves one Process stream until Envoy ends it, cancels it, or an ImmediateResponse ends the request. */
export function serveExchange(call: ProcessCall, options: ExchangeOptions): void {
  new Exchange(call, options).listen();
}

class Exchange {
  private phase: Phase = "request-headers";
  private headers: Record<string, string> = {};
  private generatedRequestId: string | null = null;
  private subset: string[] | null = null;
  private readonly chunks: Buffer[] = [];
  private bodyBytes = 0;
  private sawBody = false;
  private sawTrailers = false;
  private readonly abort = new AbortController();
  /** The routed decision whose done() is still owed. */
  private pending: Route | null = null;
  private waitingForDrain = false;
  /** What the response headers said: the endpoint Envoy served from, and the status. */
  private served: string | null = null;
  private status: number | null = null;

  constructor(
    private readonly call: ProcessCall,
    private readonly options: ExchangeOptions,
  ) {}

  listen(): void {
    this.call.on("data", (m: ProcessingRequest) => this.onMessage(m));
    this.call.on("end", () => this.onHalfClose());
    this.call.on("cancelled", () => this.stop("cancelled"));
    this.call.on("close", () => this.stop("closed"));
    this.call.on("error", () => this.stop("stream error"));
  }

  private onMessage(m: ProcessingRequest): void {
    if (this.phase === "over") return;
    switch (m.request) {
      case "request_headers":
        return this.onRequestHeaders(m, m.request_headers ?? {});
      case "request_body":
        return this.onRequestBody(m.request_body ?? {});
      case "request_trailers":
        return this.onRequestTrailers();
      case "response_headers":
        return this.onResponseHeaders(m, m.response_headers ?? {});
      case "response_body":
        return this.onResponseBody(m.response_body ?? {});
      case "response_trailers":
        return this.onResponseTrailers();
      default:
        return this.fail(
          grpc.status.INVALID_ARGUMENT,
          "a ProcessingRequest without request headers, body or trailers",
        );
    }
  }

  private onRequestHeaders(m: ProcessingRequest, h: HttpHeaders): void {
    if (!this.expect("request-headers", "request headers")) return;
    const modes = m.protocol_config;
    const unsupported = unsupportedBodyModes(modes);
    if (unsupported) return this.fail(grpc.status.FAILED_PRECONDITION, unsupported);
    this.headers = headerRecord(h.headers);
    if (!this.headers["x-request-id"]) {
      this.generatedRequestId = randomUUID();
      this.headers["x-request-id"] = this.generatedRequestId;
    }
    this.subset = readSubset(m.metadata_context);
    // With request_body_mode NONE Envoy sends no body even when the request has one.
    if (h.end_of_stream || modes?.request_body_mode === BodySendMode.NONE) this.decide();
    else this.phase = "request-body";
  }

  private onRequestBody(b: HttpBody): void {
    if (!this.expect("request-body", "a request body chunk")) return;
    this.sawBody = true;
    const chunk = Buffer.from(b.body ?? []);
    this.bodyBytes += chunk.length;
    if (this.bodyBytes > this.options.maxBodyBytes) {
      return this.answer({
        status: 413,
        code: "request_too_large",
        message: `the request body exceeds the endpoint picker's limit of ${this.options.maxBodyBytes} bytes`,
      });
    }
    this.chunks.push(chunk);
    if (b.end_of_stream) this.decide();
  }

  private onRequestTrailers(): void {
    if (!this.expect("request-body", "request trailers")) return;
    this.sawTrailers = true;
    this.decide();
  }

  /** Asks the picker; a bug past the picker still ends the stream (INTERNAL) instead of hanging it. */
  private decide(): void {
    this.phase = "deciding";
    this.decideAndAnswer().catch((err) => {
      if (this.phase !== "over")
        this.fail(grpc.status.INTERNAL, `epp: ${err instanceof Error ? err.message : err}`);
    });
  }

  private async decideAndAnswer(): Promise<void> {
    const body = Buffer.concat(this.chunks);
    this.chunks.length = 0;
    let decision: EppDecision;
    try {
      decision = await this.options.picker.decide(
        { headers: this.headers, body, subset: this.subset },
        this.abort.signal,
      );
    } catch (err) {
      if (this.phase !== "deciding") return; // the stream ended first; the rejection is its abort
      const reason = err instanceof Error ? err.message : String(err);
      return this.answer({
        status: 500,
        code: "internal_error",
        message: `the endpoint picker failed: ${reason}`,
      });
    }
    if (this.phase !== "deciding") {
      if (decision?.kind === "route") callDone(decision, null, null);
      return;
    }
    if (decision?.kind === "refuse") return this.answer(decision);
    if (decision?.kind !== "route") {
      return this.answer({
        status: 500,
        code: "internal_error",
        message: "the endpoint picker returned no decision",
      });
    }
    this.route(decision, body);
  }

  private route(decision: Route, body: Buffer): void {
    const checked = checkRoute(decision, this.subset);
    if ("error" in checked) {
      callDone(decision, null, null);
      return this.answer({ status: 500, code: "internal_error", message: checked.error });
    }
    const set: Record<string, string> = { ...checked.headers, [DESTINATION_HEADER]: checked.endpoints[0]! };
    if (this.sawBody) set["content-length"] = String(body.length);
    if (this.generatedRequestId) set["x-request-id"] = this.generatedRequestId;
    this.pending = decision;
    this.phase = "routed";
    this.send(routedHeadersReply(set, destinationMetadata(checked.endpoints)));
    if (this.sawBody) for (const r of bodyReplies("request", body, !this.sawTrailers)) this.send(r);
    if (this.sawTrailers) this.send(trailersReply("request"));
  }

  private onResponseHeaders(m: ProcessingRequest, h: HttpHeaders): void {
    if (!this.expect("routed", "response headers")) return;
    this.phase = "response";
    this.send(continueHeadersReply("response"));
    const status = Number.parseInt(headerRecord(h.headers)[":status"] ?? "", 10);
    this.served = readServed(m.metadata_context);
    this.status = Number.isFinite(status) ? status : null;
    this.hook((r) => r.responseStarted?.(this.served, this.status));
    if (h.end_of_stream) this.report(this.served, this.status);
  }

  private onResponseBody(b: HttpBody): void {
    if (!this.expect("response", "a response body chunk")) return;
    const chunk = Buffer.from(b.body ?? []);
    const end = b.end_of_stream ?? false;
    this.send(bodyChunkReply("response", chunk, end));
    this.hook((r) => r.responseBody?.(chunk, end));
    if (end) this.report(this.served, this.status);
  }

  private onResponseTrailers(): void {
    if (!this.expect("response", "response trailers")) return;
    this.send(trailersReply("response"));
    this.report(this.served, this.status);
  }

  /** Calls a hook of the pending route; its throw is the picker's accounting failing, not the stream's. */
  private hook(f: (r: Route) => void): void {
    if (!this.pending) return;
    try {
      f(this.pending);
    } catch {
      // No one on this stream to tell.
    }
  }

  /** Envoy half-closed: at the end of the response, or early when the request went away. */
  private onHalfClose(): void {
    this.stop("ended early");
    if (!this.call.writableEnded) this.call.end();
  }

  /** Ends the request at Envoy with an ImmediateResponse, and the stream with it. */
  private answer(r: Refusal): void {
    this.phase = "over";
    this.send(immediateReply(r));
    this.call.end();
  }

  /** Whether the message fits the phase; if not, ends the stream with INVALID_ARGUMENT. */
  private expect(phase: Phase, what: string): boolean {
    if (this.phase === phase) return true;
    this.fail(grpc.status.INVALID_ARGUMENT, `${what} arrived while the exchange was at ${this.phase}`);
    return false;
  }

  private fail(code: grpc.status, details: string): void {
    this.stop(details);
    this.call.emit("error", { code, details });
  }

  /** The exchange is over: abort a pending decision, and report a routed one that was never served. */
  private stop(reason: string): void {
    if (this.phase === "over") return;
    const deciding = this.phase !== "routed" && this.phase !== "response";
    this.phase = "over";
    if (deciding) this.abort.abort(new Error(`ext_proc stream ${reason}`));
    this.report(this.served, this.status);
  }

  private report(served: string | null, status: number | null): void {
    const route = this.pending;
    this.pending = null;
    if (route) callDone(route, served, status);
  }

  /** Writes a reply; while the transport is full, stops reading Envoy's messages (backpressure). */
  private send(reply: ProcessingResponse): void {
    if (this.call.destroyed || this.call.writableEnded) return;
    if (this.call.write(reply) || this.waitingForDrain) return;
    this.waitingForDrain = true;
    this.call.pause();
    this.call.once("drain", () => {
      this.waitingForDrain = false;
      this.call.resume();
    });
  }
}

/** Why Envoy's body modes (protocol_config, sent by newer Envoys) cannot work with this server, or null. */
function unsupportedBodyModes(modes: ProtocolConfiguration | null | undefined): string | null {
  if (!modes) return null;
  const request = modes.request_body_mode ?? BodySendMode.NONE;
  const response = modes.response_body_mode ?? BodySendMode.NONE;
  if (DUPLEX_OR_NONE.includes(request) && DUPLEX_OR_NONE.includes(response)) return null;
  return `tokengate epp needs body modes FULL_DUPLEX_STREAMED (4) or NONE (0); Envoy is configured with request ${request}, response ${response}`;
}

/**
 * Calls a route's done(). Each exchange calls it at most once (pending is cleared first); a throw is the
 * picker's own accounting failing and must not break Envoy's stream.
 */
function callDone(route: Route, served: string | null, status: number | null): void {
  try {
    route.done(served, status);
  } catch {
    // No one on this stream to tell.
  }
}
