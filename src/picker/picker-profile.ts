// From a validated EndpointPicker config to what runs per request: the plugin instances of a profile,
// the pool's prefix index, and the prompt hashing those settings imply.

import type { EndpointPickerConfig, FilterRef, ScorerRef } from "./config/endpoint-picker-config.js";
import {
  concurrencyCapFilter,
  kvWatermarkFilter,
  loraAvailableFilter,
  metricsFreshFilter,
  notDrainingFilter,
  readyFilter,
  servesModelFilter,
} from "./filters/endpoint-filters.js";
import type { Filter, PickerEndpoint, PickerProfile, Scorer } from "./framework/types.js";
import { buildPeerAlgorithm } from "./peers/peers.js";
import { maxScorePicker, powerOfTwoPicker } from "./pickers/max-score.js";
import { promptBlockHashes } from "./prefix-index/block-hashes.js";
import { PrefixIndex } from "./prefix-index/prefix-index.js";
import { inflightTokensScorer } from "./scorers/inflight-tokens/inflight-tokens.js";
import { kvCacheScorer } from "./scorers/kv-cache/kv-cache.js";
import { loraAffinityScorer } from "./scorers/lora-affinity/lora-affinity.js";
import { predictedDelayScorer } from "./scorers/predicted-delay/predicted-delay.js";
import { prefixAffinityScorer } from "./scorers/prefix-affinity/prefix-affinity.js";
import { queueDepthScorer } from "./scorers/queue-depth/queue-depth.js";
import { sessionAffinityScorer } from "./scorers/session-affinity/session-affinity.js";

function buildFilter(ref: FilterRef): Filter {
  const p = ref.params;
  const fo = ref.failOpen;
  switch (ref.type) {
    case "ready":
      return readyFilter(fo);
    case "not-draining":
      return notDrainingFilter(fo);
    case "serves-model":
      return servesModelFilter(fo);
    case "lora-available":
      return loraAvailableFilter(fo);
    case "kv-watermark":
      return kvWatermarkFilter(p.threshold as number, fo);
    case "concurrency-cap":
      return concurrencyCapFilter(p.maxInflight as number, fo);
    case "metrics-fresh":
      return metricsFreshFilter(p.mode as "require" | "prefer", fo, p.graceMs as number | undefined);
  }
  throw new Error(
    `unknown filter type ${JSON.stringify(ref.type)} (the config parser admits only known types)`,
  );
}

function buildScorer(ref: ScorerRef): Scorer {
  switch (ref.type) {
    case "prefix-affinity":
      return prefixAffinityScorer();
    case "queue-depth":
      return queueDepthScorer();
    case "kv-cache":
      return kvCacheScorer();
    case "inflight-tokens":
      return inflightTokensScorer(ref.params.floorTokens as number);
    case "predicted-delay":
      return predictedDelayScorer();
    case "lora-affinity":
      return loraAffinityScorer();
    case "session-affinity":
      return sessionAffinityScorer();
  }
  throw new Error(
    `unknown scorer type ${JSON.stringify(ref.type)} (the config parser admits only known types)`,
  );
}

export function buildPickerProfile(config: EndpointPickerConfig): PickerProfile {
  return {
    filters: config.filters.map(buildFilter),
    scorers: config.scorers
      .filter((s) => s.weight > 0)
      .map((s) => ({ scorer: buildScorer(s), weight: s.weight })),
    picker: config.picker.type === "power-of-two" ? powerOfTwoPicker() : maxScorePicker(),
    failOpen: config.failOpen,
    loadGuard: config.loadGuard,
    cost: config.costModel,
    backupPool: config.backupPool,
    topScores: config.topScores,
    peer: config.algorithm === "tokengate" ? null : buildPeerAlgorithm(config.algorithm),
  };
}

/** The header whose value is the session key, when session affinity is configured. */
export function sessionHeader(config: EndpointPickerConfig): string | null {
  const s = config.scorers.find((r) => r.type === "session-affinity");
  return s ? (s.params.header as string) : null;
}

export function createPrefixIndex(config: EndpointPickerConfig): PrefixIndex {
  return new PrefixIndex({
    maxBlocks: config.prefixIndex.maxBlocks,
    maxEndpoints: config.prefixIndex.maxEndpoints,
  });
}

/**
 * The prompt's block hashes with the config's block size and prefix cap. Pass a long prompt as its parts
 * (role tags and contents in order) rather than joined: see `promptBlockHashes`.
 */
export function promptHashesFor(
  config: EndpointPickerConfig,
  text: string | readonly string[],
  model: string,
  lora: string | null,
): Float64Array {
  return promptBlockHashes(text, model, lora, {
    blockBytes: config.prefixIndex.blockBytes,
    maxBlocks: config.prefixIndex.maxPrefixBlocks,
  });
}

/**
 * Sizes each endpoint's share of the index from what its engine reports (`num_gpu_blocks` × its block
 * size, in the index's blocks); call after scrapes. Cheap when nothing changed.
 */
export function syncIndexCapacity(
  index: PrefixIndex,
  config: EndpointPickerConfig,
  endpoints: readonly PickerEndpoint[],
): void {
  if (!config.prefixIndex.capacityFromEngine) return;
  const perBlock = config.costModel.tokensPerBlock;
  for (const e of endpoints) {
    if (e.numGpuBlocks === null || e.blockSize === null) continue;
    index.setEndpointCapacity(e.name, Math.floor((e.numGpuBlocks * e.blockSize) / perBlock));
  }
}
