// Load generation shared by the benchmarks: an open-loop scheduler at a fixed arrival rate (requests go
// out on schedule whether or not earlier ones came back) and a closed-loop runner (N clients, each
// sending its next request when the last one ends), plus one timed non-streaming undici request.

import { type Agent, request } from "undici";
import { poissonGapMs } from "../stats.js";

export interface OpenLoopOptions<T> {
  ratePerSec: number;
  /** Measured period; arrivals stop after warm-up + this. */
  durationMs: number;
  /** Arrivals before this are sent but not returned (connections, JIT and caches warm up). */
  warmupMs?: number;
  /** Constant gaps, or exponential ones (Poisson arrivals); default constant. */
  arrivals?: "constant" | "poisson";
  /** [0,1) source for Poisson gaps; default Math.random. */
  random?: () => number;
  /** An arrival finding this many requests outstanding is dropped and counted, not queued. */
  maxOutstanding: number;
  send: (seq: number) => Promise<T>;
  /** Called once, just before the first measured arrival (start CPU meters here). */
  onMeasureStart?: () => void;
}

export interface OpenLoopResult<T> {
  /** Results of the arrivals after the warm-up, in arrival order. */
  results: T[];
  /** Arrivals after the warm-up that were dropped at `maxOutstanding`. */
  dropped: number;
  /** How late the scheduler sent measured arrivals (ms): a busy load generator shows up here. */
  lateMs: number[];
  /** From the first measured arrival to the last measured completion. */
  elapsedMs: number;
}

/**
 * Sends `send(seq)` at `ratePerSec` for `warmupMs + durationMs`. Timers fire at best every ~1 ms, so
 * every arrival whose time has come is sent on each wake-up; lateness is recorded, not hidden.
 * @example
 * const r = await runOpenLoop({ ratePerSec: 1000, durationMs: 10_000, warmupMs: 1000,
 *   maxOutstanding: 2000, send: () => timedRequest(url, body, agent) });
 */
export async function runOpenLoop<T>(opts: OpenLoopOptions<T>): Promise<OpenLoopResult<T>> {
  const warmupMs = opts.warmupMs ?? 0;
  const random = opts.random ?? Math.random;
  const gap = () =>
    opts.arrivals === "poisson" ? poissonGapMs(opts.ratePerSec, random) : 1000 / opts.ratePerSec;
  const measured: Promise<T>[] = [];
  const lateMs: number[] = [];
  const warm: Promise<unknown>[] = [];
  let outstanding = 0;
  let dropped = 0;
  let seq = 0;
  let started = false;
  const t0 = performance.now();
  const measureFrom = t0 + warmupMs;
  const end = measureFrom + opts.durationMs;
  let next = t0;
  while (next < end) {
    const now = performance.now();
    if (next > now) {
      await sleep(next - now);
      continue;
    }
    const inWarmup = next < measureFrom;
    if (!inWarmup && !started) {
      started = true;
      opts.onMeasureStart?.();
    }
    if (outstanding >= opts.maxOutstanding) {
      if (!inWarmup) dropped++;
    } else {
      outstanding++;
      const p = opts.send(seq++).finally(() => {
        outstanding--;
      });
      if (inWarmup) warm.push(p.catch(() => {}));
      else {
        measured.push(p);
        lateMs.push(now - next);
      }
    }
    next += gap();
  }
  const results = await Promise.all(measured);
  const elapsedMs = performance.now() - measureFrom;
  await Promise.all(warm);
  return { results, dropped, lateMs, elapsedMs };
}

export interface ClosedLoopOptions<T> {
  /** Clients, each with at most one request outstanding. */
  concurrency: number;
  /** Clients start no new request after this. */
  durationMs: number;
  /** Requests started before this are not returned. */
  warmupMs?: number;
  send: (client: number, seq: number) => Promise<T>;
  /** Called once when the warm-up ends. */
  onMeasureStart?: () => void;
}

export interface ClosedLoopResult<T> {
  /** Results of requests started after the warm-up. */
  results: T[];
  /** From the end of the warm-up until the last client finished. */
  elapsedMs: number;
}

/** Runs `concurrency` clients back to back for `warmupMs + durationMs` (the highest rate the path gives). */
export async function runClosedLoop<T>(opts: ClosedLoopOptions<T>): Promise<ClosedLoopResult<T>> {
  const warmupMs = opts.warmupMs ?? 0;
  const t0 = performance.now();
  const measureFrom = t0 + warmupMs;
  const end = measureFrom + opts.durationMs;
  const results: T[] = [];
  let seq = 0;
  const timer = setTimeout(() => opts.onMeasureStart?.(), warmupMs);
  const client = async (c: number) => {
    while (performance.now() < end) {
      const startedAt = performance.now();
      const r = await opts.send(c, seq++);
      if (startedAt >= measureFrom) results.push(r);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, (_, c) => client(c)));
  clearTimeout(timer);
  return { results, elapsedMs: performance.now() - measureFrom };
}

export interface TimedResponse {
  status: number;
  /** From send to the last body byte. */
  ms: number;
  bytes: number;
  /** HTTP status other than 200, or the connection error; null on success. */
  error: string | null;
}

/** One non-streaming POST of a JSON body, read to the end and timed. Never throws. */
export async function timedRequest(
  url: string,
  body: string,
  agent: Agent,
  headers: Record<string, string> = {},
): Promise<TimedResponse> {
  const t0 = performance.now();
  try {
    const res = await request(url, {
      method: "POST",
      dispatcher: agent,
      headers: { "content-type": "application/json", ...headers },
      body,
    });
    const text = await res.body.text();
    const ms = performance.now() - t0;
    const error = res.statusCode === 200 ? null : `HTTP ${res.statusCode}: ${text.slice(0, 200)}`;
    return { status: res.statusCode, ms, bytes: text.length, error };
  } catch (err) {
    return { status: 0, ms: performance.now() - t0, bytes: 0, error: (err as Error).message };
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
