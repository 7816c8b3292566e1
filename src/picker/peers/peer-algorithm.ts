// The peers' routing algorithms as tokengate picker profiles: what llm-d, SGLang's router, Dynamo and
// AIBrix would choose, run inside tokengate's own gateway so that a benchmark compares algorithms and
// nothing else (the same process, HTTP stack, health checks, scrapes and prefix index). A peer sees the
// candidates tokengate's hard filters kept (healthy, serving the model) and chooses one; the gateway's
// queue is off for it, as it is by default in each peer. Each file names the source and commit it follows.

import type { PeerChoice, PeerChooser, PeerContext, PickerEndpoint } from "../framework/types.js";

export type { PeerChoice, PeerContext };

export const PEER_ALGORITHMS = ["llm-d", "sglang-cache-aware", "dynamo-kv", "aibrix-prefix-cache"] as const;
export type PeerName = (typeof PEER_ALGORITHMS)[number];
/** The peers that read the prompt as text (`PickRequest.promptText`), which the plan then joins for them. */
export const PEERS_READING_TEXT: ReadonlySet<string> = new Set<PeerName>(["sglang-cache-aware"]);

/** What a peer may read of an endpoint beyond the picker's view: load the gateway itself tracks. */
export interface PeerEndpoint extends PickerEndpoint {
  /** Uncached prompt tokens sent here and not yet first-tokened (Dynamo's active prefill tokens). */
  readonly pendingPrefillTokens?: number;
  /** Prompt tokens of the requests in flight here (Dynamo's active blocks, by its block size). */
  readonly inflightPromptTokens?: number;
}

export interface PeerAlgorithm extends PeerChooser {
  readonly name: PeerName;
  /** The source file(s) and commit the implementation follows. */
  readonly follows: string;
  /** True when it reads `request.promptText` (SGLang's character tree). */
  readonly needsText: boolean;
  choose(ctx: PeerContext, candidates: readonly PeerEndpoint[]): PeerChoice;
}

/** Uniformly random among the indices `i` with `key(i)` equal to the best (least or most), as the peers break ties. */
export function argBest(
  n: number,
  key: (i: number) => number,
  better: "least" | "most",
  random: () => number,
): number {
  let best = -1;
  let bestKey = 0;
  let ties = 0;
  for (let i = 0; i < n; i++) {
    const k = key(i);
    const wins = best < 0 || (better === "least" ? k < bestKey : k > bestKey);
    if (wins) {
      best = i;
      bestKey = k;
      ties = 1;
    } else if (k === bestKey) {
      // Reservoir sampling over the ties: each of them equally likely.
      ties++;
      if (Math.floor(random() * ties) === 0) best = i;
    }
  }
  return best;
}

/** Rounded for a log line. */
export function r3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
