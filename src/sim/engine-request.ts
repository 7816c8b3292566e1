// One request inside the simulated engine: its tokens, KV blocks, progress and timestamps.

import { type BlockHash, hashBlock } from "./block-hash.js";
import type { KvBlock, KvSequence } from "./kv-cache.js";

export type FinishReason = "stop" | "length" | "abort";
export type RequestStatus = "api" | "waiting" | "running" | "finished";

/** How the engine hands results back to whoever submitted the request (the HTTP layer, a test). */
export interface RequestSink {
  /** A new output token (index `i`) was sampled at the end of a step; `finish` is set on the last one. */
  onToken(req: EngineRequest, i: number, finish: FinishReason | null): void;
  onFinish(req: EngineRequest, reason: FinishReason): void;
}

export interface EngineRequestInit {
  id: string;
  promptTokens: ArrayLike<number>;
  /** Upper bound of output tokens (after defaulting to max_model_len - prompt). */
  maxTokens: number;
  /** How many tokens will actually be generated (≤ maxTokens); fewer means finish_reason "stop". */
  targetOutputTokens: number;
  lora: string | null;
  /** Chain root for block hashes: model and LoRA salted. */
  salt: BlockHash;
  /** Token id of the i-th generated token (so generated blocks hash like a later prompt containing them). */
  outputTokenId: (i: number) => number;
  sink: RequestSink;
  /** Scheduling priority (lower runs first) when the engine uses priority scheduling. */
  priority?: number;
}

export class EngineRequest implements KvSequence {
  readonly id: string;
  readonly promptLen: number;
  readonly maxTokens: number;
  readonly targetOutputTokens: number;
  readonly lora: string | null;
  readonly priority: number;
  readonly sink: RequestSink;
  /** Prompt followed by generated tokens; sized once for the whole life of the request. */
  readonly tokens: Uint32Array;
  outputLen = 0;
  numComputed = 0;
  blocks: KvBlock[] = [];
  blockHashes: BlockHash[] = [];
  numRegisteredBlocks = 0;
  status: RequestStatus = "api";
  /** Prompt tokens found in the prefix cache when first scheduled (usage.prompt_tokens_details.cached_tokens). */
  cachedTokens = -1;
  preemptions = 0;
  finishReason: FinishReason | null = null;
  // Timestamps on the engine clock (ms, performance.now() scale); NaN until they happen.
  arrivedAt = Number.NaN;
  queuedAt = Number.NaN;
  firstScheduledAt = Number.NaN;
  firstTokenAt = Number.NaN;
  lastTokenAt = Number.NaN;
  finishedAt = Number.NaN;
  private readonly salt: BlockHash;
  private readonly outputTokenId: (i: number) => number;

  constructor(init: EngineRequestInit, blockSize: number) {
    this.id = init.id;
    this.promptLen = init.promptTokens.length;
    this.maxTokens = init.maxTokens;
    this.targetOutputTokens = Math.min(init.targetOutputTokens, init.maxTokens);
    this.lora = init.lora;
    this.priority = init.priority ?? 0;
    this.sink = init.sink;
    this.salt = init.salt;
    this.outputTokenId = init.outputTokenId;
    this.tokens = new Uint32Array(this.promptLen + this.maxTokens);
    this.tokens.set(init.promptTokens as ArrayLike<number>);
    const fullBlocks = Math.floor(this.promptLen / blockSize);
    let parent = this.salt;
    for (let b = 0; b < fullBlocks; b++) {
      parent = hashBlock(parent, this.tokens, b * blockSize, blockSize);
      this.blockHashes.push(parent);
    }
  }

  /** Tokens the sequence holds now: prompt plus generated. */
  get numTokens(): number {
    return this.promptLen + this.outputLen;
  }

  /** Appends the next generated token and hashes a block it completes. */
  appendOutputToken(blockSize: number): void {
    const i = this.outputLen;
    this.tokens[this.promptLen + i] = this.outputTokenId(i);
    this.outputLen++;
    const n = this.numTokens;
    if (n % blockSize === 0) {
      const b = n / blockSize - 1;
      if (b === this.blockHashes.length) {
        const parent = b === 0 ? this.salt : this.blockHashes[b - 1]!;
        this.blockHashes.push(hashBlock(parent, this.tokens, b * blockSize, blockSize));
      }
    }
  }
}
