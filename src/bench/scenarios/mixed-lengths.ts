// Heavy-tailed input and output lengths with no shared prefixes: prefix affinity cannot help here, so
// this is where a cache-aware router must show it does not hurt, and where token-aware load should win.

import type { TraceRequest } from "../trace-formats/trace.js";
import { lognormalInt, poissonArrivals, randomStream } from "../workload/distributions.js";
import { fleetGpus, fleetOf, replicaGroup } from "./fleet-group.js";
import { onePoolGatewayConfig } from "./gateway-yaml.js";
import type { GenerateOptions } from "./scenario.js";
import type { ScenarioPhase, ShippedScenario } from "./shipped.js";

// Lognormal lengths as ShareGPT-like traffic has them. sigma 1.0 puts 1 input in ~200 above 8,192 tokens
// (seed 004's long-context line) and the 99.9th percentile near 13k; outputs median 150, mean ~200.
// The pool is 4 × a100-llama8b (about a third of an H100's speed), so at 40 req/s (10 per replica) it
// prefills ~40k tokens/s of its ~84k and decodes ~8k while doing so: the engines spend about half their
// time in prefill, and a short prompt that lands behind a long one waits for it. At 24 req/s on H100s
// (the first runs) no router was stressed: every TTFT ratio was within 10% of 1. In virtual time
// (`tokengate bench mixed-lengths --virtual`: the simulator's scheduler and step law, no HTTP),
// least-request's TTFT P90/P99 are ~280/~640 ms here and an ideal prefill-aware router's ~0.65× of
// them (seeds 1–3: 0.61–0.65× and 0.55–0.64×); at 29 req/s the gap narrows to ~0.7×.

const RATE = 40;
const DURATION_S = 150;
const QUICK_DURATION_S = 15;
export const INPUT = { median: 600, sigma: 1.0, min: 16, max: 16_000 };
export const OUTPUT = { median: 150, sigma: 0.8, min: 8, max: 1500 };
/** Seed 004's boundary between the online pool and the long one: above it a request is class `long`. */
const LONG_INPUT_TOKENS = 8192;
const TASK = "mixed_completion";
const MODEL = "llama-3.1-8b";

// The engines send streamed tokens four steps at a time (vLLM's --stream-interval 4; the first token at
// once, so TTFT is as it was): at every token, the client, the router and the engines relaying ~8k SSE
// events a second took this 2-core machine's CPU, and tokengate's hop P95 reached 48 ms (run ml40).
const fleet = fleetOf("mixed-lengths", [
  { ...replicaGroup("engines", 4, "a100-llama8b", MODEL, { maxModelLen: 32_768 }), streamInterval: 4 },
]);

function durationOf(opts: GenerateOptions): number {
  return opts.durationS ?? (opts.quick ? QUICK_DURATION_S : DURATION_S);
}

function phases(opts: GenerateOptions): ScenarioPhase[] {
  return [{ name: "steady", startS: 0, endS: durationOf(opts) }];
}

function generate(opts: GenerateOptions): TraceRequest[] {
  const rs = (purpose: string) => randomStream(opts.seed, `mixed-lengths:${purpose}`);
  const sizes = rs("sizes");
  return poissonArrivals(RATE, 0, durationOf(opts) * 1000, rs("arrivals")).map((t, i) => {
    const input = lognormalInt(sizes, INPUT);
    return {
      t_ms: Math.floor(t),
      id: `m-${String(i + 1).padStart(5, "0")}`,
      tenant: "bench",
      task: TASK,
      request_class: input > LONG_INPUT_TOKENS ? "long" : "interactive",
      input_tokens: input,
      lang: "en",
      max_tokens: lognormalInt(sizes, OUTPUT),
      stream: true,
    };
  });
}

export const mixedLengths: ShippedScenario = {
  name: "mixed-lengths",
  description:
    `Heavy-tailed lengths (lognormal input median ${INPUT.median}, up to ${INPUT.max}; output median ` +
    `${OUTPUT.median}, up to ${OUTPUT.max}), no shared prefixes, Poisson ${RATE} req/s over 4 × a100-llama8b`,
  liveClass: "interactive",
  longClass: "long",
  topologies: [
    {
      name: "4-replicas",
      description: "4 replicas of Llama-3.1-8B, one A100 each, 32K window",
      fleet,
      gpus: fleetGpus(fleet),
      routers: ["tokengate", "least-request", "round-robin"],
      gatewayConfig: (endpoints) =>
        onePoolGatewayConfig(
          {
            group: fleet.groups[0]!,
            version: "mixed-lengths-r1",
            knownTasks: [TASK],
            maxInputTokens: 32_768,
            maxOutputTokens: 4096,
          },
          endpoints,
        ),
    },
  ],
  phases,
  generate,
  prefillTargets: true,
};
