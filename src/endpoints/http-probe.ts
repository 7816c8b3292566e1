// One monitoring GET (a /metrics scrape, a health check or a read of /v1/models) with a hard deadline, on the monitor's own
// dispatcher so probes never queue behind request traffic or take its connections.

import type { Dispatcher } from "undici";

/** Ask for the classic text format; OpenMetrics or protobuf would need another parser. */
const METRICS_ACCEPT = "text/plain;version=0.0.4;q=1,*/*;q=0.1";

export class ProbeTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = "ProbeTimeoutError";
  }
}

export interface ProbeResult {
  status: number;
  /** The body of a 2xx answer when asked for; otherwise drained and null. */
  body: string | null;
}

/**
 * GETs `origin + path`, aborting through `controller` after `timeoutMs`. The caller owns the controller
 * so it can also abort when the monitor stops or the endpoint is removed.
 */
export async function probe(
  dispatcher: Dispatcher,
  origin: string,
  path: string,
  controller: AbortController,
  timeoutMs: number,
  readBody: boolean,
  headers: Record<string, string> = readBody ? { accept: METRICS_ACCEPT } : {},
): Promise<ProbeResult> {
  const timer = setTimeout(() => controller.abort(new ProbeTimeoutError(timeoutMs)), timeoutMs);
  try {
    const res = await dispatcher.request({
      origin,
      path,
      method: "GET",
      signal: controller.signal,
      headers,
    });
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    if (readBody && ok) return { status: res.statusCode, body: await res.body.text() };
    await res.body.dump();
    return { status: res.statusCode, body: null };
  } finally {
    clearTimeout(timer);
  }
}

/** A short reason for logs and snapshots: `timeout: …`, `ECONNREFUSED: …`, or the error's message. */
export function describeProbeError(err: unknown, signal: AbortSignal): string {
  const cause = signal.aborted ? signal.reason : err;
  if (cause instanceof ProbeTimeoutError) return `timeout: ${cause.message}`;
  const e = cause as { code?: unknown; message?: unknown; cause?: { code?: unknown } };
  const code = typeof e?.code === "string" ? e.code : typeof e?.cause?.code === "string" ? e.cause.code : "";
  const message = typeof e?.message === "string" ? e.message : String(cause);
  return code !== "" && !message.includes(code) ? `${code}: ${message}` : message;
}
