// How a finished or streaming engine request reaches its HTTP client: SSE frames written as tokens
// are sampled (with the stream interval and stall faults), or one JSON body at the end; both report
// the engine's timing in Server-Timing.

import type http from "node:http";
import type { EngineMetrics } from "./engine-metrics.js";
import type { EngineRequest, FinishReason, RequestSink } from "./engine-request.js";
import type { FaultConfig } from "./faults.js";
import type { Framing } from "./framing.js";
import type { ApiKind } from "./openai-request.js";
import type { OutputText } from "./output-text.js";
import { fullResponse, makeUsage, type StreamFrames } from "./responses.js";

/** `Server-Timing` with the engine's view of the request: queue, prefill and decode, in ms. */
export function serverTiming(r: EngineRequest): string {
  const f = (x: number) => (Number.isFinite(x) ? Math.max(0, x).toFixed(1) : "0");
  return (
    `queue;dur=${f(r.firstScheduledAt - r.arrivedAt)}, prefill;dur=${f(r.firstTokenAt - r.firstScheduledAt)}, ` +
    `decode;dur=${f(r.finishedAt - r.firstTokenAt)}`
  );
}

/** What a sink reads of its replica: the metrics it feeds, the faults in force now, its framing. */
export interface SinkReplica {
  readonly metrics: EngineMetrics;
  readonly faults: FaultConfig;
  readonly framing: Framing;
}

export class StreamSink implements RequestSink {
  private stalledFrames: string[] | null = null;
  /** Frames held back by the stream interval. */
  private pending = "";
  private holdForever = false;
  private prevTokenAt = 0;

  constructor(
    private readonly replica: SinkReplica,
    private readonly res: http.ServerResponse,
    private readonly frames: StreamFrames,
    private readonly text: OutputText,
    private readonly includeUsage: boolean,
    private readonly requestId: string,
    private readonly interval: number,
  ) {}

  /** Headers go out at once, as vLLM's streaming response does; timing follows as a trailer. */
  open(): void {
    this.res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-request-id": this.requestId,
      trailer: "Server-Timing",
    });
    this.res.flushHeaders();
  }

  onToken(req: EngineRequest, i: number, finish: FinishReason | null): void {
    if (i > 0) this.replica.metrics.onInterToken(req.lastTokenAt - this.prevTokenAt);
    this.prevTokenAt = req.lastTokenAt;
    let out = i === 0 ? this.frames.roleFrame() : "";
    out += this.frames.tokenFrame(this.text.piece(i), finish);
    const f = this.replica.faults;
    if (this.stalledFrames === null && f.stallAfterTokens !== null && i >= f.stallAfterTokens) {
      this.stalledFrames = [];
      if (f.stallMs === null) this.holdForever = true;
      else setTimeout(() => this.resume(), f.stallMs);
    }
    if (this.stalledFrames) {
      this.stalledFrames.push(out);
    } else if (this.interval > 1 && i > 0 && finish === null && i % this.interval !== 0) {
      this.pending += out;
    } else {
      this.writeChunk(this.pending ? this.pending + out : out);
      this.pending = "";
    }
  }

  /**
   * One HTTP/1.1 chunk straight onto the socket. Every streamed token is one write, and node's
   * ServerResponse.write costs a cork, a nextTick uncork and a three-buffer writev per call; framing the
   * chunk here makes it one plain write. `end()` still goes through the response (last chunk, trailers).
   */
  private writeChunk(data: string): void {
    const socket = this.res.socket;
    if (!socket || this.res.destroyed) return;
    socket.write(`${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`);
  }

  onFinish(req: EngineRequest, reason: FinishReason): void {
    if (reason === "abort") {
      // The client left, or the replica was reset or crashed: nothing more can be said on this stream.
      this.res.destroy();
      return;
    }
    let tail = "";
    if (this.includeUsage) {
      tail += this.frames.usageFrame(makeUsage(req.promptLen, req.outputLen, req.cachedTokens));
    }
    tail += this.frames.done();
    const end = () => {
      if (this.res.destroyed) return;
      this.res.addTrailers({ "Server-Timing": serverTiming(req) });
      this.res.end(tail);
    };
    if (this.stalledFrames) {
      this.stalledFrames.push("");
      this.onResume = this.holdForever ? null : end;
    } else {
      end();
    }
  }

  private onResume: (() => void) | null = null;

  private resume(): void {
    const frames = this.stalledFrames ?? [];
    this.stalledFrames = null;
    const joined = frames.join("");
    if (joined) this.writeChunk(joined);
    this.onResume?.();
  }
}

export class JsonSink implements RequestSink {
  private readonly pieces: string[] = [];

  constructor(
    private readonly replica: SinkReplica,
    private readonly res: http.ServerResponse,
    private readonly kind: ApiKind,
    private readonly id: string,
    private readonly model: string,
    private readonly created: number,
    private readonly text: OutputText,
    private readonly requestId: string,
  ) {}

  onToken(_req: EngineRequest, i: number): void {
    this.pieces.push(this.text.piece(i));
  }

  onFinish(req: EngineRequest, reason: FinishReason): void {
    if (reason === "abort") {
      this.res.destroy();
      return;
    }
    if (this.res.destroyed) return;
    const usage = makeUsage(req.promptLen, req.outputLen, req.cachedTokens);
    const body = fullResponse(
      this.kind,
      this.id,
      this.model,
      this.created,
      this.pieces.join(""),
      reason,
      usage,
      this.replica.framing,
    );
    this.res.writeHead(200, {
      "content-type": "application/json",
      "x-request-id": this.requestId,
      "server-timing": serverTiming(req),
    });
    this.res.end(body);
  }
}
