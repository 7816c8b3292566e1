// The OpenAI chat messages and headers the bench client sends for one trace request: the prefix group's
// system prompt, the conversation so far for multi-turn sessions, then the user message.

import { hashString } from "../../sim/rng.js";
import { DEFAULT_HASH_BLOCK_TOKENS, type TraceRequest } from "../trace-formats/trace.js";
import { hashIdsText } from "./block-text.js";
import { generatedText, type TextLang } from "./generated-text.js";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** Enough for every group of the shipped scenarios; a user trace with more only regenerates some. */
const MAX_CACHED_SYSTEM_PROMPTS = 2048;
const systemPrompts = new Map<string, string>();

/**
 * The system prompt of a prefix group: generated from the group id alone, so it is byte-identical for
 * every request of the group and engines' prefix caches can hit. Cached, as groups recur.
 */
export function systemPrompt(group: string, tokens: number, lang: TextLang): string {
  const key = `${lang}:${tokens}:${group}`;
  let text = systemPrompts.get(key);
  if (text === undefined) {
    text = generatedText(lang, tokens, hashString(`system:${group}`));
    if (systemPrompts.size >= MAX_CACHED_SYSTEM_PROMPTS) {
      systemPrompts.delete(systemPrompts.keys().next().value as string);
    }
    systemPrompts.set(key, text);
  }
  return text;
}

/**
 * The user message: the trace's text; or, with `hash_ids`, `input_tokens` tokens generated block by
 * block from the ids (shared ids, shared text); or `input_tokens` tokens generated from the request id.
 */
export function userText(req: TraceRequest): string {
  if (req.input_text !== undefined) return req.input_text;
  const seed = hashString(`user:${req.id}`);
  if (req.hash_ids !== undefined) {
    const block = req.hash_block_tokens ?? DEFAULT_HASH_BLOCK_TOKENS;
    return hashIdsText(req.hash_ids, block, req.input_tokens ?? 0, req.lang ?? "en", seed);
  }
  return generatedText(req.lang ?? "en", req.input_tokens ?? 0, seed);
}

/**
 * Messages for `req`: a system prompt when it has `prefix_tokens` (shared by its `prefix_group`; without
 * a group the prompt is the request's own), then `history`, then the user message. Call it right before
 * sending; long prompts are cheap to build.
 * @param history earlier turns of the request's session, oldest first, without the system prompt;
 *   keep one array per session and extend it with recordTurn() after each reply.
 * @example
 * const history: ChatMessage[] = [];
 * const messages = buildMessages(turn, history);
 * const reply = await send(messages);
 * recordTurn(history, messages, reply);
 */
export function buildMessages(req: TraceRequest, history: readonly ChatMessage[] = []): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (req.prefix_tokens !== undefined && req.prefix_tokens > 0) {
    const group = req.prefix_group ?? `request:${req.id}`;
    messages.push({ role: "system", content: systemPrompt(group, req.prefix_tokens, req.lang ?? "en") });
  }
  messages.push(...history);
  messages.push({ role: "user", content: userText(req) });
  return messages;
}

/**
 * Appends a finished turn to its session's history: the user message just sent (the last of `sent`)
 * and the assistant's reply text. After a failed turn record nothing; the next turn then goes without it.
 */
export function recordTurn(history: ChatMessage[], sent: readonly ChatMessage[], reply: string): void {
  const user = sent[sent.length - 1];
  if (user?.role === "user") history.push(user);
  history.push({ role: "assistant", content: reply });
}

/**
 * Headers describing the request to the router: the tenant, task and class (seed 004's X-AI-* headers)
 * and the prefix group, which the `prefix-sticky` baseline hashes on. The bench gateway trusts the
 * harness on loopback to name the tenant (scenarios/gateway-yaml.ts); the nginx baselines pass it on.
 */
export function extraHeaders(req: TraceRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  if (req.tenant) headers["X-AI-Tenant"] = headerValue(req.tenant);
  if (req.task) headers["X-AI-Task"] = headerValue(req.task);
  if (req.request_class) headers["X-AI-Request-Class"] = headerValue(req.request_class);
  if (req.prefix_group) headers["X-Prefix-Group"] = headerValue(req.prefix_group);
  return headers;
}

/** Values from user traces may hold characters an HTTP header cannot carry; those are percent-encoded. */
function headerValue(v: string): string {
  return /^[\x20-\x7e]*$/.test(v) ? v : encodeURIComponent(v);
}
