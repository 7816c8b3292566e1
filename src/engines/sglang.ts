// SGLang: its metric names (GIE's model-server protocol names the cache info series; recent SGLang prints
// plain gauges instead) and its runtime LoRA API, `POST /load_lora_adapter` (no /v1 prefix), which
// answers `{success, error_message, loaded_adapters}`.

import type { EngineDialect } from "./engine-dialect.js";

export const sglang: EngineDialect = {
  name: "sglang",
  metrics: {
    waiting: ["sglang:num_queue_reqs"],
    running: ["sglang:num_running_reqs"],
    kvUsage: ["sglang:token_usage"],
    // GIE's model-server protocol names the info series; recent SGLang prints plain gauges instead.
    cacheConfig: {
      name: "sglang:cache_config_info",
      labels: { blockSize: "page_size", numBlocks: "num_pages" },
    },
    blockSizeGauge: ["sglang:page_size"],
    numBlocksGauge: ["sglang:num_pages"],
    lora: null,
    // SGLang's prompt counter includes cached tokens, so cached/prompt is the hit rate in tokens.
    prefixHits: ["sglang:cached_tokens_total"],
    prefixQueries: ["sglang:prompt_tokens_total"],
    prefixHitRateGauge: ["sglang:cache_hit_rate"],
    ttftBuckets: ["sglang:time_to_first_token_seconds_bucket"],
  },
  adapters: {
    loadPath: "/load_lora_adapter",
    loadBody: (name, path) => ({ lora_name: name, lora_path: path }),
    // A refusal still lists what the engine holds: the adapter among them is there already.
    alreadyLoaded: (_status, text, name) => {
      try {
        const loaded = (JSON.parse(text) as { loaded_adapters?: unknown }).loaded_adapters;
        return typeof loaded === "object" && loaded !== null && Object.hasOwn(loaded, name);
      } catch {
        return false;
      }
    },
  },
};
