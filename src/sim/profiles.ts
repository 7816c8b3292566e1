// Named hardware profiles for the simulated engine: step-time coefficients and capacities taken from
// published fits (shared/reference/sim.md §3), so simulated replicas behave like real GPUs under load.

export interface EngineProfile {
  readonly name: string;
  readonly description: string;
  /** Fixed cost of one engine step, µs (weights read, scheduling, sampling). */
  readonly beta0Us: number;
  /** Cost per prefill (uncached prompt) token in the step, µs. */
  readonly beta1Us: number;
  /** Cost per decode token (one per decoding sequence) in the step, µs. */
  readonly beta2Us: number;
  /** Cost per context token attended by decoding sequences, µs (KV-cache bandwidth; 0 = ignored). */
  readonly beta3Us: number;
  /** Serialized per-request CPU cost of the engine's API server (tokenize, detokenize, HTTP), µs. */
  readonly apiServerUs: number;
  readonly numGpuBlocks: number;
  readonly blockSize: number;
  readonly maxNumSeqs: number;
  readonly maxNumBatchedTokens: number;
  readonly maxModelLen: number;
  /** Time to load a LoRA adapter into a GPU slot, ms. */
  readonly loraLoadMs: number;
  readonly gpus: number;
}

/**
 * vLLM's OpenAI server is one Python process: each request costs it CPU time (parsing, tokenizing,
 * detokenizing and streaming) one after another. With the BLIS step fit alone a replica would saturate
 * near 147 req/s on the published 204-in/64-out workload; real vLLM v0.11 saturated at ~101 req/s with
 * TTFT rising from 31 ms (1 QPS) to 51 ms (92 QPS). A serialized 9.5 ms per request reproduces both
 * (fitted, not measured: see the sim-fidelity benchmark). The cost is on the CPU, so every GPU profile
 * shares it.
 */
const API_SERVER_US = 9500;

/**
 * Coefficients: BLIS "blackbox" fits on vLLM v0.8.4 traces (inference-sim/inference-sim), KV block
 * counts from the same defaults or from vLLM's capacity formula (reference/sim.md §3.2).
 */
export const PROFILES: Readonly<Record<string, EngineProfile>> = {
  "h100-llama8b": {
    name: "h100-llama8b",
    description:
      "Llama-3.1-8B on one H100 80GB (BLIS fit: 5,753 µs + 17.25 µs/prefill tok + 6.0 µs/decode tok)",
    beta0Us: 5753,
    beta1Us: 17.25,
    beta2Us: 6.0,
    beta3Us: 0,
    apiServerUs: API_SERVER_US,
    numGpuBlocks: 27_000,
    blockSize: 16,
    maxNumSeqs: 1024,
    maxNumBatchedTokens: 8192,
    maxModelLen: 32_768,
    loraLoadMs: 25,
    gpus: 1,
  },
  "a100-llama8b": {
    name: "a100-llama8b",
    description:
      "Llama-3.1-8B on one A100 80GB (BLIS fit: 16,442 µs + 47.84 µs/prefill tok + 18.21 µs/decode tok)",
    beta0Us: 16_442,
    beta1Us: 47.84,
    beta2Us: 18.21,
    beta3Us: 0,
    apiServerUs: API_SERVER_US,
    numGpuBlocks: 27_000,
    blockSize: 16,
    maxNumSeqs: 256,
    maxNumBatchedTokens: 2048,
    maxModelLen: 32_768,
    loraLoadMs: 40,
    gpus: 1,
  },
  "h100-14b": {
    name: "h100-14b",
    description:
      "A 14B model (Phi-4) on one H100 80GB (BLIS fit: 4,406 µs + 47.41 µs/prefill tok + 23.36 µs/decode tok)",
    beta0Us: 4406,
    beta1Us: 47.41,
    beta2Us: 23.36,
    beta3Us: 0,
    apiServerUs: API_SERVER_US,
    numGpuBlocks: 14_645,
    blockSize: 16,
    maxNumSeqs: 1024,
    maxNumBatchedTokens: 8192,
    maxModelLen: 16_384,
    loraLoadMs: 40,
    gpus: 1,
  },
  "h100x2-14b-long": {
    name: "h100x2-14b-long",
    description:
      "A 14B long-context model on two H100s (TP2): BLIS Phi-4 TP2 prefill/decode fit, a 3 ms step floor, " +
      "KV bandwidth 0.024 µs per attended context token, ~700K tokens of KV cache",
    beta0Us: 3000,
    beta1Us: 19.88,
    beta2Us: 8.69,
    beta3Us: 0.024,
    apiServerUs: API_SERVER_US,
    numGpuBlocks: 44_000,
    blockSize: 16,
    maxNumSeqs: 256,
    maxNumBatchedTokens: 8192,
    maxModelLen: 65_536,
    loraLoadMs: 40,
    gpus: 2,
  },
  instant: {
    name: "instant",
    description: "No simulated GPU time: steps run back to back (fast tests, gateway overhead benchmarks)",
    beta0Us: 0,
    beta1Us: 0,
    beta2Us: 0,
    beta3Us: 0,
    apiServerUs: 0,
    numGpuBlocks: 65_536,
    blockSize: 16,
    maxNumSeqs: 1024,
    maxNumBatchedTokens: 65_536,
    maxModelLen: 131_072,
    loraLoadMs: 0,
    gpus: 0,
  },
};

export function getProfile(name: string): EngineProfile {
  const p = PROFILES[name];
  if (!p) throw new Error(`unknown engine profile "${name}"; known: ${Object.keys(PROFILES).join(", ")}`);
  return p;
}
