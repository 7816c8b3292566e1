// The peer algorithms by name (an EndpointPicker's `algorithm`), each a fresh instance with its own state.

import { aibrixPrefixCache } from "./aibrix-prefix-cache.js";
import { dynamoKv } from "./dynamo-kv.js";
import { llmD } from "./llm-d.js";
import type { PeerAlgorithm, PeerName } from "./peer-algorithm.js";
import { sglangCacheAware } from "./sglang-cache-aware.js";

const BUILD: Readonly<Record<PeerName, () => PeerAlgorithm>> = {
  "llm-d": llmD,
  "sglang-cache-aware": () => sglangCacheAware(),
  "dynamo-kv": dynamoKv,
  "aibrix-prefix-cache": () => aibrixPrefixCache(),
};

export function buildPeerAlgorithm(name: PeerName): PeerAlgorithm {
  return BUILD[name]();
}
