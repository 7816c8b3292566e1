// Every scorer the EndpointPicker config may name: one line each (a new scorer is its folder and its
// line here; docs/extending.md has a worked example).

import { PluginRegistry, type ScorerPlugin } from "../framework/plugin.js";
import { inflightTokens } from "./inflight-tokens/inflight-tokens.js";
import { kvCache } from "./kv-cache/kv-cache.js";
import { loraAffinity } from "./lora-affinity/lora-affinity.js";
import { predictedDelay } from "./predicted-delay/predicted-delay.js";
import { prefixAffinity } from "./prefix-affinity/prefix-affinity.js";
import { queueDepth } from "./queue-depth/queue-depth.js";
import { sessionAffinity } from "./session-affinity/session-affinity.js";

export const SCORERS = new PluginRegistry<ScorerPlugin>("scorer", [
  prefixAffinity,
  queueDepth,
  kvCache,
  inflightTokens,
  predictedDelay,
  loraAffinity,
  sessionAffinity,
]);
