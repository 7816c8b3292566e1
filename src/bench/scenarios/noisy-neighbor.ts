// One tenant's burst of long prompts in a pool that several tenants share (issue 13): four tenants send
// a steady mix of short and long live requests (mixed-lengths' heavy-tailed lengths), and for 20 s in
// the middle of the run a fifth adds 5,000–7,000-token prompts, all `interactive` and streamed, on one
// pool of 4 × a100-llama8b. A router that counts requests puts a short summary behind a long prefill as
// readily as behind a short one; one that sees prefill work, and queues by tenant, need not. Phases
// `before`, `burst` and `after` let the report compare the steady tenants' TTFT P99 during the burst
// with theirs without it.

import type { TraceRequest } from "../trace-formats/trace.js";
import { lognormalInt, poissonArrivals, randomStream, uniformInt } from "../workload/distributions.js";
import { fleetGpus, fleetOf, replicaGroup } from "./fleet-group.js";
import { onePoolGatewayConfig } from "./gateway-yaml.js";
import { INPUT, OUTPUT } from "./mixed-lengths.js";
import type { GenerateOptions } from "./scenario.js";
import type { ScenarioPhase, ShippedScenario } from "./shipped.js";

export const QUIET_TENANTS = ["quiet-1", "quiet-2", "quiet-3", "quiet-4"];
export const BURST_TENANT = "noisy";

/**
 * Each steady ("quiet") tenant: Poisson arrivals of mixed-lengths' lognormal prompts (median 600
 * tokens, 1 in ~200 past 8,192) and replies (median 150). The four together (28 req/s, ~28k prompt
 * tokens/s) keep the pool about a third busy with prefill and busier still with decode.
 */
export const QUIET = { ratePerTenant: 7, input: INPUT, output: OUTPUT };

/**
 * The burst: 5 req/s of 5,000–7,000-token prompts (~30k prompt tokens/s more), 50–150 tokens out: the
 * pool's prefill goes from a third to about 70% busy for 20 s. In virtual time (`tokengate bench
 * noisy-neighbor --virtual`), least-request's TTFT P99 for the steady tenants goes from ~0.6 s before
 * the burst to ~1.9 s during it; an ideal prefill-aware router keeps theirs under ~1 s, and with a
 * gateway queue in tenant-fair order near 0.7 s. The first design (short prompts only from the quiet
 * tenants on H100s and a burst of 36 req/s, ~10% past the pool's prefill) measured no routing: past
 * capacity every router's tail is one backlog, and even the ideal router's P99 was 0.96× least-request's.
 */
export const BURST = { rate: 5, prompt: { min: 5000, max: 7000 }, output: { min: 50, max: 150 } };

/** Seconds of each phase: the quiet tenants alone, the burst on top, the quiet tenants again. */
const FULL = { beforeS: 50, burstS: 20, afterS: 50 };
const QUICK = { beforeS: 8, burstS: 10, afterS: 8 };

const LIVE_TASK = "live_summary";
const BURST_TASK = "document_summary";
const MODEL = "llama-3.1-8b";

// The engines send streamed tokens four steps at a time (vLLM's --stream-interval 4; the first token at
// once, so TTFT is as it was): at every token, the client, the router and the engines relaying ~8k SSE
// events a second took this 2-core machine's CPU, and tokengate's hop P95 reached 48 ms (run ml40).
const fleet = fleetOf("noisy-neighbor", [
  { ...replicaGroup("engines", 4, "a100-llama8b", MODEL, { maxModelLen: 32_768 }), streamInterval: 4 },
]);

function phases(opts: GenerateOptions): ScenarioPhase[] {
  const p = opts.quick ? QUICK : FULL;
  const total = p.beforeS + p.burstS + p.afterS;
  const k = opts.durationS !== undefined ? opts.durationS / total : 1;
  const a = p.beforeS * k;
  const b = a + p.burstS * k;
  return [
    { name: "before", startS: 0, endS: a },
    { name: "burst", startS: a, endS: b },
    { name: "after", startS: b, endS: total * k },
  ];
}

function generate(opts: GenerateOptions): TraceRequest[] {
  const [, burst, after] = phases(opts) as [ScenarioPhase, ScenarioPhase, ScenarioPhase];
  const rs = (purpose: string) => randomStream(opts.seed, `noisy-neighbor:${purpose}`);
  const out: TraceRequest[] = [];
  const request = (tenant: string, i: number, t: number, task: string, input: number, output: number) => ({
    t_ms: Math.floor(t),
    id: `${tenant}-${String(i + 1).padStart(5, "0")}`,
    tenant,
    task,
    request_class: "interactive",
    input_tokens: input,
    lang: "en" as const,
    max_tokens: output,
    stream: true,
  });
  for (const tenant of QUIET_TENANTS) {
    const sizes = rs(`${tenant}:sizes`);
    const times = poissonArrivals(QUIET.ratePerTenant, 0, after.endS * 1000, rs(`${tenant}:arrivals`));
    for (const [i, t] of times.entries()) {
      const input = lognormalInt(sizes, QUIET.input);
      out.push(request(tenant, i, t, LIVE_TASK, input, lognormalInt(sizes, QUIET.output)));
    }
  }
  const sizes = rs("burst:sizes");
  const times = poissonArrivals(BURST.rate, burst.startS * 1000, burst.endS * 1000, rs("burst:arrivals"));
  for (const [i, t] of times.entries()) {
    const input = uniformInt(sizes, BURST.prompt.min, BURST.prompt.max);
    out.push(
      request(BURST_TENANT, i, t, BURST_TASK, input, uniformInt(sizes, BURST.output.min, BURST.output.max)),
    );
  }
  return out.sort((x, y) => x.t_ms - y.t_ms || (x.id < y.id ? -1 : 1));
}

export const noisyNeighbor: ShippedScenario = {
  name: "noisy-neighbor",
  description:
    `${QUIET_TENANTS.length} steady tenants' mixed live requests (lognormal input median ` +
    `${QUIET.input.median}, up to ${QUIET.input.max}; ${QUIET.ratePerTenant} req/s each) and, for ` +
    `${FULL.burstS} s, tenant ${BURST_TENANT}'s burst of ${BURST.prompt.min}–${BURST.prompt.max}-token ` +
    `prompts at ${BURST.rate} req/s (the pool's prefill from ~1/3 to ~70% busy), all interactive, over ` +
    "4 × a100-llama8b",
  liveClass: "interactive",
  longClass: null,
  topologies: [
    {
      name: "4-replicas",
      description: "4 replicas of Llama-3.1-8B, one A100 each, 32K window, one pool",
      fleet,
      gpus: fleetGpus(fleet),
      routers: ["tokengate", "least-request", "round-robin"],
      gatewayConfig: (endpoints) =>
        onePoolGatewayConfig(
          {
            group: fleet.groups[0]!,
            version: "noisy-neighbor-r1",
            knownTasks: [LIVE_TASK, BURST_TASK],
            maxInputTokens: 32_768,
            maxOutputTokens: 4096,
          },
          endpoints,
        ),
    },
  ],
  phases,
  generate,
  burst: { tenant: BURST_TENANT, phase: "burst" },
  prefillTargets: true,
};
