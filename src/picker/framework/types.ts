// The picker's extension points, in the shape of the Gateway API Inference Extension's scheduling
// framework: filters remove, scorers rate in [0,1], a picker chooses; every step can say why.

import type { LoraState } from "../../endpoints/dialects.js";
import type { PrefixIndex } from "../prefix-index/prefix-index.js";

/** What the picker reads of an endpoint; `EndpointState` satisfies it. */
export interface PickerEndpoint {
  readonly name: string;
  readonly healthy: boolean;
  readonly draining: boolean;
  readonly ejectedUntil: number;
  /** Why a healthy endpoint is held back now (an engine's Retry-After, its circuit breaker); absent: never. */
  holdWhy?(now: number): string | null;
  readonly inflightRequests: number;
  readonly inflightTokens: number;
  readonly waiting: number | null;
  readonly running: number | null;
  readonly kvUsage: number | null;
  readonly blockSize: number | null;
  readonly numGpuBlocks: number | null;
  readonly loras: LoraState | null;
  /**
   * The gateway's record of adapters it sent here lately (vLLM reports only adapters with requests
   * running or waiting; an idle one stays loaded until evicted). Absent: no record.
   */
  readonly adapterRecord?: {
    likelyResident(adapter: string): boolean;
    /** Adapters with the gateway's own requests running on the endpoint now. */
    active(): Iterable<string>;
    isActive(adapter: string): boolean;
    /** A slot being freed here for another adapter: no new request for `evicting`. */
    reserved?(now: number): { readonly adapter: string; readonly evicting: string } | null;
  };
  /** Served model and version, when the endpoint declares them; absent means "the pool's model". */
  readonly model?: string | null;
  readonly modelVersion?: string | null;
  /**
   * When the last good scrape was (ms, the clock `metricsFresh` reads); null: never. Optional: an
   * endpoint that does not say is treated as stale for longer than any grace.
   */
  readonly scrapedAt?: number | null;
  metricsFresh(now: number): boolean;
  /**
   * Predicted ms to the first token of a request bringing `uncached` prompt tokens, sent now, from the
   * endpoint's own prefill view and learned rates (endpoints/prefill-load.ts). Absent: the cost model's
   * estimate from the queue.
   */
  predictTtftMs?(uncached: number, now: number): number;
}

/** The part of a request the picker reads. */
export interface PickRequest {
  /** Served model name. */
  readonly model: string;
  /** Required model version; null accepts any. */
  readonly modelVersion: string | null;
  readonly lora: string | null;
  readonly inputTokens: number;
  readonly maxTokens: number;
  /** Chained prompt block hashes (`promptBlockHashes`); empty when the prompt is under one block. */
  readonly blockHashes: ArrayLike<number>;
  /** Value of the session header; null when absent. */
  readonly sessionKey: string | null;
  /**
   * The prompt as text (a chat's messages in order), given only to a peer algorithm that reads it
   * (SGLang's character tree, `picker/peers/`); absent otherwise.
   */
  readonly promptText?: string;
}

export interface PickContext {
  readonly request: PickRequest;
  readonly now: number;
  /** The pool's prefix index; null disables prefix affinity. */
  readonly prefixIndex?: PrefixIndex | null;
  /** Injected for tests; defaults to Math.random. */
  readonly random?: () => number;
}

/** Where the load signals of one pick came from. */
export type Signals = "metrics" | "predicted";

/** How the estimate of queue wait and prefill cost is made (the load guard and delay scorer share it). */
export interface CostModel {
  /** Prefill cost of one uncached prompt token, in ms. */
  readonly prefillMsPerToken: number;
  /** Wait added by one request queued ahead, in ms. */
  readonly waitingRequestMs: number;
  /** Tokens per prefix block (the engine's block size). */
  readonly tokensPerBlock: number;
}

/** What scorers see: the context plus what the cycle computed once for every scorer. */
export interface ScoringContext extends PickContext {
  readonly signals: Signals;
  /** Leading prompt blocks each candidate probably holds, aligned with the candidate list. */
  readonly matchedBlocks: ArrayLike<number>;
  /** Predicted time to first token per candidate, ms (`cost-model.ts`), shared with the load guard. */
  readonly delayMs: ArrayLike<number>;
  readonly cost: CostModel;
}

export interface FilterOutcome<E> {
  readonly kept: readonly E[];
  readonly removed: readonly { endpoint: E; why: string }[];
  /** Said when the filter changed its own behaviour (e.g. "prefer" keeping stale endpoints). */
  readonly note?: string;
}

export interface Filter {
  readonly type: string;
  /** Overrides the profile's failOpen for this filter. */
  readonly failOpen?: boolean;
  filter<E extends PickerEndpoint>(ctx: PickContext, endpoints: readonly E[]): FilterOutcome<E>;
}

export type ScorerCategory = "affinity" | "distribution" | "balance";

export interface Scorer {
  readonly type: string;
  readonly category: ScorerCategory;
  /** The load guard may overrule this scorer's preference (cache and session affinity, not LoRA). */
  readonly yieldsToLoad?: boolean;
  /**
   * One value in [0,1] per endpoint, aligned with `endpoints`. With `out` (at least as long as
   * `endpoints`), the values are written there and `out` is returned: the pick cycle passes reused
   * buffers so that a pick allocates no per-endpoint arrays.
   */
  score(ctx: ScoringContext, endpoints: readonly PickerEndpoint[], out?: Float64Array): ArrayLike<number>;
}

export interface PickerChoice {
  readonly index: number;
  /** `p2c` when the scores carried no signal and two random candidates were compared by load. */
  readonly how: "max_score" | "p2c";
  readonly why: string;
}

export interface Picker {
  readonly type: string;
  /** `totals[i]` is endpoint i's weighted sum; the array may be longer than `endpoints`. */
  pick(ctx: ScoringContext, endpoints: readonly PickerEndpoint[], totals: ArrayLike<number>): PickerChoice;
}

export interface WeightedScorer {
  readonly scorer: Scorer;
  readonly weight: number;
}

/** A built, ready-to-run picker profile (from `buildPickerProfile(config)`). */
export interface PickerProfile {
  readonly filters: readonly Filter[];
  readonly scorers: readonly WeightedScorer[];
  readonly picker: Picker;
  readonly failOpen: boolean;
  /** Null disables the load guard. */
  readonly loadGuard: { readonly marginMs: number } | null;
  readonly cost: CostModel;
  /** Named in the result when no endpoint is left; null fails fast. */
  readonly backupPool: string | null;
  /** How many candidates the result lists in `topScores`. */
  readonly topScores: number;
  /** A peer's algorithm chooses among the filtered candidates instead of the scorers and picker; absent: none. */
  readonly peer?: PeerChooser | null;
}

/** What a peer's algorithm (picker/peers/) is given, besides the candidates the filters kept. */
export interface PeerContext {
  readonly request: PickRequest;
  readonly now: number;
  /**
   * Leading prompt blocks each candidate probably holds, from the pool's prefix index, which learns from
   * this gateway's own decisions as llm-d's approximate prefix scorer and Dynamo's and AIBrix's
   * event-less modes do. Aligned with the candidates.
   */
  readonly matchedBlocks: ArrayLike<number>;
  /** Tokens one index block stands for (the pool's EndpointPicker prefixIndex.tokensPerBlock). */
  readonly tokensPerBlock: number;
  readonly random: () => number;
}

export interface PeerChoice {
  /** Index into the candidates. */
  readonly index: number;
  /** One line a log reader can check against the source's formula. */
  readonly why: string;
  /** Each candidate's figures (higher is better for score-based peers; Dynamo's is a cost). */
  readonly lines: readonly ScoreLine[];
}

/** A peer's algorithm as the picker calls it. */
export interface PeerChooser {
  readonly name: string;
  choose(ctx: PeerContext, candidates: readonly PickerEndpoint[]): PeerChoice;
}

/** Degradation order: metrics → predicted → p2c → backup_pool / no_endpoint. */
export type PickMode = "metrics" | "predicted" | "affinity_yielded" | "p2c" | "backup_pool" | "no_endpoint";

export interface ScoreLine {
  readonly endpoint: string;
  readonly total: number;
  readonly perScorer: Record<string, number>;
}

export interface PickResult<E> {
  readonly endpoint: E | null;
  readonly mode: PickMode;
  readonly signals: Signals | null;
  readonly reason: string;
  /** Set with mode `backup_pool`. */
  readonly backupPool: string | null;
  readonly topScores: ScoreLine[];
  readonly filtered: { endpoint: string; filter: string; why: string }[];
  /** Fail-open and other changes of behaviour, in order. */
  readonly notes: string[];
  /** The chosen endpoint's predicted TTFT (ms) and the prompt tokens it probably lacks; null: none chosen. */
  readonly predictedTtftMs: number | null;
  readonly uncachedTokens: number | null;
}
