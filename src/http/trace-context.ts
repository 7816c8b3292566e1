// W3C Trace Context (https://www.w3.org/TR/trace-context/): the caller's `traceparent` is continued, or
// a trace is started here, and the engine is sent a `traceparent` whose parent is the gateway's own
// span, with the caller's `tracestate` as it came — so vLLM's OpenTelemetry spans join the caller's trace.
// The request's trace id (log line, `x-ai-trace-id`) is X-AI-Trace-Id when given, else the W3C trace id.

import { randomBytes } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

export interface TraceContext {
  /** 32 lowercase hex digits. */
  readonly traceId: string;
  /** The gateway's span: the parent-id the engine is sent (16 hex digits). */
  readonly spanId: string;
  /** `01` sampled, `00` not; a trace started here is sampled. */
  readonly flags: string;
  readonly tracestate: string | null;
  /** Whether the caller sent a valid traceparent. */
  readonly continued: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

// Ids from a random per-process prefix and a counter: unique, and one random draw per process rather
// than one per request (a randomBytes call per request showed at 7% of a simulated engine's CPU).
const PROCESS_ID = randomBytes(12).toString("hex");
let counter = 0;

function nextHex(digits: number): string {
  counter = (counter + 1) >>> 0;
  const c = counter.toString(16).padStart(8, "0");
  return (PROCESS_ID + c).slice(-digits);
}

/** The trace this request belongs to, continued from the caller's headers or started now. */
export function traceContextFrom(headers: IncomingHttpHeaders): TraceContext {
  const spanId = nextHex(16);
  const given = headers.traceparent;
  const m = typeof given === "string" ? TRACEPARENT.exec(given.trim().toLowerCase()) : null;
  // Version ff is invalid; version 00 has no suffix; later versions may add fields (kept parseable).
  if (
    m &&
    m[1] !== "ff" &&
    !(m[1] === "00" && m[5] !== undefined) &&
    m[2] !== ZERO_TRACE &&
    m[3] !== ZERO_SPAN
  ) {
    const state = headers.tracestate;
    const tracestate = typeof state === "string" && state.length <= 512 ? state : null;
    return { traceId: m[2]!, spanId, flags: m[4]!, tracestate, continued: true };
  }
  return { traceId: nextHex(32), spanId, flags: "01", tracestate: null, continued: false };
}

/** The `traceparent` sent to the engine: the same trace, the gateway's span as the parent. */
export function traceparentOf(ctx: TraceContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${ctx.flags}`;
}

const TRACE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's X-AI-Trace-Id if it is a sane token, else the W3C trace id. */
export function traceIdFrom(headers: IncomingHttpHeaders, w3cTraceId: string): string {
  const given = headers["x-ai-trace-id"];
  if (typeof given === "string" && TRACE_ID.test(given)) return given;
  return w3cTraceId;
}
