// The profile stage: from a parsed OpenAI body and the X-AI-* headers, what the router needs to know
// before it routes — alias, task, request class, estimated input tokens, requested output, streaming.
// Bad input is rejected here with the field at fault.

import type { IncomingHttpHeaders } from "node:http";
import { GatewayError } from "../errors/gateway-error.js";
import { type ChatMessageLike, estimateChatTokens, estimateTextTokens } from "./token-estimate.js";

export type ApiKind = "chat" | "completion";

export interface RequestProfile {
  readonly kind: ApiKind;
  /** The parsed body; the forward stage rewrites model and max_tokens in it. */
  readonly body: Record<string, unknown>;
  readonly modelAlias: string;
  readonly task: string | null;
  readonly requestClass: string | null;
  /** Estimated prompt tokens, before the per-model correction. */
  readonly inputTokensRaw: number;
  readonly maxTokens: number | null;
  readonly stream: boolean;
  /** Whether the caller asked for the usage chunk (the gateway always asks upstream). */
  readonly includeUsage: boolean;
}

const LABEL = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

function invalid(message: string, param: string): GatewayError {
  return new GatewayError("invalid_request", message, { param });
}

/**
 * A routing label: the `X-AI-*` header, else the body's `metadata.<key>` (the OpenAI `metadata` map,
 * which callers that cannot set headers use), else a top-level `<key>` (seed 004's sample requests).
 */
function label(
  headers: IncomingHttpHeaders,
  name: string,
  body: Record<string, unknown>,
  key: string,
): string | null {
  const v = headers[name];
  const h = Array.isArray(v) ? v[0] : v;
  if (h !== undefined && h !== "") return checked(h, name);
  const meta = body.metadata;
  const m =
    typeof meta === "object" && meta !== null && !Array.isArray(meta)
      ? (meta as Record<string, unknown>)[key]
      : undefined;
  if (typeof m === "string" && m !== "") return checked(m, `metadata.${key}`);
  const top = body[key];
  if (typeof top === "string" && top !== "") return checked(top, key);
  return null;
}

/**
 * The task and class a request names, read as the profile reads them but never refusing: for a request
 * the plan refused (a rollout stage still sends it to the legacy service). A malformed label is null.
 */
export function routingLabels(
  headers: IncomingHttpHeaders,
  body: unknown,
): { task: string | null; requestClass: string | null } {
  const b =
    typeof body === "object" && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : {};
  const soft = (name: string, key: string) => {
    try {
      return label(headers, name, b, key);
    } catch {
      return null;
    }
  };
  return { task: soft("x-ai-task", "task"), requestClass: soft("x-ai-request-class", "request_class") };
}

function checked(s: string, param: string): string {
  if (!LABEL.test(s)) throw invalid(`${param} must be 1-64 letters, digits, '.', '_', ':' or '-'`, param);
  return s;
}

function optionalPositiveInt(body: Record<string, unknown>, key: string): number | null {
  const v = body[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
    throw invalid(`${key} must be a positive integer, got ${shown(v)}`, key);
  }
  return v;
}

/**
 * A value as an error message shows it: a scalar's JSON, cut short; an array or object by its kind (its
 * JSON could be megabytes, or nested too deeply for JSON.stringify, which then throws a RangeError).
 */
function shown(v: unknown): string {
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object" && v !== null) return "an object";
  // 1e999 parses as Infinity, which JSON.stringify would show as null.
  const s = typeof v === "number" ? String(v) : JSON.stringify(v);
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

function checkMessages(v: unknown): ChatMessageLike[] {
  if (v === undefined || v === null) throw invalid("messages is required", "messages");
  if (!Array.isArray(v) || v.length === 0) throw invalid("messages must be a non-empty array", "messages");
  for (let i = 0; i < v.length; i++) {
    const m = v[i] as Record<string, unknown> | null;
    if (typeof m !== "object" || m === null || Array.isArray(m))
      throw invalid(`messages[${i}] must be an object`, `messages[${i}]`);
    if (typeof m.role !== "string")
      throw invalid(`messages[${i}].role must be a string`, `messages[${i}].role`);
    const c = m.content;
    if (c !== undefined && c !== null && typeof c !== "string" && !Array.isArray(c)) {
      throw invalid(`messages[${i}].content must be a string or an array of parts`, `messages[${i}].content`);
    }
    if (Array.isArray(c)) {
      for (let j = 0; j < c.length; j++) {
        if (!isObject(c[j]) || typeof c[j].type !== "string")
          throw invalid(
            `messages[${i}].content[${j}] must be a content part with a type`,
            `messages[${i}].content[${j}]`,
          );
      }
    }
    if (m.name !== undefined && m.name !== null && typeof m.name !== "string")
      throw invalid(`messages[${i}].name must be a string`, `messages[${i}].name`);
    if (m.tool_calls !== undefined && m.tool_calls !== null)
      checkToolCalls(m.tool_calls, `messages[${i}].tool_calls`);
  }
  return v as ChatMessageLike[];
}

/** The fields of a tool call the estimate reads: `function.name` and `function.arguments`, strings. */
function checkToolCalls(v: unknown, param: string): void {
  if (!Array.isArray(v)) throw invalid(`${param} must be an array`, param);
  for (let j = 0; j < v.length; j++) {
    const call = v[j];
    if (!isObject(call)) throw invalid(`${param}[${j}] must be an object`, `${param}[${j}]`);
    const fn = call.function;
    if (fn === undefined || fn === null) continue;
    if (!isObject(fn)) throw invalid(`${param}[${j}].function must be an object`, `${param}[${j}].function`);
    for (const key of ["name", "arguments"]) {
      const s = fn[key];
      if (s !== undefined && s !== null && typeof s !== "string")
        throw invalid(`${param}[${j}].function.${key} must be a string`, `${param}[${j}].function.${key}`);
    }
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function promptTokens(v: unknown): number {
  if (typeof v === "string") return estimateTextTokens(v);
  if (Array.isArray(v) && v.length > 0) {
    if (v.every((t) => typeof t === "number")) return v.length;
    if (v.length === 1 && typeof v[0] === "string") return estimateTextTokens(v[0]);
  }
  if (v === undefined || v === null) throw invalid("prompt is required", "prompt");
  throw invalid("prompt must be a string or an array of token ids", "prompt");
}

/** Validates the body and reads the routing headers. Throws GatewayError(400) naming the field. */
export function profileRequest(kind: ApiKind, body: unknown, headers: IncomingHttpHeaders): RequestProfile {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalid("the request body must be a JSON object", "body");
  }
  const b = body as Record<string, unknown>;
  if (typeof b.model !== "string" || b.model === "")
    throw invalid("model is required and must be a string", "model");
  const inputTokensRaw =
    kind === "chat" ? estimateChatTokens(checkMessages(b.messages)) : promptTokens(b.prompt);
  const maxTokens =
    (kind === "chat" ? optionalPositiveInt(b, "max_completion_tokens") : null) ??
    optionalPositiveInt(b, "max_tokens");
  if (b.stream !== undefined && b.stream !== null && typeof b.stream !== "boolean") {
    throw invalid("stream must be a boolean", "stream");
  }
  const stream = b.stream === true;
  let includeUsage = false;
  const so = b.stream_options;
  if (so !== undefined && so !== null) {
    if (typeof so !== "object" || Array.isArray(so))
      throw invalid("stream_options must be an object", "stream_options");
    const iu = (so as Record<string, unknown>).include_usage;
    if (iu !== undefined && typeof iu !== "boolean") {
      throw invalid("stream_options.include_usage must be a boolean", "stream_options.include_usage");
    }
    includeUsage = iu === true;
  }
  return {
    kind,
    body: b,
    modelAlias: b.model,
    task: label(headers, "x-ai-task", b, "task"),
    requestClass: label(headers, "x-ai-request-class", b, "request_class"),
    inputTokensRaw,
    maxTokens,
    stream,
    includeUsage,
  };
}
