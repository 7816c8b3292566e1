// Builds an EngineConfig from a named profile plus per-flag overrides, the way `tokengate sim` and the
// fleet file describe a replica.

import { type EngineProfile, getProfile } from "./profiles.js";

export interface EngineConfig extends Omit<EngineProfile, "name" | "description" | "gpus"> {
  profileName: string;
  /** The served model name; LoRA adapters are addressed by their own names. */
  modelName: string;
  enableChunkedPrefill: boolean;
  enablePrefixCaching: boolean;
  longPrefillTokenThreshold: number;
  maxLoras: number;
  /** Adapters served from the start, `name` or `name=path` (--lora-modules). */
  loraModules: readonly string[];
  /**
   * vLLM's --enable-lora: LoRA adapters can be served or loaded at run time, and /metrics carries
   * `vllm:lora_requests_info`. Implied by `loraModules` or `maxLoras` (vLLM ignores or refuses those
   * without --enable-lora; the simulator takes them as asking for it).
   */
  enableLora: boolean;
}

export type EngineOverrides = Partial<Omit<EngineConfig, "profileName" | "modelName">>;

export function makeEngineConfig(
  profileName: string,
  modelName: string,
  overrides: EngineOverrides = {},
): EngineConfig {
  const p = getProfile(profileName);
  const defined = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  return {
    profileName: p.name,
    modelName,
    beta0Us: p.beta0Us,
    beta1Us: p.beta1Us,
    beta2Us: p.beta2Us,
    beta3Us: p.beta3Us,
    apiServerUs: p.apiServerUs,
    numGpuBlocks: p.numGpuBlocks,
    blockSize: p.blockSize,
    maxNumSeqs: p.maxNumSeqs,
    maxNumBatchedTokens: p.maxNumBatchedTokens,
    maxModelLen: p.maxModelLen,
    loraLoadMs: p.loraLoadMs,
    enableChunkedPrefill: true,
    enablePrefixCaching: true,
    longPrefillTokenThreshold: 0,
    maxLoras: 1,
    loraModules: [],
    ...defined,
    enableLora:
      overrides.enableLora ?? ((overrides.loraModules?.length ?? 0) > 0 || overrides.maxLoras !== undefined),
  };
}

/** Why a config cannot run (e.g. a context window larger than the KV cache), or null. */
export function engineConfigProblem(cfg: EngineConfig): string | null {
  if (cfg.maxModelLen > cfg.numGpuBlocks * cfg.blockSize) {
    return (
      `max_model_len ${cfg.maxModelLen} needs more KV cache than the engine has ` +
      `(${cfg.numGpuBlocks} blocks × ${cfg.blockSize} tokens)`
    );
  }
  if (cfg.blockSize < 1 || cfg.maxNumSeqs < 1 || cfg.maxNumBatchedTokens < 1) {
    return "block_size, max_num_seqs and max_num_batched_tokens must be at least 1";
  }
  return null;
}
