// One attempt to serve a request from one engine endpoint: send it with undici, and either hand the
// caller a retryable failure (nothing has reached the client yet) or relay the reply — streaming frame
// by frame, or the whole body — while watching connect, first-byte, idle and total deadlines and the
// client going away.
//
// The attempt is an undici dispatch handler rather than a `request()` call: no response stream, async
// iterator, AbortController or signal listener per request, and one timer watches every deadline. At
// 1,000 requests/s those objects were a large part of the gateway's allocation and of its GC pauses.

import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { type Dispatcher, errors as undiciErrors } from "undici";
import { errorEvent, refusalEvent } from "./error-events.js";
import { type EngineTiming, parseServerTiming } from "./server-timing.js";
import { SseRelay } from "./sse-relay.js";
import { type StreamUsage, usageOf } from "./usage.js";

export interface AttemptPlan {
  url: string;
  path: string;
  body: Buffer;
  stream: boolean;
  /** The caller asked for the usage chunk; otherwise the gateway strips the one it asked for itself. */
  clientWantsUsage: boolean;
  /** Headers added to the client response once it starts. */
  responseHeaders: Record<string, string>;
  traceId: string;
  /** Sent to the engine besides content-type and x-request-id: its key, the trace context. */
  upstreamHeaders: Record<string, string>;
  timeouts: { firstByteMs: number; idleMs: number; totalMs: number };
  /** Streams: called when the first generated text passes to the client. */
  onFirstToken?: (() => void) | null;
  /** Called just before the attempt first writes to the client (a stream heartbeat stops then). */
  beforeFirstWrite?: (() => void) | null;
}

export type AttemptOutcome =
  | {
      kind: "done";
      status: number;
      usage: StreamUsage | null;
      timing: EngineTiming;
      /** performance.now() of the first content token (streams) or of the response (non-streaming). */
      firstTokenAt: number;
      /** The reply started but did not finish cleanly (mid-stream failure); the client was told. */
      brokenMidStream: string | null;
      /** The engine refused the request (4xx), passed on to the client as it was. */
      upstreamClientError: boolean;
    }
  | {
      kind: "retryable";
      /** `adapter`: the LoRA adapter could not be registered on the engine (forward.ts), nothing sent. */
      reason: "connect" | "timeout" | "status" | "reset" | "adapter";
      status: number | null;
      detail: string;
      /** An engine's 429/503 Retry-After, in seconds; null when it gave none. */
      retryAfterSeconds?: number | null;
    }
  /** `firstTokenAt`: when a stream's first content token passed, NaN if none did. */
  | { kind: "cancelled"; started: boolean; firstTokenAt: number }
  | { kind: "timeout_after_start"; detail: string }
  /** The whole-exchange deadline passed before any byte: retrying would only start the clock again. */
  | { kind: "total_timeout"; detail: string };

/**
 * What the attempt needs to know of the client leaving (an AbortSignal will do): whether it left, and
 * why. It learns of the moment itself from the response's "close".
 */
export interface ClientGone {
  readonly aborted: boolean;
  readonly reason?: unknown;
}

/** Which deadline fired; passed to undici's abort, so it is also the error the attempt ends with. */
class Deadline extends Error {
  constructor(readonly which: "first_byte" | "idle" | "total") {
    super(`${which} timeout`);
  }
}

/** At most this much of an engine's error reply (5xx, 429) is kept for the log. */
const ERROR_DETAIL_BYTES = 2000;

export function attemptUpstream(
  dispatcher: Dispatcher,
  plan: AttemptPlan,
  res: ServerResponse,
  clientGone: ClientGone,
): Promise<AttemptOutcome> {
  if (clientGone.aborted)
    return Promise.resolve({ kind: "cancelled", started: false, firstTokenAt: Number.NaN });
  return new Promise<AttemptOutcome>((resolve) => {
    const attempt = new Attempt(plan, res, clientGone, resolve);
    dispatcher.dispatch(
      {
        origin: plan.url,
        path: plan.path,
        method: "POST",
        headers: {
          ...plan.upstreamHeaders,
          "content-type": "application/json",
          "x-request-id": plan.traceId,
        },
        body: plan.body,
        headersTimeout: 0,
        bodyTimeout: 0,
      },
      attempt,
    );
  });
}

/**
 * The reply, as undici hands it over: `collect` keeps the whole body (non-streaming replies, engine
 * refusals, and error replies that make the attempt retryable); `stream` relays SSE frames as they come.
 * Client headers of a stream go out only with its first frame, so a failure before it can still be
 * retried elsewhere; after it, a failure ends the stream with an error event.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  /** Why the attempt was aborted (a deadline or the client leaving); undici then reports an error. */
  private reason: Error | null = null;
  private settled = false;
  private clientLeft = false;
  /** Whether the client response has started (headers sent). */
  private started = false;
  private mode: "waiting" | "retry_status" | "collect" | "stream" = "waiting";
  private status = 0;
  private headers: IncomingHttpHeaders | null = null;
  private chunks: Buffer[] = [];
  private size = 0;
  private relay: SseRelay | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly totalAt: number;
  /** Streams only, until their first frame. */
  private readonly firstByteAt: number;
  /** Streams: the idle deadline counts from here (the reply's headers, then each chunk once started). */
  private lastDataAt = Number.NaN;

  constructor(
    private readonly plan: AttemptPlan,
    private readonly res: ServerResponse,
    private readonly clientGone: ClientGone,
    private readonly resolve: (o: AttemptOutcome) => void,
  ) {
    const now = performance.now();
    this.totalAt = now + plan.timeouts.totalMs;
    // A non-streaming reply's first byte is its last (the engine answers when generation ends), so only
    // streams have a first-byte deadline; a long batch completion is bounded by the total deadline alone.
    this.firstByteAt = plan.stream ? now + plan.timeouts.firstByteMs : Number.POSITIVE_INFINITY;
    this.arm(now);
    res.once("close", this.onClientClose);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.reason) controller.abort(this.reason);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    if (statusCode < 200) return; // 1xx: informational, the reply follows
    this.status = statusCode;
    this.headers = headers;
    if (statusCode >= 500 || statusCode === 429) this.mode = "retry_status";
    else if (!this.plan.stream || statusCode !== 200) this.mode = "collect";
    else {
      this.mode = "stream";
      this.relay = new SseRelay(this.plan.clientWantsUsage, this.plan.onFirstToken ?? null);
      const now = performance.now();
      this.lastDataAt = now;
      // The idle deadline now runs too; re-arm only if it comes before the one the timer waits for.
      if (now + this.plan.timeouts.idleMs < Math.min(this.totalAt, this.firstByteAt)) {
        if (this.timer) clearTimeout(this.timer);
        this.arm(now);
      }
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.mode !== "stream") {
      if (this.mode === "retry_status" && this.size >= ERROR_DETAIL_BYTES) return;
      this.chunks.push(chunk);
      this.size += chunk.length;
      return;
    }
    if (this.started) this.lastDataAt = performance.now();
    const out = this.relay!.push(chunk);
    if (out.length === 0) return;
    const res = this.res;
    if (!this.started) {
      this.started = true;
      this.lastDataAt = performance.now();
      this.plan.beforeFirstWrite?.();
      // A heartbeat may have sent the headers already (without the endpoint's: it was not picked yet).
      if (!res.headersSent)
        res.writeHead(200, {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache",
          ...this.plan.responseHeaders,
        });
    }
    if (!res.write(out)) {
      controller.pause();
      res.once("drain", () => controller.resume());
    }
  }

  onResponseEnd(_controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    if (this.settled) return;
    if (this.mode === "retry_status") {
      this.settleRefused();
      return;
    }
    if (this.mode === "stream") {
      const relay = this.relay!;
      if (!this.started) {
        this.failBeforeStart(new Error("upstream stream ended before any frame"));
        return;
      }
      this.finishStream(
        relay.sawDone || relay.upstreamError ? null : "the engine ended the stream without [DONE]",
        trailers,
      );
      return;
    }
    const body = this.body();
    const firstTokenAt = performance.now();
    const status = this.status;
    const res = this.res;
    if (res.destroyed) {
      this.settle({ kind: "cancelled", started: false, firstTokenAt: Number.NaN });
      return;
    }
    const headers = this.headers!;
    this.started = true;
    this.plan.beforeFirstWrite?.();
    if (res.headersSent) {
      // A stream whose heartbeat answered 200 already: the engine's refusal is its only event.
      res.end(refusalEvent(status, body, this.plan.traceId));
    } else {
      res.writeHead(status, {
        "content-type": String(headers["content-type"] ?? "application/json"),
        "content-length": String(body.length),
        ...this.plan.responseHeaders,
      });
      res.end(body);
    }
    this.settle({
      kind: "done",
      status,
      usage: status === 200 ? usageOf(body) : null,
      timing: parseServerTiming(headers["server-timing"]),
      firstTokenAt,
      brokenMidStream: null,
      upstreamClientError: status >= 400,
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    if (this.settled) return;
    if (this.clientLeft || this.clientGone.aborted) {
      this.settle({
        kind: "cancelled",
        started: this.started,
        firstTokenAt: this.relay?.firstContentAt ?? Number.NaN,
      });
      return;
    }
    const reason = this.reason;
    if (this.mode === "retry_status") {
      // The engine already refused; what it said is only detail, however much of it arrived.
      this.settleRefused();
      return;
    }
    if (!this.started) {
      this.failBeforeStart(reason ?? err);
      return;
    }
    // Only a stream can fail after it started: its client already has frames, so it gets an error event.
    if (reason instanceof Deadline) this.finishStream(`the engine stalled: ${reason.message}`, null);
    else if (this.res.destroyed) this.finishStream(null, null);
    else {
      const code = (err as Error & { code?: string }).code ?? err.message;
      this.finishStream(`the engine connection failed mid-stream: ${code}`, null);
    }
  }

  /** Nothing reached the client: a retry elsewhere is still possible, except past the total deadline. */
  private failBeforeStart(err: Error): void {
    if (err instanceof Deadline) {
      this.settle(
        err.which === "total"
          ? { kind: "total_timeout", detail: err.message }
          : { kind: "retryable", reason: "timeout", status: null, detail: err.message },
      );
      return;
    }
    const e = err as Error & { code?: string };
    const connect = e instanceof undiciErrors.ConnectTimeoutError || e.code === "ECONNREFUSED";
    this.settle({
      kind: "retryable",
      reason: connect ? "connect" : "reset",
      status: null,
      detail: `${e.code ?? e.name}: ${e.message}`,
    });
  }

  /** `broken`: why the stream did not finish cleanly; the client gets an error event for it. */
  private finishStream(broken: string | null, trailers: IncomingHttpHeaders | null): void {
    const relay = this.relay!;
    const res = this.res;
    if (!res.destroyed) {
      const rest = relay.rest();
      if (rest.length > 0) res.write(rest);
      if (broken) res.write(errorEvent(broken, this.plan.traceId));
      res.end();
    }
    this.settle({
      kind: "done",
      status: 200,
      usage: relay.usage,
      timing: parseServerTiming(trailers?.["server-timing"]),
      firstTokenAt: relay.firstContentAt,
      // An error event from the engine itself was relayed as it came; it still marks the stream broken.
      brokenMidStream: broken ?? relay.upstreamError,
      upstreamClientError: false,
    });
  }

  /** The engine answered with a retryable status: retry elsewhere, with what it said as detail. */
  private settleRefused(): void {
    const detail = this.body().toString("utf8", 0, ERROR_DETAIL_BYTES);
    this.settle({
      kind: "retryable",
      reason: "status",
      status: this.status,
      detail: `HTTP ${this.status}: ${detail}`,
      retryAfterSeconds: retryAfterOf(this.headers?.["retry-after"]),
    });
  }

  private settle(outcome: AttemptOutcome): void {
    if (this.settled) return;
    this.settled = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.res.removeListener("close", this.onClientClose);
    this.chunks = [];
    this.resolve(outcome);
  }

  private body(): Buffer {
    const c = this.chunks;
    return c.length === 1 ? c[0]! : Buffer.concat(c, this.size);
  }

  private abort(reason: Error): void {
    if (this.reason) return;
    this.reason = reason;
    // Before undici starts the request (it may wait for a connection) the abort happens at its start.
    this.controller?.abort(reason);
  }

  private readonly onClientClose = (): void => {
    if (this.settled || this.res.writableFinished) return;
    this.clientLeft = true;
    this.abort((this.clientGone.reason as Error | undefined) ?? new Error("client disconnected"));
  };

  /** One timer for every deadline, set for the nearest; chunks only move `lastDataAt`. */
  private arm(now: number): void {
    let at = this.totalAt;
    if (!this.started) at = Math.min(at, this.firstByteAt);
    if (this.mode === "stream") at = Math.min(at, this.lastDataAt + this.plan.timeouts.idleMs);
    this.timer = setTimeout(this.onTimer, Math.max(1, Math.ceil(at - now)));
  }

  private readonly onTimer = (): void => {
    this.timer = null;
    if (this.settled) return;
    const now = performance.now();
    if (now >= this.totalAt) return this.abort(new Deadline("total"));
    if (!this.started && now >= this.firstByteAt) return this.abort(new Deadline("first_byte"));
    if (this.mode === "stream" && now >= this.lastDataAt + this.plan.timeouts.idleMs)
      return this.abort(new Deadline("idle"));
    this.arm(now);
  };
}

/** Retry-After as seconds: a number of seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterOf(v: string | string[] | undefined, now = Date.now()): number | null {
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined || s.trim() === "") return null;
  if (/^\d+$/.test(s.trim())) return Number(s.trim());
  const at = Date.parse(s);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}
