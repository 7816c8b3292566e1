// vLLM (the V1 engine's metric names, with the older ones as fallbacks) and its runtime LoRA API, served
// with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True.

import type { EngineDialect } from "./engine-dialect.js";

export const vllm: EngineDialect = {
  name: "vllm",
  metrics: {
    waiting: ["vllm:num_requests_waiting"],
    running: ["vllm:num_requests_running"],
    kvUsage: ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"],
    cacheConfig: {
      name: "vllm:cache_config_info",
      labels: { blockSize: "block_size", numBlocks: "num_gpu_blocks" },
    },
    blockSizeGauge: [],
    numBlocksGauge: [],
    lora: {
      name: "vllm:lora_requests_info",
      labels: { max: "max_lora", running: "running_lora_adapters", waiting: "waiting_lora_adapters" },
    },
    prefixHits: ["vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"],
    prefixQueries: ["vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"],
    prefixHitRateGauge: [],
    ttftBuckets: ["vllm:time_to_first_token_seconds_bucket"],
  },
  adapters: {
    loadPath: "/v1/load_lora_adapter",
    loadBody: (name, path) => ({ lora_name: name, lora_path: path }),
    // vLLM answers 400 "... has already been loaded ..." when the name is registered.
    alreadyLoaded: (status, text) => status === 400 && /already been loaded/.test(text),
  },
};
