// The overhead benchmark's saturated measurements: maximum throughput of a closed loop of small
// non-streaming requests, and the streaming relay's events per router CPU-second.

import { round } from "../stats.js";
import { runClosedLoop } from "../traffic/load.js";
import { makeAgent } from "../traffic/stream-client.js";
import { fixedRateClient } from "./overhead-client.js";
import type { cpuMeter, PathUnderTest } from "./overhead-cpu.js";
import { q, usPerRequest } from "./overhead-fixed-rate.js";
import { type RelayCounter, relayStream } from "./overhead-relay.js";
import { CLIENT_CONNECTIONS, CONCURRENCY, MODEL, PROMPT, RELAY_TOKENS, SMALL } from "./overhead-settings.js";

export const urlOf = (p: PathUnderTest, seq: number) => p.urls[seq % p.urls.length]!;

export async function throughputRun(p: PathUnderTest, seconds: number, cpu: ReturnType<typeof cpuMeter>) {
  const client = fixedRateClient(p.urls, CLIENT_CONNECTIONS);
  const r = await runClosedLoop({
    concurrency: CONCURRENCY,
    warmupMs: 1000,
    onMeasureStart: cpu.reset,
    durationMs: seconds * 1000,
    send: (_c, seq) => client.send(seq, SMALL, false),
  });
  const used = cpu.read();
  await client.close();
  const ok = r.results.filter((x) => !x.error);
  return {
    concurrency: CONCURRENCY,
    completed: ok.length,
    errors: r.results.length - ok.length,
    error_sample: r.results.find((x) => x.error)?.error ?? null,
    rps: round(ok.length / (r.elapsedMs / 1000), 0),
    latency_ms: q(ok.map((x) => x.ms)),
    cpu: used,
    router_cpu_us_per_request: usPerRequest(used, ok.length),
    router_cores: used.router_s === null ? null : round(used.router_s / (r.elapsedMs / 1000), 2),
  };
}

/**
 * Long streams, `CONCURRENCY` at a time, each restarted when it ends. SSE events are counted as bytes
 * arrive (a blank line ends each one), so the window [warm-up, warm-up + seconds] sees steady state.
 */
export async function relayRun(p: PathUnderTest, seconds: number, cpu: ReturnType<typeof cpuMeter>) {
  const agent = makeAgent(CLIENT_CONNECTIONS);
  const body = JSON.stringify({
    model: MODEL,
    messages: PROMPT,
    max_tokens: RELAY_TOKENS,
    ignore_eos: true,
    stream: true,
  });
  const counter: RelayCounter = { events: 0, chunks: 0, streams: 0, errors: 0, error: null };
  let stop = false;
  const client = async (c: number) => {
    for (let seq = c; !stop; seq += CONCURRENCY) await relayStream(urlOf(p, seq), body, agent, counter);
  };
  const clients = Array.from({ length: CONCURRENCY }, (_, c) => client(c));
  await sleep(1000);
  cpu.reset();
  const e0 = counter.events;
  const k0 = counter.chunks;
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const events = counter.events - e0;
  const chunks = counter.chunks - k0;
  const elapsed = (performance.now() - t0) / 1000;
  const used = cpu.read();
  stop = true;
  await Promise.all(clients);
  await agent.close();
  return {
    concurrency: CONCURRENCY,
    max_tokens: RELAY_TOKENS,
    streams_completed: counter.streams,
    errors: counter.errors,
    error_sample: counter.error,
    events_per_s: round(events / elapsed, 0),
    /** Events arrive coalesced in reads; more per read means less work per event for every hop. */
    events_per_client_read: round(events / Math.max(1, chunks), 1),
    cpu: used,
    router_cores: used.router_s === null ? null : round(used.router_s / elapsed, 2),
    events_per_router_cpu_s: used.router_s ? round(events / used.router_s, 0) : null,
    events_per_engine_cpu_s: used.engines_s ? round(events / used.engines_s, 0) : null,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
