// From a validated EndpointPicker config to what runs per request: the plugin instances of a profile,
// the pool's prefix index, and the prompt hashing those settings imply.

import type { EndpointPickerConfig } from "./config/endpoint-picker-config.js";
import type { PickerPlugins } from "./framework/plugin.js";
import type { PickerEndpoint, PickerProfile } from "./framework/types.js";
import { buildPeerAlgorithm } from "./peers/peers.js";
import { PICKER_PLUGINS } from "./picker-plugins.js";
import { maxScorePicker, powerOfTwoPicker } from "./pickers/max-score.js";
import { promptBlockHashes } from "./prefix-index/block-hashes.js";
import { PrefixIndex } from "./prefix-index/prefix-index.js";

/** The profile's plugin instances, built by the registries the config was parsed against. */
export function buildPickerProfile(
  config: EndpointPickerConfig,
  plugins: PickerPlugins = PICKER_PLUGINS,
): PickerProfile {
  return {
    filters: config.filters.map((f) => plugins.filters.get(f.type).create(f.params, f.failOpen)),
    scorers: config.scorers
      .filter((s) => s.weight > 0)
      .map((s) => ({ scorer: plugins.scorers.get(s.type).create(s.params), weight: s.weight })),
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
