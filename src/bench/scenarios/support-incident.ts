// Seed 004's incident day over 8 simulated GPUs: live ticket summaries at a steady rate while a weekend
// backlog of 52k-token batch recomputes floods in, then batch alone; on the original pods and split pools.

import type { TraceRequest } from "../trace-formats/trace.js";
import {
  arrivalsWithCount,
  lognormalInt,
  poissonArrivals,
  randomStream,
  uniformInt,
} from "../workload/distributions.js";
import type { GenerateOptions } from "./scenario.js";
import type { ScenarioPhase, ShippedScenario } from "./shipped.js";
import { BATCH_TASK, LIVE_TASK, originalTopology, splitTopology } from "./support-topologies.js";

// Calibration knobs. Starting points from the profiles' step costs (h100x2-14b-long: 3 ms + 19.9 µs per
// prefill token in 8,192-token steps, so a 52k prompt holds a pod's prefill for ~1 s; each decoding 52k
// sequence adds 1.3 ms to every step). The lead tunes them so that least-request on the original pods
// shows seed 004's symptom (live TTFT P95 of seconds) while queues drain between backlog pages.

/**
 * Seconds of each phase (live alone: the TTFT baseline; live plus the backlog; batch alone) and the
 * backlog's page size. Quick has one smaller page: its replies take ~25 s on the original pods and
 * ~50 s on the split topology's single batch pod, so a quick run stays under a minute per router.
 */
const FULL = { liveOnlyS: 20, floodS: 120, batchOnlyS: 60, batchPageSize: 24 };
const QUICK = { liveOnlyS: 2, floodS: 6, batchOnlyS: 1, batchPageSize: 10 };

/** Live summaries per second, fleet-wide: ~90 ms of pod time each, ~20% of the 4 pods on their own. */
const LIVE_RATE = 8;
/** Whole prompt, tokens: seed 004's "约 2800 token" with a spread of conversation lengths; always < 8,192. */
const LIVE_PROMPT = { median: 2800, sigma: 0.18, min: 1600, max: 6000 };
/** The summary instructions all live requests share (their prefix group). */
const LIVE_SYSTEM_TOKENS = 160;
const LIVE_MAX_TOKENS = 420;

/** Long live summaries per second (an agent opens a long historical ticket): a few a minute. */
const LONG_RATE = 0.1;
const LONG_PROMPT = { min: 12_000, max: 40_000 };
const LONG_MAX_TOKENS = 600;

/** Whole prompt, tokens: seed 004's "约 52000 token"; 60,000 + 1,800 output fits the 65,536 window. */
const BATCH_PROMPT = { median: 52_000, sigma: 0.08, min: 40_000, max: 60_000 };
const BATCH_SYSTEM_TOKENS = 320;
const BATCH_MAX_TOKENS = 1800;
/**
 * Quick runs keep the batch prompts (their prefill is what blocks live requests) but stop the replies
 * at 150 tokens: 1,800 tokens of decode keep a pod busy ~35 s after the page, past a CI smoke budget.
 * With one page of 10, the five router runs take 58 s and least-request still shows the symptom
 * (live TTFT P95 2.3 s against 0.09 s on split pools, seed 1).
 */
const QUICK_BATCH_MAX_TOKENS = 150;
/**
 * The recompute job pulls a page of tickets from its backlog and submits the page at once ("只要队列里有
 * 任务就持续发"). A page of 24 puts ~6 one-second prefills in front of each pod's live requests: seconds
 * of TTFT for the live requests of those seconds, drained well before the next page. Measured on the
 * original pods under nginx least_conn (seed 1): flood-phase live TTFT P95 4.1 s, P99 5.8 s (live-only
 * phase P95 0.13 s), live end-to-end P95 10.9 s, KV use at most ~70%, queues empty between pages.
 * Pages of 16 every 30 s gave a P95 of only 2.4 s; fewer, bigger pages stack deeper for the same volume.
 */
export const BATCH_PAGE_INTERVAL_S = 40;
/** A page's requests leave the job's workers within this many seconds. */
const BATCH_PAGE_SPREAD_S = 2;
/**
 * Batch-only phase: the backlog's tail at about what one 2-GPU pod completes (~4 s of pod time per
 * request), so the split topology's single batch pod is not handed an endless queue.
 */
const BATCH_TAIL_RATE = 0.25;

function phases(opts: GenerateOptions): ScenarioPhase[] {
  const p = opts.quick ? QUICK : FULL;
  const total = p.liveOnlyS + p.floodS + p.batchOnlyS;
  const k = opts.durationS !== undefined ? opts.durationS / total : 1;
  const floodStart = p.liveOnlyS * k;
  const floodEnd = floodStart + p.floodS * k;
  return [
    { name: "live-only", startS: 0, endS: floodStart },
    { name: "backlog-flood", startS: floodStart, endS: floodEnd },
    { name: "batch-only", startS: floodEnd, endS: total * k },
  ];
}

function generate(opts: GenerateOptions): TraceRequest[] {
  const [, flood, batchOnly] = phases(opts) as [ScenarioPhase, ScenarioPhase, ScenarioPhase];
  const liveEndMs = flood.endS * 1000;
  const rs = (purpose: string) => randomStream(opts.seed, `support-incident:${purpose}`);
  const out: TraceRequest[] = [];

  const liveSizes = rs("live-sizes");
  poissonArrivals(LIVE_RATE, 0, liveEndMs, rs("live-arrivals")).forEach((t, i) => {
    const prompt = lognormalInt(liveSizes, LIVE_PROMPT);
    out.push(summary(t, `live-${pad(i)}`, "interactive", prompt, LIVE_MAX_TOKENS));
  });

  const longSizes = rs("long-sizes");
  const longCount = Math.max(1, Math.round((LONG_RATE * liveEndMs) / 1000));
  arrivalsWithCount(longCount, 0, liveEndMs, rs("long-arrivals")).forEach((t, i) => {
    const prompt = uniformInt(longSizes, LONG_PROMPT.min, LONG_PROMPT.max);
    out.push(summary(t, `long-${pad(i)}`, "long", prompt, LONG_MAX_TOKENS));
  });

  const pages = rs("batch-pages");
  const pageSize = (opts.quick ? QUICK : FULL).batchPageSize;
  const batchTimes: number[] = [];
  for (let p = flood.startS; p < flood.endS; p += BATCH_PAGE_INTERVAL_S) {
    for (let i = 0; i < pageSize; i++) batchTimes.push((p + pages() * BATCH_PAGE_SPREAD_S) * 1000);
  }
  const tailCount = Math.round(BATCH_TAIL_RATE * (batchOnly.endS - batchOnly.startS));
  const tail = arrivalsWithCount(tailCount, batchOnly.startS * 1000, batchOnly.endS * 1000, rs("batch-tail"));
  const batchSizes = rs("batch-sizes");
  [...batchTimes, ...tail]
    .sort((x, y) => x - y)
    .forEach((t, i) => {
      const maxTokens = opts.quick ? QUICK_BATCH_MAX_TOKENS : BATCH_MAX_TOKENS;
      out.push(batch(t, `batch-${pad(i)}`, lognormalInt(batchSizes, BATCH_PROMPT), maxTokens));
    });

  return out.sort((x, y) => x.t_ms - y.t_ms);
}

function summary(t: number, id: string, cls: string, prompt: number, maxTokens: number): TraceRequest {
  return {
    t_ms: Math.floor(t),
    id,
    tenant: "support-basic",
    task: LIVE_TASK,
    request_class: cls,
    input_tokens: prompt - LIVE_SYSTEM_TOKENS,
    prefix_group: LIVE_TASK,
    prefix_tokens: LIVE_SYSTEM_TOKENS,
    lang: "zh",
    max_tokens: maxTokens,
    stream: true,
  };
}

function batch(t: number, id: string, prompt: number, maxTokens: number): TraceRequest {
  return {
    t_ms: Math.floor(t),
    id,
    tenant: "quality-job",
    task: BATCH_TASK,
    request_class: "batch",
    input_tokens: prompt - BATCH_SYSTEM_TOKENS,
    prefix_group: BATCH_TASK,
    prefix_tokens: BATCH_SYSTEM_TOKENS,
    lang: "zh",
    max_tokens: maxTokens,
    stream: false,
  };
}

function pad(i: number): string {
  return String(i + 1).padStart(5, "0");
}

export const supportIncident: ShippedScenario = {
  name: "support-incident",
  description:
    "Seed 004's day: Chinese live ticket summaries (~2,800 in / 420 out) while a backlog of batch recomputes " +
    "(~52,000 in / 1,800 out) floods in, then batch alone; 8 GPUs as 4 identical pods and as split pools",
  liveClass: "interactive",
  longClass: "long",
  batchClass: "batch",
  topologies: [originalTopology, splitTopology],
  phases,
  generate,
};
