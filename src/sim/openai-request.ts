// Parses and validates an OpenAI chat or text completion body the way vLLM does, into the few fields
// the simulated engine needs. Anything wrong becomes a SimHttpError with vLLM's status and wording.

import { SimHttpError } from "./errors.js";

export type ApiKind = "chat" | "completion";

export interface ChatMessageInput {
  role: string;
  content: string | Array<{ type: string; text?: string }> | null;
}

export interface SimRequest {
  kind: ApiKind;
  model: string | null;
  messages: ChatMessageInput[] | null;
  prompt: string | number[] | null;
  maxTokens: number | null;
  stream: boolean;
  includeUsage: boolean;
  ignoreEos: boolean;
  seed: number | null;
}

function bad(message: string, param: string | null = null): SimHttpError {
  return new SimHttpError(400, message, param);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function optionalInt(body: Record<string, unknown>, key: string): number | null {
  const v = body[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isInteger(v))
    throw bad(`${key} must be an integer, got ${JSON.stringify(v)}`, key);
  return v;
}

function optionalBool(body: Record<string, unknown>, key: string): boolean {
  const v = body[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== "boolean") throw bad(`${key} must be a boolean, got ${JSON.stringify(v)}`, key);
  return v;
}

function parseMessages(v: unknown): ChatMessageInput[] {
  if (v === undefined || v === null) throw bad("messages is required", "messages");
  if (!Array.isArray(v)) throw bad("messages must be an array", "messages");
  if (v.length === 0) throw bad("messages must contain at least one message", "messages");
  return v.map((m, i) => {
    if (!isObject(m)) throw bad(`messages[${i}] must be an object`, `messages[${i}]`);
    if (typeof m.role !== "string") throw bad(`messages[${i}].role must be a string`, `messages[${i}].role`);
    const c = m.content;
    if (c === undefined || c === null) return { role: m.role, content: null };
    if (typeof c === "string") return { role: m.role, content: c };
    if (Array.isArray(c)) {
      const parts = c.map((p, j) => {
        if (!isObject(p) || typeof p.type !== "string") {
          throw bad(`messages[${i}].content[${j}] must be a content part`, `messages[${i}].content[${j}]`);
        }
        return { type: p.type, text: typeof p.text === "string" ? p.text : undefined };
      });
      return { role: m.role, content: parts };
    }
    throw bad(`messages[${i}].content must be a string or an array of parts`, `messages[${i}].content`);
  });
}

function parsePrompt(v: unknown): string | number[] {
  if (typeof v === "string") return v;
  if (Array.isArray(v)) {
    if (v.length === 1 && typeof v[0] === "string") return v[0];
    if (v.length > 0 && v.every((t) => typeof t === "number" && Number.isInteger(t) && t >= 0))
      return v as number[];
    if (v.length > 1 && v.every((t) => typeof t === "string")) {
      throw bad("the simulator serves one prompt per request; send the prompts separately", "prompt");
    }
  }
  if (v === undefined || v === null) throw bad("prompt is required", "prompt");
  throw bad("prompt must be a string or an array of token ids", "prompt");
}

/** Validates a parsed JSON body. Throws SimHttpError(400) naming the field at fault. */
export function parseSimRequest(kind: ApiKind, body: unknown): SimRequest {
  if (!isObject(body)) throw bad("the request body must be a JSON object");
  if (body.model !== undefined && body.model !== null && typeof body.model !== "string") {
    throw bad("model must be a string", "model");
  }
  const maxTokens =
    optionalInt(body, kind === "chat" ? "max_completion_tokens" : "max_tokens") ??
    optionalInt(body, "max_tokens");
  if (maxTokens !== null && maxTokens < 1)
    throw bad(`max_tokens must be at least 1, got ${maxTokens}.`, "max_tokens");
  const n = optionalInt(body, "n");
  if (n !== null && n !== 1) throw bad("the simulator generates one choice per request (n must be 1)", "n");
  const stream = optionalBool(body, "stream");
  let includeUsage = false;
  if (body.stream_options !== undefined && body.stream_options !== null) {
    if (!isObject(body.stream_options)) throw bad("stream_options must be an object", "stream_options");
    if (!stream) throw bad("stream_options can only be set when stream is true", "stream_options");
    includeUsage = optionalBool(body.stream_options, "include_usage");
  }
  return {
    kind,
    model: (body.model as string | undefined) ?? null,
    messages: kind === "chat" ? parseMessages(body.messages) : null,
    prompt: kind === "completion" ? parsePrompt(body.prompt) : null,
    maxTokens,
    stream,
    includeUsage,
    ignoreEos: optionalBool(body, "ignore_eos"),
    seed: optionalInt(body, "seed"),
  };
}
