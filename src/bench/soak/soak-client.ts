// The soak benchmark's client: one chat completion, streaming or not, that may be cancelled on purpose
// (a stream after a given number of text frames, a non-streaming request after a delay, before its
// reply) and is bounded by a timeout of its own. It returns what the classification needs: status,
// the answering endpoint, whether the reply had started, and a failure's code and phase. Never throws.

import { type Agent, request } from "undici";
import { SseData } from "../traffic/sse-data.js";
import { jsonErrorCode, replyErrorCode, type SoakError, type SoakOutcome } from "./soak-classify.js";

export type Cancel = { afterFrames: number } | { afterMs: number } | null;

export interface SoakRequest {
  seq: number;
  stream: boolean;
  body: Record<string, unknown>;
  cancel: Cancel;
}

export interface SoakClientOptions {
  agent: Agent;
  /** performance.now() at the start of the load: outcome times are counted from it. */
  originMs: number;
  /** The request is abandoned (a `client_timeout` failure) after this long. */
  timeoutMs: number;
}

const CONTENT = /"(?:content|text)":"(?:[^"\\]|\\.)/;

class PlannedCancel extends Error {}
class ClientTimeout extends Error {}

export async function sendSoakRequest(
  baseUrl: string,
  req: SoakRequest,
  opts: SoakClientOptions,
): Promise<SoakOutcome> {
  const t0 = performance.now();
  const traceId = `soak-${req.seq}`;
  const out: SoakOutcome = {
    seq: req.seq,
    stream: req.stream,
    startMs: t0 - opts.originMs,
    endMs: Number.NaN,
    status: 0,
    endpoint: null,
    traceId,
    started: false,
    contentFrames: 0,
    ttftMs: Number.NaN,
    cancelled: false,
    error: null,
  };
  const ac = new AbortController();
  const timeout = setTimeout(() => ac.abort(new ClientTimeout("client timeout")), opts.timeoutMs);
  const cancelTimer =
    req.cancel && "afterMs" in req.cancel
      ? setTimeout(() => ac.abort(new PlannedCancel("cancel")), req.cancel.afterMs)
      : null;
  const afterFrames = req.cancel && "afterFrames" in req.cancel ? req.cancel.afterFrames : null;
  const fail = (e: SoakError) => {
    out.error ??= e;
  };
  try {
    const payload = req.stream
      ? { ...req.body, stream: true, stream_options: { include_usage: true } }
      : { ...req.body, stream: false };
    const res = await request(`${baseUrl}/v1/chat/completions`, {
      method: "POST",
      dispatcher: opts.agent,
      headers: { "content-type": "application/json", "x-ai-trace-id": traceId },
      body: JSON.stringify(payload),
      signal: ac.signal,
    });
    out.status = res.statusCode;
    const ep = res.headers["x-ai-endpoint"];
    out.endpoint = typeof ep === "string" ? ep : null;
    if (res.statusCode !== 200) {
      const text = await res.body.text();
      fail({ code: replyErrorCode(res.statusCode, text), phase: "reply", detail: text.slice(0, 300) });
    } else if (!req.stream) {
      out.started = true;
      await res.body.text();
    } else {
      out.started = true;
      const sse = new SseData();
      let done = false;
      for await (const chunk of res.body) {
        for (const data of sse.push(chunk as Buffer)) {
          if (data === "[DONE]") done = true;
          else if (data.startsWith('{"error"'))
            fail({
              code: jsonErrorCode(data) ?? "stream_error",
              phase: "mid_stream",
              detail: data.slice(0, 300),
            });
          else if (CONTENT.test(data)) {
            if (out.contentFrames === 0) out.ttftMs = performance.now() - t0;
            out.contentFrames++;
          }
        }
        if (afterFrames !== null && out.contentFrames >= afterFrames && !done && out.error === null) {
          ac.abort(new PlannedCancel("cancel"));
          break;
        }
      }
      if (!done && !ac.signal.aborted)
        fail({ code: "no_done", phase: "mid_stream", detail: "stream ended without [DONE]" });
    }
  } catch (err) {
    const reason: unknown = ac.signal.aborted ? ac.signal.reason : null;
    if (reason instanceof PlannedCancel) out.cancelled = out.error === null;
    else if (reason instanceof ClientTimeout)
      fail({ code: "client_timeout", phase: "client_timeout", detail: `no end within ${opts.timeoutMs} ms` });
    else {
      const e = err as Error & { code?: string };
      fail({
        code: `connection_${e.code ?? e.name}`,
        phase: out.started ? "mid_stream" : "transport",
        detail: `${e.name}: ${e.message}`.slice(0, 300),
      });
    }
  } finally {
    clearTimeout(timeout);
    if (cancelTimer) clearTimeout(cancelTimer);
  }
  // A stream broken off on purpose leaves the loop without an error.
  if (ac.signal.aborted && ac.signal.reason instanceof PlannedCancel && out.error === null)
    out.cancelled = true;
  out.endMs = performance.now() - opts.originMs;
  return out;
}
