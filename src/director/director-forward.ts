// The L7 front door's one attempt: the request, as the caller sent it (hop-by-hop headers removed), sent
// to a region's gateway, and the reply relayed intact — status, headers and body, a stream chunk by chunk
// as it comes (never buffered), with the director's region and reason added. Until the reply's first byte
// reaches the client, a failure is the caller's to retry elsewhere; after it, only the client learns.

import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import type { Dispatcher } from "undici";

/** Headers that describe one connection, not the message: never passed on (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** The region's gateway has its own deadlines; these only keep a region that stopped answering from holding a request forever. */
const HEADERS_TIMEOUT_MS = 600_000;
const IDLE_TIMEOUT_MS = 300_000;

/** A 5xx that is retried elsewhere is read (this much) and dropped. */
const DROPPED_BODY_BYTES = 64 * 1024;

export interface RegionAttempt {
  readonly region: string;
  /** The region's gateway, `http://host:port` (a base path, if any, is kept). */
  readonly gatewayUrl: string;
  readonly reason: string;
}

export interface ForwardRequest {
  readonly method: string;
  /** The path and query as the caller sent them. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  readonly traceId: string;
}

export type AttemptResult =
  /** The region answered and the reply was relayed (a 4xx too); `broken`: it was cut after it started. */
  | { readonly kind: "relayed"; readonly status: number; readonly broken: string | null }
  /** Nothing reached the client: connect failure, or a 5xx the caller chose to retry (`status`). */
  | { readonly kind: "failed"; readonly why: string; readonly status: number | null }
  /** The region took the request and did not answer in time; nothing reached the client, not retried. */
  | { readonly kind: "timeout"; readonly why: string }
  | { readonly kind: "cancelled" };

/** The headers the region is sent: the caller's, less hop-by-hop ones, Host and Content-Length. */
export function upstreamHeaders(
  headers: IncomingHttpHeaders,
  traceId: string,
): Record<string, string | string[]> {
  const drop = connectionTokens(headers.connection);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || drop.has(name)) continue;
    if (name === "host" || name === "content-length" || name === "expect") continue;
    out[name] = value;
  }
  // The region's log line then carries the director's trace id.
  out["x-ai-trace-id"] ??= traceId;
  return out;
}

/** The reply's headers for the client: the region's, less hop-by-hop ones, and the director's. */
function clientHeaders(headers: IncomingHttpHeaders, at: RegionAttempt): Record<string, string | string[]> {
  const drop = connectionTokens(headers.connection);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || drop.has(name)) continue;
    out[name] = value;
  }
  out["x-ai-director-region"] = at.region;
  out["x-ai-director-reason"] = at.reason;
  return out;
}

function connectionTokens(value: string | string[] | undefined): Set<string> {
  const v = Array.isArray(value) ? value.join(",") : (value ?? "");
  return new Set(
    v
      .split(",")
      .map((t) => t.trim().toLowerCase())
      .filter((t) => t !== ""),
  );
}

/** The origin to connect to and the path to ask for, from the region's gateway URL and the caller's path. */
export function targetOf(gatewayUrl: string, url: string): { origin: string; path: string } {
  const u = new URL(gatewayUrl);
  const base = u.pathname.replace(/\/+$/, "");
  return { origin: u.origin, path: `${base}${url}` };
}

/**
 * One attempt on one region. A 5xx is relayed like any reply unless `retryStatus(status)` says the
 * caller will try elsewhere (it is asked once, before anything is written), in which case the reply is
 * dropped and the attempt `failed`.
 */
export async function attemptRegion(
  dispatcher: Dispatcher,
  at: RegionAttempt,
  req: ForwardRequest,
  res: ServerResponse,
  retryStatus: (status: number) => boolean,
): Promise<AttemptResult> {
  if (res.destroyed) return { kind: "cancelled" };
  const abort = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) abort.abort(new Error("the client went away"));
  };
  res.once("close", onClose);
  try {
    let reply: Dispatcher.ResponseData;
    try {
      reply = await dispatcher.request({
        path: targetOf(at.gatewayUrl, req.url).path,
        method: req.method as Dispatcher.HttpMethod,
        headers: upstreamHeaders(req.headers, req.traceId),
        body: req.body,
        signal: abort.signal,
        headersTimeout: HEADERS_TIMEOUT_MS,
        bodyTimeout: IDLE_TIMEOUT_MS,
      });
    } catch (err) {
      if (abort.signal.aborted) return { kind: "cancelled" };
      const e = err as Error & { code?: string };
      if (e.code === "UND_ERR_HEADERS_TIMEOUT")
        return { kind: "timeout", why: `no reply within ${HEADERS_TIMEOUT_MS} ms` };
      return { kind: "failed", why: e.code ? `${e.code}: ${e.message}` : e.message, status: null };
    }
    if (reply.statusCode >= 500 && retryStatus(reply.statusCode)) {
      await reply.body.dump({ limit: DROPPED_BODY_BYTES }).catch(() => {});
      return { kind: "failed", why: `status ${reply.statusCode}`, status: reply.statusCode };
    }
    res.writeHead(reply.statusCode, clientHeaders(reply.headers, at));
    // Which side broke: the region's body erring first is a cut stream; the client leaving is not.
    let cut: Error | null = null;
    reply.body.once("error", (err: Error) => {
      if (!abort.signal.aborted) cut = err;
    });
    try {
      await pipeline(reply.body, res);
    } catch (err) {
      if (cut === null && abort.signal.aborted) return { kind: "cancelled" };
      return { kind: "relayed", status: reply.statusCode, broken: (cut ?? (err as Error)).message };
    }
    return { kind: "relayed", status: reply.statusCode, broken: null };
  } finally {
    res.off("close", onClose);
  }
}
