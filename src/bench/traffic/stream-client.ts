// A light streaming OpenAI client for load generation: undici request, SSE scanned for data frames as
// bytes arrive, TTFT taken at the first content token. Lighter than the openai SDK, so one load
// generator process can drive hundreds of streams without measuring itself.

import { Agent, request } from "undici";
import { SseData } from "./sse-data.js";

export interface StreamResult {
  status: number;
  /** ms from send to the first frame carrying content; NaN when none came. */
  ttftMs: number;
  e2eMs: number;
  contentFrames: number;
  promptTokens: number | null;
  completionTokens: number | null;
  cachedTokens: number | null;
  /** Set when the request failed (HTTP error, error event, connection error, missing [DONE]). */
  error: string | null;
  headers: Record<string, string | string[] | undefined>;
  trailers: Record<string, string>;
  /** The generated text, when asked for (`captureText`): multi-turn replays send it back. */
  text: string | null;
}

export interface SendOptions {
  agent?: Agent;
  headers?: Record<string, string>;
  path?: string;
  signal?: AbortSignal;
  captureText?: boolean;
}

export function makeAgent(connections = 512): Agent {
  return new Agent({
    connections,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
}

const CONTENT = /"(?:content|text)":"(?:[^"\\]|\\.)/;

function emptyResult(): StreamResult {
  return {
    text: null,
    status: 0,
    ttftMs: Number.NaN,
    e2eMs: Number.NaN,
    contentFrames: 0,
    promptTokens: null,
    completionTokens: null,
    cachedTokens: null,
    error: null,
    headers: {},
    trailers: {},
  };
}

function post(url: string, payload: string, opts: SendOptions) {
  return request(url, {
    method: "POST",
    dispatcher: opts.agent,
    headers: { "content-type": "application/json", ...opts.headers },
    body: payload,
    signal: opts.signal,
  });
}

/** Sends one non-streaming completion; `ttftMs` is NaN (the reply comes whole). Never throws. */
export async function sendCompletion(
  baseUrl: string,
  body: Record<string, unknown>,
  opts: SendOptions = {},
): Promise<StreamResult> {
  const path = opts.path ?? (body.messages ? "/v1/chat/completions" : "/v1/completions");
  const t0 = performance.now();
  const out = emptyResult();
  try {
    const res = await post(`${baseUrl}${path}`, JSON.stringify({ ...body, stream: false }), opts);
    out.status = res.statusCode;
    out.headers = res.headers;
    const text = await res.body.text();
    if (res.statusCode !== 200) {
      out.error = `HTTP ${res.statusCode}: ${text.slice(0, 300)}`;
    } else {
      const parsed = JSON.parse(text) as {
        usage?: {
          prompt_tokens: number;
          completion_tokens: number;
          prompt_tokens_details?: { cached_tokens?: number };
        };
        choices?: { message?: { content?: string }; text?: string }[];
      };
      if (opts.captureText)
        out.text = parsed.choices?.[0]?.message?.content ?? parsed.choices?.[0]?.text ?? "";
      const u = parsed.usage;
      out.promptTokens = u?.prompt_tokens ?? null;
      out.completionTokens = u?.completion_tokens ?? null;
      out.cachedTokens = u?.prompt_tokens_details?.cached_tokens ?? null;
      out.contentFrames = out.completionTokens ?? 0;
    }
  } catch (err) {
    out.error = `${(err as Error).name}: ${(err as Error).message}`;
  }
  out.e2eMs = performance.now() - t0;
  return out;
}

/**
 * Sends one streaming completion (chat when `body.messages` is set) and measures it.
 * `path` defaults by body shape. Never throws: failures are returned in `error`.
 */
export async function streamCompletion(
  baseUrl: string,
  body: Record<string, unknown>,
  opts: SendOptions = {},
): Promise<StreamResult> {
  const path = opts.path ?? (body.messages ? "/v1/chat/completions" : "/v1/completions");
  const t0 = performance.now();
  const out = emptyResult();
  try {
    const res = await post(
      `${baseUrl}${path}`,
      JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
      opts,
    );
    out.status = res.statusCode;
    out.headers = res.headers;
    if (res.statusCode !== 200) {
      const text = await res.body.text();
      out.error = `HTTP ${res.statusCode}: ${text.slice(0, 300)}`;
      out.e2eMs = performance.now() - t0;
      return out;
    }
    const sse = new SseData();
    let done = false;
    for await (const chunk of res.body) {
      for (const data of sse.push(chunk as Buffer)) {
        if (data === "[DONE]") {
          done = true;
          continue;
        }
        if (data.startsWith('{"error"')) {
          out.error = `stream error: ${data.slice(0, 300)}`;
          continue;
        }
        if (CONTENT.test(data)) {
          if (out.contentFrames === 0) out.ttftMs = performance.now() - t0;
          out.contentFrames++;
          if (opts.captureText) {
            const c = (JSON.parse(data) as { choices: { delta?: { content?: string }; text?: string }[] })
              .choices[0];
            out.text = (out.text ?? "") + (c?.delta?.content ?? c?.text ?? "");
          }
        } else if (data.includes('"usage":{')) {
          const u = JSON.parse(data).usage as {
            prompt_tokens: number;
            completion_tokens: number;
            prompt_tokens_details?: { cached_tokens?: number };
          };
          out.promptTokens = u.prompt_tokens;
          out.completionTokens = u.completion_tokens;
          out.cachedTokens = u.prompt_tokens_details?.cached_tokens ?? null;
        }
      }
    }
    out.trailers = res.trailers as Record<string, string>;
    if (!done && !out.error) out.error = "stream ended without [DONE]";
  } catch (err) {
    out.error = `${(err as Error).name}: ${(err as Error).message}`;
  }
  out.e2eMs = performance.now() - t0;
  return out;
}
