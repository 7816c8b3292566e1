// The simulated engine's paged KV cache: a fixed pool of blocks, automatic prefix caching by chained
// block hash, and a least-recently-freed eviction queue, following vLLM V1's KVCacheManager.

import type { BlockHash } from "./block-hash.js";

export interface KvBlock {
  readonly id: number;
  refCount: number;
  /** Hash of the full block's content once cached; -1 while empty or partial. */
  hash: BlockHash;
  prev: KvBlock | null;
  next: KvBlock | null;
  inFreeQueue: boolean;
}

/** What the cache needs to know of a request: its blocks, and the hashes of its full blocks. */
export interface KvSequence {
  blocks: KvBlock[];
  /** Hashes of the sequence's full blocks (prompt blocks known up front, output blocks as they fill). */
  blockHashes: BlockHash[];
  /** How many leading blocks have been offered to the prefix cache. */
  numRegisteredBlocks: number;
}

export class KvCache {
  readonly numBlocks: number;
  readonly blockSize: number;
  readonly prefixCaching: boolean;
  private readonly blocks: KvBlock[];
  private readonly cached = new Map<BlockHash, KvBlock>();
  // Doubly linked free queue: the head is evicted first. Freed blocks join at the tail.
  private head: KvBlock | null = null;
  private tail: KvBlock | null = null;
  private free = 0;

  constructor(numBlocks: number, blockSize: number, prefixCaching = true) {
    this.numBlocks = numBlocks;
    this.blockSize = blockSize;
    this.prefixCaching = prefixCaching;
    this.blocks = [];
    for (let i = 0; i < numBlocks; i++) {
      this.blocks.push({ id: i, refCount: 0, hash: -1, prev: null, next: null, inFreeQueue: false });
    }
    this.reset();
  }

  /** Forget every cached block and free everything (used between benchmark runs). */
  reset(): void {
    this.cached.clear();
    this.head = this.tail = null;
    this.free = 0;
    for (const b of this.blocks) {
      b.refCount = 0;
      b.hash = -1;
      b.inFreeQueue = false;
      b.prev = b.next = null;
      this.pushTail(b);
    }
  }

  get numFreeBlocks(): number {
    return this.free;
  }

  /** Fraction of blocks held by live requests (vLLM: 1 - free / total; cached-but-idle blocks count as free). */
  usage(): number {
    return this.numBlocks === 0 ? 0 : 1 - this.free / this.numBlocks;
  }

  get numCachedBlocks(): number {
    return this.cached.size;
  }

  /**
   * The longest run of leading blocks already in the cache, at most `maxBlocks` long. Lookup stops at
   * the first miss, as vLLM's does. The blocks are not pinned until `allocate` takes them.
   */
  findCachedPrefix(hashes: readonly BlockHash[], maxBlocks: number): KvBlock[] {
    const hits: KvBlock[] = [];
    if (!this.prefixCaching) return hits;
    const n = Math.min(maxBlocks, hashes.length);
    for (let i = 0; i < n; i++) {
      const b = this.cached.get(hashes[i]!);
      if (!b) break;
      hits.push(b);
    }
    return hits;
  }

  /**
   * Gives `seq` enough blocks to hold `numTokens` tokens, first taking the prefix-cache `hits` (which
   * must directly follow the sequence's current blocks). All or nothing: returns false and changes
   * nothing when the free blocks cannot cover it.
   */
  allocate(seq: KvSequence, numTokens: number, hits: readonly KvBlock[] = []): boolean {
    const needed = Math.ceil(numTokens / this.blockSize) - seq.blocks.length - hits.length;
    let hitsInFreeQueue = 0;
    for (const h of hits) if (h.inFreeQueue) hitsInFreeQueue++;
    if (Math.max(0, needed) + hitsInFreeQueue > this.free) return false;
    for (const h of hits) {
      if (h.inFreeQueue) this.unlink(h);
      h.refCount++;
      seq.blocks.push(h);
    }
    if (hits.length > 0) seq.numRegisteredBlocks = seq.blocks.length;
    for (let i = 0; i < needed; i++) {
      const b = this.popHead()!;
      b.refCount = 1;
      seq.blocks.push(b);
    }
    return true;
  }

  /** Offers the sequence's newly completed blocks (those fully covered by `numComputedTokens`) to the cache. */
  registerFullBlocks(seq: KvSequence, numComputedTokens: number): void {
    if (!this.prefixCaching) return;
    const full = Math.min(
      Math.floor(numComputedTokens / this.blockSize),
      seq.blockHashes.length,
      seq.blocks.length,
    );
    for (let i = seq.numRegisteredBlocks; i < full; i++) {
      const b = seq.blocks[i]!;
      const h = seq.blockHashes[i]!;
      if (b.hash === -1) {
        b.hash = h;
        // Two requests may compute the same content at once; the first copy stays the cached one.
        if (!this.cached.has(h)) this.cached.set(h, b);
      }
    }
    if (full > seq.numRegisteredBlocks) seq.numRegisteredBlocks = full;
  }

  /** Releases every block of the sequence; tail blocks are queued first so they are evicted first. */
  release(seq: KvSequence): void {
    for (let i = seq.blocks.length - 1; i >= 0; i--) {
      const b = seq.blocks[i]!;
      b.refCount--;
      if (b.refCount === 0) {
        if (b.hash === -1 || this.cached.get(b.hash) !== b) b.hash = -1;
        this.pushTail(b);
      }
    }
    seq.blocks = [];
    seq.numRegisteredBlocks = 0;
  }

  private pushTail(b: KvBlock): void {
    b.inFreeQueue = true;
    b.next = null;
    b.prev = this.tail;
    if (this.tail) this.tail.next = b;
    else this.head = b;
    this.tail = b;
    this.free++;
  }

  private unlink(b: KvBlock): void {
    if (b.prev) b.prev.next = b.next;
    else this.head = b.next;
    if (b.next) b.next.prev = b.prev;
    else this.tail = b.prev;
    b.prev = b.next = null;
    b.inFreeQueue = false;
    this.free--;
  }

  private popHead(): KvBlock | null {
    const b = this.head;
    if (!b) return null;
    this.unlink(b);
    // Reusing a cached block evicts its content.
    if (b.hash !== -1) {
      if (this.cached.get(b.hash) === b) this.cached.delete(b.hash);
      b.hash = -1;
    }
    return b;
  }
}
