// One attempt to serve a request from one engine endpoint: send it with undici, and either hand the
// caller a retryable failure (nothing has reached the client yet) or relay the reply — streaming frame
// by frame, or the whole body — while watching connect, first-byte, idle and total deadlines and the
// client going away.

import type { ServerResponse } from "node:http";
import { type Dispatcher, errors as undiciErrors } from "undici";
import { type EngineTiming, parseServerTiming } from "./server-timing.js";
import { SseRelay, type StreamUsage } from "./sse-relay.js";

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
  timeouts: { firstByteMs: number; idleMs: number; totalMs: number };
  /** Streams: called when the first generated text passes to the client. */
  onFirstToken?: (() => void) | null;
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
      reason: "connect" | "timeout" | "status" | "reset";
      status: number | null;
      detail: string;
    }
  | { kind: "cancelled"; started: boolean }
  | { kind: "timeout_after_start"; detail: string }
  /** The whole-exchange deadline passed before any byte: retrying would only start the clock again. */
  | { kind: "total_timeout"; detail: string };

/** Thrown into undici's signal to say which deadline fired. */
class Deadline extends Error {
  constructor(readonly which: "first_byte" | "idle" | "total") {
    super(`${which} timeout`);
  }
}

export async function attemptUpstream(
  dispatcher: Dispatcher,
  plan: AttemptPlan,
  res: ServerResponse,
  clientGone: AbortSignal,
): Promise<AttemptOutcome> {
  const ac = new AbortController();
  const onClientGone = () => ac.abort(clientGone.reason);
  if (clientGone.aborted) return { kind: "cancelled", started: false };
  clientGone.addEventListener("abort", onClientGone, { once: true });
  const total = setTimeout(() => ac.abort(new Deadline("total")), plan.timeouts.totalMs);
  // A non-streaming reply's first byte is its last (the engine answers when generation ends), so only
  // streams have a first-byte deadline; a long batch completion is bounded by the total deadline alone.
  let firstByte: NodeJS.Timeout | null = plan.stream
    ? setTimeout(() => ac.abort(new Deadline("first_byte")), plan.timeouts.firstByteMs)
    : null;
  let started = false;
  try {
    const up = await dispatcher.request({
      origin: plan.url,
      path: plan.path,
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": plan.traceId },
      body: plan.body,
      signal: ac.signal,
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    const status = up.statusCode;
    if (status >= 500 || status === 429) {
      const detail = await readText(up.body, 2000);
      return { kind: "retryable", reason: "status", status, detail: `HTTP ${status}: ${detail}` };
    }
    if (!plan.stream || status !== 200) {
      const body = await readAll(up.body);
      if (firstByte) clearTimeout(firstByte);
      firstByte = null;
      const firstTokenAt = performance.now();
      const usage = status === 200 ? usageOf(body) : null;
      if (res.destroyed) return { kind: "cancelled", started: false };
      started = true;
      res.writeHead(status, {
        "content-type": String(up.headers["content-type"] ?? "application/json"),
        ...plan.responseHeaders,
      });
      res.end(body);
      return {
        kind: "done",
        status,
        usage,
        timing: parseServerTiming(up.headers["server-timing"]),
        firstTokenAt,
        brokenMidStream: null,
        upstreamClientError: status >= 400,
      };
    }
    return await relayStream(up, plan, res, ac, clientGone, () => {
      if (firstByte) clearTimeout(firstByte);
      firstByte = null;
      started = true;
    });
  } catch (err) {
    const reason = ac.signal.reason;
    if (clientGone.aborted) return { kind: "cancelled", started };
    if (reason instanceof Deadline) {
      if (started) return { kind: "timeout_after_start", detail: reason.message };
      if (reason.which === "total") return { kind: "total_timeout", detail: reason.message };
      return { kind: "retryable", reason: "timeout", status: null, detail: reason.message };
    }
    const e = err as Error & { code?: string };
    if (started) return { kind: "timeout_after_start", detail: `${e.code ?? e.name}: ${e.message}` };
    const connect = e instanceof undiciErrors.ConnectTimeoutError || e.code === "ECONNREFUSED";
    return {
      kind: "retryable",
      reason: connect ? "connect" : "reset",
      status: null,
      detail: `${e.code ?? e.name}: ${e.message}`,
    };
  } finally {
    clearTimeout(total);
    if (firstByte) clearTimeout(firstByte);
    clientGone.removeEventListener("abort", onClientGone);
  }
}

/**
 * Streams the reply. Client headers go out only with the first upstream frame, so a failure before it
 * can still be retried elsewhere; after it, a failure ends the stream with an error event.
 */
function relayStream(
  up: Dispatcher.ResponseData,
  plan: AttemptPlan,
  res: ServerResponse,
  ac: AbortController,
  clientGone: AbortSignal,
  onStart: () => void,
): Promise<AttemptOutcome> {
  const relay = new SseRelay(plan.clientWantsUsage, plan.onFirstToken ?? null);
  let started = false;
  const idle = setTimeout(() => ac.abort(new Deadline("idle")), plan.timeouts.idleMs);
  idle.unref();
  let idleArmed = false;
  return new Promise<AttemptOutcome>((resolve, reject) => {
    const body = up.body;
    /** `broken`: why the stream did not finish cleanly; the client gets an error event for it. */
    const finish = (broken: string | null) => {
      clearTimeout(idle);
      if (!res.destroyed) {
        const rest = relay.rest();
        if (rest.length > 0) res.write(rest);
        if (broken) res.write(errorEvent(broken, plan.traceId));
        res.end();
      }
      // An error event from the engine itself was relayed as it came; it still marks the stream broken.
      broken ??= relay.upstreamError;
      resolve({
        kind: "done",
        status: 200,
        usage: relay.usage,
        timing: parseServerTiming((up.trailers as Record<string, string> | undefined)?.["server-timing"]),
        firstTokenAt: relay.firstContentAt,
        brokenMidStream: broken,
        upstreamClientError: false,
      });
    };
    body.on("data", (chunk: Buffer) => {
      if (idleArmed) idle.refresh();
      const out = relay.push(chunk);
      if (out.length === 0) return;
      if (!started) {
        started = true;
        idleArmed = true;
        idle.refresh();
        onStart();
        res.writeHead(200, {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache",
          ...plan.responseHeaders,
        });
      }
      if (!res.write(out)) {
        body.pause();
        res.once("drain", () => body.resume());
      }
    });
    body.on("end", () => {
      if (!started) {
        clearTimeout(idle);
        reject(new Error("upstream stream ended before any frame"));
        return;
      }
      finish(relay.sawDone || relay.upstreamError ? null : "the engine ended the stream without [DONE]");
    });
    body.on("error", (err: Error) => {
      if (clientGone.aborted) {
        clearTimeout(idle);
        resolve({ kind: "cancelled", started });
        return;
      }
      if (!started) {
        clearTimeout(idle);
        reject(err);
        return;
      }
      const reason = ac.signal.reason;
      if (reason instanceof Deadline) finish(`the engine stalled: ${reason.message}`);
      else if (res.destroyed) finish(null);
      else
        finish(
          `the engine connection failed mid-stream: ${(err as Error & { code?: string }).code ?? err.message}`,
        );
    });
  });
}

function errorEvent(message: string, traceId: string): string {
  return `data: ${JSON.stringify({
    error: { message, type: "server_error", param: null, code: "upstream_error", trace_id: traceId },
  })}\n\n`;
}

async function readAll(body: Dispatcher.ResponseData["body"]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

async function readText(body: Dispatcher.ResponseData["body"], max: number): Promise<string> {
  try {
    return (await readAll(body)).toString("utf8", 0, max);
  } catch {
    return "";
  }
}

/**
 * The `usage` object of a completion body, parsed on its own rather than with the whole body (which can
 * be long): from `"usage":` to its balanced closing brace. null when absent or malformed.
 */
export function usageOf(body: Buffer): StreamUsage | null {
  const key = body.lastIndexOf('"usage":');
  if (key < 0) return null;
  const start = body.indexOf(0x7b, key); // {
  if (start < 0) return null;
  let depth = 0;
  for (let i = start; i < body.length; i++) {
    const c = body[i];
    if (c === 0x7b) depth++;
    else if (c === 0x7d && --depth === 0) {
      try {
        return JSON.parse(body.toString("utf8", start, i + 1)) as StreamUsage;
      } catch {
        return null;
      }
    }
  }
  return null;
}
