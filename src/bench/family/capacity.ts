// What a simulated fleet can take, from its engines' profiles: prefill tokens per second (the step law
// with the scheduler's full chunk per step) and the context window every request must fit.

import { makeEngineConfig } from "../../sim/engine-config.js";
import type { FleetSpec, ReplicaGroup } from "../../sim/fleet.js";
import { schedulerConfig } from "../../sim/scheduler.js";

/**
 * Prompt tokens per second one engine of the group prefills when it does nothing else: each step takes
 * β0 + β1·C µs for a chunk of C = max_num_batched_tokens tokens, so C·10⁶ / (β0 + β1·C). An upper bound
 * of what it does under load: decodes share the step's token budget and add β2 each.
 * @example enginePrefillTokensPerS(replicaGroup("e", 1, "h100-llama8b", "m")) // 55,703 (1e6/β1 would say 57,971)
 */
export function enginePrefillTokensPerS(group: ReplicaGroup): number {
  const cfg = makeEngineConfig(group.profile, group.model, group.engine);
  const chunk = schedulerConfig(cfg).maxNumBatchedTokens;
  return (chunk * 1e6) / (cfg.beta0Us + cfg.beta1Us * chunk);
}

/** The fleet's prefill capacity: the sum over its engines, prompt tokens per second. */
export function fleetPrefillTokensPerS(fleet: FleetSpec): number {
  return fleet.groups.reduce((a, g) => a + g.replicas * enginePrefillTokensPerS(g), 0);
}

/** The smallest context window (max_model_len) among the fleet's engines, tokens. */
export function fleetContextWindow(fleet: FleetSpec): number {
  return Math.min(...fleet.groups.map((g) => makeEngineConfig(g.profile, g.model, g.engine).maxModelLen));
}

/**
 * Tokens of the window a trace request may use (prefix + input + max_tokens): the window less what the
 * replay adds (the chat template's markers, a few tokens a message) and the generated text's error in
 * length (within 1% of the tokens asked).
 */
export function usableContext(window: number): number {
  return window - Math.ceil(window * 0.01) - 64;
}
