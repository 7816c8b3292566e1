// The multi-region bench's callers: the schedule's streaming chat requests sent open-loop at their times
// (never waiting for earlier answers), each with its tenant, caller region and session headers, to
// wherever the pass sends it — the director, or (the naive pass) the gateway of the caller's nearest
// region — and recorded as the caller saw it: TTFT, status, the region that served it and why.

import { setTimeout as sleep } from "node:timers/promises";
import type { Agent } from "undici";
import { streamCompletion } from "../traffic/stream-client.js";
import { generatedText } from "../workload/generated-text.js";
import type { RequestRecord } from "./multi-region-figures.js";
import { type Arrival, MODEL_ALIAS, SESSION_HEADER } from "./multi-region-scenario.js";

/** Where one request goes: a base URL, and the region it reaches when that is known before it is sent. */
export interface Target {
  readonly url: string;
  /** The naive pass's gateway region; null: the director names it in its reply. */
  readonly region: string | null;
}

export interface LoadOptions {
  readonly agent: Agent;
  readonly timeoutMs: number;
  /** Prefix of each request's trace id (`<prefix>-<arrival id>`), to find it in the logs. */
  readonly tracePrefix: string;
  /** The pass's start (performance.now()); arrivals are sent at `t0 + atMs`. */
  readonly t0: number;
}

/** The request body of an arrival (its prompt is deterministic: the same in both passes); sent streaming. */
export function requestBody(a: Arrival): Record<string, unknown> {
  return {
    model: MODEL_ALIAS,
    messages: [{ role: "user", content: generatedText("en", a.promptTokens, a.textSeed) }],
    max_tokens: a.maxTokens,
  };
}

function headerOf(h: Record<string, string | string[] | undefined>, name: string): string | null {
  const v = h[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === "" ? null : s;
}

/** Sends one arrival now; never throws. */
async function sendOne(
  a: Arrival,
  body: Record<string, unknown>,
  target: Target,
  opts: LoadOptions,
): Promise<RequestRecord> {
  const headers: Record<string, string> = {
    "x-ai-tenant": a.tenant,
    "x-ai-caller-region": a.callerRegion,
    "x-ai-trace-id": `${opts.tracePrefix}-${a.id}`,
  };
  if (a.session !== null) headers[SESSION_HEADER] = a.session;
  const sentAtMs = performance.now() - opts.t0;
  const r = await streamCompletion(target.url, body, {
    agent: opts.agent,
    headers,
    signal: AbortSignal.timeout(opts.timeoutMs),
  });
  // A request that got no reply at all (refused at connect, timed out) reached no region the caller knows of.
  const region = r.status === 0 ? null : (target.region ?? headerOf(r.headers, "x-ai-director-region"));
  return {
    id: a.id,
    callerRegion: a.callerRegion,
    tenant: a.tenant,
    session: a.session,
    sentAtMs,
    ttftMs: r.error === null ? r.ttftMs : Number.NaN,
    e2eMs: r.e2eMs,
    status: r.status,
    error: r.error,
    region,
    reason: headerOf(r.headers, "x-ai-director-reason"),
  };
}

/**
 * Sends every arrival at its time (open loop) to `targetOf(arrival)`, and resolves with the records of
 * all of them once the last has ended.
 */
export async function runLoad(
  schedule: readonly Arrival[],
  targetOf: (a: Arrival) => Target,
  opts: LoadOptions,
): Promise<RequestRecord[]> {
  const pending: Promise<RequestRecord>[] = [];
  for (const a of schedule) {
    const body = requestBody(a); // before the wait: the send itself starts on time
    const wait = opts.t0 + a.atMs - performance.now();
    if (wait > 1) await sleep(wait);
    pending.push(sendOne(a, body, targetOf(a), opts));
  }
  return Promise.all(pending);
}
