// NVIDIA Dynamo's KV router with its defaults (ai-dynamo/dynamo, docs/architecture/kv_cache_routing.md at
// 615bfede and docs/components/router/router-configuration.md: the cost function; the selection in
// lib/kv-router/src/scheduling/selector.rs): overlap score weight 1.0, temperature 0, prefill tokens
// tracked, no router queue threshold.
//
//   cost = overlap_weight × prefill_blocks + decode_blocks, the lowest cost wins, ties at random
//   prefill_blocks = (tokens still to prefill on the worker + this request's tokens not cached there)
//                    / block size
//   decode_blocks  = the worker's active KV blocks: the prompts of its sequences in flight / block size
//
// Both loads are the router's own accounting of what it sent (active prefill tokens fall when the first
// token marks prefill complete); overlap comes from an index of its own decisions, as in Dynamo's mode
// without KV events (--no-router-kv-events). Simplifications, named: shared prompt blocks of concurrent
// sequences count once per sequence (Dynamo's assume_kv_reuse would count them once), and ties go at
// random rather than first to the smallest radix tree.

import {
  argBest,
  type PeerAlgorithm,
  type PeerChoice,
  type PeerContext,
  type PeerEndpoint,
  r3,
} from "./peer-algorithm.js";

export const DYNAMO_OVERLAP_WEIGHT = 1.0;
/** vLLM's default KV block size, when the engine does not report one. */
const DEFAULT_BLOCK_TOKENS = 16;

export interface DynamoCost {
  readonly prefillBlocks: number;
  readonly decodeBlocks: number;
  readonly cost: number;
}

/** The cost of sending a request of `inputTokens`, of which `overlapTokens` are cached, to `e`. */
export function dynamoCost(
  e: PeerEndpoint,
  inputTokens: number,
  overlapTokens: number,
  overlapWeight = DYNAMO_OVERLAP_WEIGHT,
): DynamoCost {
  const block = e.blockSize ?? DEFAULT_BLOCK_TOKENS;
  const newTokens = Math.max(0, inputTokens - overlapTokens);
  const prefillBlocks = ((e.pendingPrefillTokens ?? 0) + newTokens) / block;
  const decodeBlocks = (e.inflightPromptTokens ?? 0) / block;
  return { prefillBlocks, decodeBlocks, cost: overlapWeight * prefillBlocks + decodeBlocks };
}

export function dynamoKv(): PeerAlgorithm {
  return {
    name: "dynamo-kv",
    follows:
      "dynamo@615bfede docs/architecture/kv_cache_routing.md; lib/kv-router/src/scheduling/selector.rs",
    needsText: false,
    choose(ctx: PeerContext, es: readonly PeerEndpoint[]): PeerChoice {
      const input = ctx.request.inputTokens;
      const costs = es.map((e, i) =>
        dynamoCost(e, input, Math.min(input, ctx.matchedBlocks[i]! * ctx.tokensPerBlock)),
      );
      const index = argBest(es.length, (i) => costs[i]!.cost, "least", ctx.random);
      const lines = es.map((e, i) => ({
        endpoint: e.name,
        total: r3(costs[i]!.cost),
        perScorer: { prefill_blocks: r3(costs[i]!.prefillBlocks), decode_blocks: r3(costs[i]!.decodeBlocks) },
      }));
      const c = costs[index]!;
      return {
        index,
        why: `dynamo-kv: ${es[index]!.name} at the least cost ${r3(c.cost)} = ${r3(c.prefillBlocks)} prefill + ${r3(c.decodeBlocks)} decode blocks`,
        lines,
      };
    },
  };
}
