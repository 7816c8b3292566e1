// Replays a trace against one router: open-loop arrivals at each request's t_ms, multi-turn sessions in
// order (a turn waits for the previous reply, plus think time), every reply measured client-side.

import type { Agent } from "undici";
import { type StreamResult, sendCompletion, streamCompletion } from "./stream-client.js";
import type { TraceRequest } from "./trace.js";
import { buildMessages, type ChatMessage, extraHeaders, recordTurn } from "./workload/messages.js";

export interface ReplayRecord {
  req: TraceRequest;
  /** When it was actually sent, ms after the run started. */
  sentAtMs: number;
  result: StreamResult;
}

export interface ReplayOptions {
  url: string;
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
  const send = async (req: TraceRequest, history: ChatMessage[] | null): Promise<ReplayRecord> => {
    const messages = buildMessages(req, history ?? []);
    const body = { model: req.model ?? opts.model, messages, max_tokens: req.max_tokens, ignore_eos: true };
    const headers = { ...extraHeaders(req), "x-ai-trace-id": req.id, ...opts.headers };
    const sentAtMs = performance.now() - t0;
    const o = { agent: opts.agent, headers, captureText: history !== null };
    const result = req.stream
      ? await streamCompletion(opts.url, body, o)
      : await sendCompletion(opts.url, body, o);
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
