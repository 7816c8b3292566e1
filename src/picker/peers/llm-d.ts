// llm-d's scheduler with its default plugins: the Gateway API Inference Extension EPP's built-in default
// configuration, which llm-d's Helm chart and code keep (kubernetes-sigs/gateway-api-inference-extension
// at 1748e829, the last commit before the EPP moved to llm-d: pkg/epp/config/loader/defaults.go; the
// scorers in pkg/epp/framework/plugins/scheduling/scorer/{queuedepth/queue.go,
// kvcacheutilization/kvcache_utilization.go, prefix/plugin.go}; the picker in .../picker/max_score_picker.go).
//
//   score = 2·queue + 2·kv + 3·prefix, the endpoint with the highest score wins, ties at random
//   queue  = (maxQ − q) / (maxQ − minQ) over the candidates, 1 for all when every q is equal
//            (q: the engine's scraped waiting queue, vllm:num_requests_waiting)
//   kv     = 1 − KV-cache usage (vllm:kv_cache_usage_perc)
//   prefix = matched blocks / the request's blocks, from an index learned from the EPP's own routing
//            (16-token blocks of 4 characters a token, at most 256 blocks: the pool's EndpointPicker
//            prefixIndex defaults are the same)
//
// The max-score picker shuffles the candidates and then stable-sorts by score: ties are uniform.
// Without flow control (the default) nothing waits in the EPP.

import {
  argBest,
  type PeerAlgorithm,
  type PeerChoice,
  type PeerContext,
  type PeerEndpoint,
  r3,
} from "./peer-algorithm.js";

export const LLM_D_WEIGHTS = { queue: 2, kv: 2, prefix: 3 } as const;

export function llmD(): PeerAlgorithm {
  return {
    name: "llm-d",
    follows:
      "gateway-api-inference-extension@1748e829 pkg/epp/config/loader/defaults.go (queue 2, kv 2, prefix 3)",
    needsText: false,
    choose(ctx: PeerContext, es: readonly PeerEndpoint[]): PeerChoice {
      const n = es.length;
      let minQ = Number.POSITIVE_INFINITY;
      let maxQ = Number.NEGATIVE_INFINITY;
      for (const e of es) {
        const q = e.waiting ?? 0;
        minQ = Math.min(minQ, q);
        maxQ = Math.max(maxQ, q);
      }
      const blocks = ctx.request.blockHashes.length;
      const queue = (e: PeerEndpoint) => (maxQ === minQ ? 1 : (maxQ - (e.waiting ?? 0)) / (maxQ - minQ));
      const kv = (e: PeerEndpoint) => 1 - Math.min(1, Math.max(0, e.kvUsage ?? 0));
      const prefix = (i: number) => (blocks === 0 ? 0 : Math.min(1, ctx.matchedBlocks[i]! / blocks));
      const total = (i: number) =>
        LLM_D_WEIGHTS.queue * queue(es[i]!) +
        LLM_D_WEIGHTS.kv * kv(es[i]!) +
        LLM_D_WEIGHTS.prefix * prefix(i);
      const index = argBest(n, total, "most", ctx.random);
      const lines = es.map((e, i) => ({
        endpoint: e.name,
        total: r3(total(i)),
        perScorer: { queue: r3(queue(e)), kv: r3(kv(e)), prefix: r3(prefix(i)) },
      }));
      const c = lines[index]!;
      return {
        index,
        why: `llm-d: ${c.endpoint} scored ${c.total} = 2·queue ${c.perScorer.queue} + 2·kv ${c.perScorer.kv} + 3·prefix ${c.perScorer.prefix}`,
        lines,
      };
    },
  };
}
