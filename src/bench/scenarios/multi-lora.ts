// Many LoRA adapters over few adapter slots (issue 11): 8 adapters with Zipf popularity on 4 replicas
// that each hold 2 at a time. A router that ignores adapters makes every replica cycle through all 8,
// and each swap is a load that stalls the replica's batch; one that keeps adapters where they are
// resident loads few. No shared prefixes, so prefix affinity cannot confound the result.

import type { TraceRequest } from "../trace-formats/trace.js";
import { lognormalInt, poissonArrivals, randomStream, uniformInt, zipf } from "../workload/distributions.js";
import { fleetGpus, fleetOf, replicaGroup } from "./fleet-group.js";
import { gatewayConfigDoc, inferencePoolDoc, inferenceRouteDoc, yamlDocuments } from "./gateway-yaml.js";
import type { GenerateOptions } from "./scenario.js";
import type { ScenarioPhase, ShippedScenario } from "./shipped.js";

/** Served under their own names (vLLM's --lora-modules); adapter-0 is the most popular. */
export const ADAPTERS = Array.from({ length: 8 }, (_, i) => `adapter-${i}`);
/** Zipf exponent: adapter k is asked for ∝ 1/(k+1); adapter-0 gets 36.8% of requests, adapter-7 4.6%. */
export const ZIPF_S = 1;
/** vLLM's --max-loras: adapters resident at once per replica (8 slots in the fleet for 8 adapters). */
export const MAX_LORAS = 2;
/**
 * Time to load an adapter onto the GPU, charged to the step that loads it (the whole batch waits, as
 * vLLM activates adapters before the forward pass). vLLM keeps `--max-cpu-loras` adapters in host
 * memory, by default as many as `--max-loras`: with 8 adapters and 2 slots an evicted adapter is read
 * from disk (or the page cache) again. A rank-16 adapter on every linear layer of a 14B model is ~130 MB
 * of safetensors; 100 ms to read, convert and copy it is a middle figure (the profile's 40 ms is a
 * host-memory swap; peers report hundreds of ms for cold loads).
 */
export const LORA_LOAD_MS = 100;

/**
 * 60% of the fleet's capacity: one h100-14b replica serves ~20 req/s of this shape at most (measured:
 * 19.8 req/s offered 20, 20.0 offered 25, with TTFT climbing past 3 s), so 4 replicas ~80 req/s.
 * h100-llama8b would need ~110 req/s for the same share (~50 req/s per replica), more streamed tokens
 * than this 2-core machine relays: at 112 req/s its engines' steps ran 4× late and TTFT was the
 * harness's, not the routing's.
 */
const RATE = 50;
const DURATION_S = 120;
const QUICK_DURATION_S = 20;
/** Short-to-medium prompts, no shared system prompt: median 700 tokens, 200 to 2,048. */
const INPUT = { median: 700, sigma: 0.5, min: 200, max: 2048 };
const OUTPUT = { min: 100, max: 200 };
const TASK = "lora_completion";
const MODEL = "phi-4";
const PROFILE = "h100-14b";
/** The route's alias for the base model; requests name adapters, which the gateway maps to it. */
export const ALIAS = "lora-base";

const fleet = fleetOf("multi-lora", [
  replicaGroup("engines", 4, PROFILE, MODEL, {
    maxLoras: MAX_LORAS,
    loraModules: ADAPTERS,
    loraLoadMs: LORA_LOAD_MS,
  }),
]);

function durationOf(opts: GenerateOptions): number {
  return opts.durationS ?? (opts.quick ? QUICK_DURATION_S : DURATION_S);
}

function phases(opts: GenerateOptions): ScenarioPhase[] {
  return [{ name: "steady", startS: 0, endS: durationOf(opts) }];
}

function generate(opts: GenerateOptions): TraceRequest[] {
  const rs = (purpose: string) => randomStream(opts.seed, `multi-lora:${purpose}`);
  const popularity = zipf(ADAPTERS.length, ZIPF_S);
  const adapters = rs("adapters");
  const sizes = rs("sizes");
  const outputs = rs("outputs");
  return poissonArrivals(RATE, 0, durationOf(opts) * 1000, rs("arrivals")).map((t, i) => ({
    t_ms: Math.floor(t),
    id: `l-${String(i + 1).padStart(5, "0")}`,
    tenant: "bench",
    model: ADAPTERS[popularity.draw(adapters)]!,
    task: TASK,
    request_class: "interactive",
    input_tokens: lognormalInt(sizes, INPUT),
    lang: "en",
    max_tokens: uniformInt(outputs, OUTPUT.min, OUTPUT.max),
    stream: true,
  }));
}

/**
 * tokengate's config: one pool over the replicas declaring the adapters, one alias for the base model
 * listing it (requests that name an adapter are routed with it), the picker's defaults.
 */
function gatewayConfig(endpoints: Record<string, string[]>): Record<string, string> {
  const group = fleet.groups[0]!;
  const pool = group.name;
  const route = inferenceRouteDoc(`${pool}-route`, "multi-lora-r1", {
    knownTasks: [TASK],
    modelAliases: {
      [ALIAS]: {
        defaultPool: pool,
        pools: [
          { name: pool, maxInputTokens: 32_768, maxOutputTokens: 4096, maxQueueMs: 60_000, priority: 100 },
        ],
      },
    },
  });
  return {
    "pools.yaml": yamlDocuments([inferencePoolDoc(pool, group, endpoints, { loraAdapters: ADAPTERS })]),
    "route.yaml": yamlDocuments([route]),
    "gateway.yaml": yamlDocuments([gatewayConfigDoc(`${pool}-bench`)]),
  };
}

export const multiLora: ShippedScenario = {
  name: "multi-lora",
  description:
    `${ADAPTERS.length} LoRA adapters, Zipf popularity (s = ${ZIPF_S}), on 4 × ${PROFILE} with ` +
    `--max-loras ${MAX_LORAS} (${LORA_LOAD_MS} ms per adapter load); prompts median ${INPUT.median} ` +
    `tokens, outputs ${OUTPUT.min}–${OUTPUT.max}, no shared prefixes, Poisson ${RATE} req/s`,
  liveClass: "interactive",
  longClass: null,
  topologies: [
    {
      name: "4-replicas",
      description: `4 replicas of a 14B model (Phi-4), one H100 each, ${ADAPTERS.length} adapters, ${MAX_LORAS} slots each`,
      fleet,
      gpus: fleetGpus(fleet),
      routers: ["tokengate", "least-request"],
      gatewayConfig,
    },
  ],
  phases,
  generate,
};
