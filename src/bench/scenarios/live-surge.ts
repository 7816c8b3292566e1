// The batch pause under live pressure, on seed 004's original four pods: a batch backlog runs alone,
// then a surge of long live summaries (the incident brings agents pasting whole conversations) overloads
// the pods, then live traffic falls back to its usual rate. tokengate pauses batch once the live TTFT
// P95 passes its threshold and resumes after the hysteresis; least-request on the same pods has no pause.

import type { TraceRequest } from "../trace-formats/trace.js";
import { lognormalInt, poissonArrivals, randomStream } from "../workload/distributions.js";
import type { GenerateOptions } from "./scenario.js";
import type { ScenarioPhase, ShippedScenario } from "./shipped.js";
import { BATCH_TASK, LIVE_TASK, originalTopology } from "./support-topologies.js";

/** Seconds of each phase: batch alone, the live surge, live back at its usual rate. */
const FULL = { batchOnlyS: 40, surgeS: 15, recoveryS: 120 };
const QUICK = { batchOnlyS: 6, surgeS: 9, recoveryS: 6 };

/** Batch recomputes per second throughout: about what the four pods finish with live traffic on them. */
const BATCH_RATE = 0.2;
const BATCH_PROMPT = { median: 52_000, sigma: 0.08, min: 40_000, max: 60_000 };
const BATCH_MAX_TOKENS = 1800;
/** Quick runs stop batch replies early, so the drain after the last arrival stays within seconds. */
const QUICK_BATCH_MAX_TOKENS = 150;

/**
 * The surge: long live summaries (near the online limit of 8,192 tokens) at a rate whose prefill alone
 * needs about as much as the four pods' prefill capacity (~50k tokens/s each on h100x2-14b-long), so live
 * TTFT climbs past the pause threshold within seconds.
 */
const SURGE = { rate: 34, prompt: { median: 6500, sigma: 0.1, min: 4000, max: 8000 }, maxTokens: 200 };
/** After the surge: seed 004's usual live summaries. */
const USUAL = { rate: 8, prompt: { median: 2800, sigma: 0.18, min: 1600, max: 6000 }, maxTokens: 420 };
const LIVE_SYSTEM_TOKENS = 160;
const BATCH_SYSTEM_TOKENS = 320;

function phases(opts: GenerateOptions): ScenarioPhase[] {
  const p = opts.quick ? QUICK : FULL;
  const total = p.batchOnlyS + p.surgeS + p.recoveryS;
  const k = opts.durationS !== undefined ? opts.durationS / total : 1;
  const a = p.batchOnlyS * k;
  const b = a + p.surgeS * k;
  return [
    { name: "batch-only", startS: 0, endS: a },
    { name: "live-surge", startS: a, endS: b },
    { name: "recovery", startS: b, endS: total * k },
  ];
}

function generate(opts: GenerateOptions): TraceRequest[] {
  const [, surge, recovery] = phases(opts) as [ScenarioPhase, ScenarioPhase, ScenarioPhase];
  const rs = (purpose: string) => randomStream(opts.seed, `live-surge:${purpose}`);
  const out: TraceRequest[] = [];
  const sizes = rs("sizes");
  const live = (from: ScenarioPhase, shape: typeof SURGE, name: string) => {
    const times = poissonArrivals(shape.rate, from.startS * 1000, from.endS * 1000, rs(`${name}-arrivals`));
    for (const [i, t] of times.entries()) {
      out.push({
        t_ms: Math.floor(t),
        id: `${name}-${pad(i)}`,
        tenant: "support-basic",
        task: LIVE_TASK,
        request_class: "interactive",
        input_tokens: lognormalInt(sizes, shape.prompt) - LIVE_SYSTEM_TOKENS,
        prefix_group: LIVE_TASK,
        prefix_tokens: LIVE_SYSTEM_TOKENS,
        lang: "zh",
        max_tokens: shape.maxTokens,
        stream: true,
      });
    }
  };
  live(surge, SURGE, "surge");
  live(recovery, USUAL, "live");
  const batchSizes = rs("batch-sizes");
  // The backlog is already there when the run starts: one recompute at once, then Poisson arrivals.
  const batchTimes = [0, ...poissonArrivals(BATCH_RATE, 0, recovery.endS * 1000, rs("batch-arrivals"))];
  for (const [i, t] of batchTimes.entries()) {
    out.push({
      t_ms: Math.floor(t),
      id: `batch-${pad(i)}`,
      tenant: "quality-job",
      task: BATCH_TASK,
      request_class: "batch",
      input_tokens: lognormalInt(batchSizes, BATCH_PROMPT) - BATCH_SYSTEM_TOKENS,
      prefix_group: BATCH_TASK,
      prefix_tokens: BATCH_SYSTEM_TOKENS,
      lang: "zh",
      max_tokens: opts.quick ? QUICK_BATCH_MAX_TOKENS : BATCH_MAX_TOKENS,
      stream: false,
    });
  }
  return out.sort((x, y) => x.t_ms - y.t_ms);
}

function pad(i: number): string {
  return String(i + 1).padStart(5, "0");
}

export const liveSurge: ShippedScenario = {
  name: "live-surge",
  description:
    "The batch pause under live pressure: batch recomputes (~52,000 in / 1,800 out) alone, then a surge of " +
    "long live summaries (~6,500 in) past what seed 004's original 4 pods serve, then usual live traffic",
  liveClass: "interactive",
  longClass: null,
  batchClass: "batch",
  topologies: [{ ...originalTopology, routers: ["tokengate", "least-request"] }],
  phases,
  generate,
};
