// Replays a trace against one router: open-loop arrivals at each request's t_ms, multi-turn sessions in
// order (a turn waits for the previous reply, plus think time), every reply measured client-side.

import type { Agent } from "undici";
import type { TraceRequest } from "../trace-formats/trace.js";
import { buildMessages, type ChatMessage, extraHeaders, recordTurn } from "../workload/messages.js";
import { type StreamResult, sendCompletion, streamCompletion } from "./stream-client.js";

export interface ReplayRecord {
  req: TraceRequest;
  /** When it was actually sent, ms after the run started. */
  sentAtMs: number;
  result: StreamResult;
}

/**
 * How a front spreads requests over several gateway replicas: in turn (a plain L4/L7 balancer), by a
 * hash of the prompt's first characters (a prefix-aware front: one system prompt, one replica), or by a
 * hash of the session (else the tenant) — a sticky front on a session header.
 */
export type Front = "round-robin" | "prefix" | "session";

/** Characters of the serialized messages a prefix front hashes. */
const PREFIX_CHARS = 1024;

export interface ReplayOptions {
  url: string;
  /** Several gateway replicas instead of `url`, and how the front chooses one per request. */
  replicas?: { readonly urls: readonly string[]; readonly front: Front };
  agent: Agent;
  /** The `model` of requests whose trace entry names none. */
  model: string;
  /** Extra headers on every request (API keys). */
  headers?: Record<string, string>;
  onDone?: (rec: ReplayRecord, done: number, total: number) => void;
}

export async function replay(trace: readonly TraceRequest[], opts: ReplayOptions): Promise<ReplayRecord[]> {
  const records: ReplayRecord[] = [];
  const t0 = performance.now();
  const total = trace.length;
  let sent = 0;
  const send = async (req: TraceRequest, history: ChatMessage[] | null): Promise<ReplayRecord> => {
    const messages = buildMessages(req, history ?? []);
    const body = { model: req.model ?? opts.model, messages, max_tokens: req.max_tokens, ignore_eos: true };
    const headers = { ...extraHeaders(req), "x-ai-trace-id": req.id, ...opts.headers };
    const sentAtMs = performance.now() - t0;
    const o = { agent: opts.agent, headers, captureText: history !== null };
    const url = opts.replicas ? chooseReplica(opts.replicas, req, messages, sent++) : opts.url;
    const result = req.stream ? await streamCompletion(url, body, o) : await sendCompletion(url, body, o);
    // A session's next turn carries this exchange: the user message just sent and the reply.
    if (history !== null && !result.error) recordTurn(history, messages, result.text ?? "");
    const rec = { req, sentAtMs, result };
    records.push(rec);
    opts.onDone?.(rec, records.length, total);
    return rec;
  };
  const waitUntil = async (ms: number) => {
    const d = ms - (performance.now() - t0);
    if (d > 1) await new Promise((r) => setTimeout(r, d));
  };

  const sessions = new Map<string, TraceRequest[]>();
  const singles: TraceRequest[] = [];
  for (const r of trace) {
    if (r.session) {
      const list = sessions.get(r.session) ?? [];
      list.push(r);
      sessions.set(r.session, list);
    } else {
      singles.push(r);
    }
  }
  const runs: Promise<unknown>[] = [];
  for (const turns of sessions.values()) {
    turns.sort((a, b) => (a.turn ?? 0) - (b.turn ?? 0));
    runs.push(
      (async () => {
        const history: ChatMessage[] = [];
        let readyAt = 0;
        for (const turn of turns) {
          await waitUntil(Math.max(turn.t_ms, readyAt));
          await send(turn, history);
          readyAt = performance.now() - t0 + (turn.think_ms ?? 0);
        }
      })(),
    );
  }
  for (const r of singles) {
    await waitUntil(r.t_ms);
    runs.push(send(r, null));
  }
  await Promise.all(runs);
  return records;
}

/** The replica a front sends the `n`th request to. */
export function chooseReplica(
  r: { readonly urls: readonly string[]; readonly front: Front },
  req: TraceRequest,
  messages: readonly ChatMessage[],
  n: number,
): string {
  const k = r.urls.length;
  if (r.front === "round-robin") return r.urls[n % k]!;
  const key =
    r.front === "prefix" ? JSON.stringify(messages).slice(0, PREFIX_CHARS) : (req.session ?? req.tenant);
  return r.urls[fnv1a(key) % k]!;
}

/** 32-bit FNV-1a of a string's UTF-16 units: a stable, cheap hash for a front's choice. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
