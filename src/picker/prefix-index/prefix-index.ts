// Which endpoint probably holds which prompt block, learned from the gateway's own picks. One global
// block budget with least-recently-used eviction across all endpoints; storage is typed arrays only.

import type { BlockHash } from "./block-hashes.js";

export interface PrefixIndexOptions {
  /** The global budget: blocks held for all endpoints together. */
  readonly maxBlocks?: number;
  /** Endpoints one index can name at once (the bitset width per block). */
  readonly maxEndpoints?: number;
}

const NONE = -1;
const INITIAL_ENTRIES = 1024;

/**
 * Layout, per block entry (24 bytes at 64 endpoints): the 53-bit hash as two Uint32, an endpoint bitset,
 * and prev/next links of an intrusive LRU list; an open-addressing table of Int32 entry numbers (load ≤ ½,
 * linear probing, backward-shift deletion so no tombstones build up). Arrays grow by doubling up to
 * the budget, so an idle pool costs ~40 KB.
 * @example
 * const index = new PrefixIndex({ maxBlocks: 1_000_000 });
 * index.record("pod-a", hashes);   // after the pick
 * index.match(hashes);             // Map { "pod-a" => hashes.length }
 */
export class PrefixIndex {
  readonly maxBlocks: number;
  readonly maxEndpoints: number;
  private readonly words: number;
  private cap = 0;
  private used = 0;
  private live = 0;
  private keyLo = new Uint32Array(0);
  private keyHi = new Uint32Array(0);
  private bits = new Uint32Array(0);
  private prev = new Int32Array(0);
  private next = new Int32Array(0);
  private slots = new Int32Array(0);
  private mask = 0;
  private head = NONE;
  private tail = NONE;
  private free = NONE;
  private readonly ids = new Map<string, number>();
  private readonly names: (string | null)[];
  private readonly counts: Int32Array;
  private readonly capacity: Float64Array;
  private readonly alive: Uint32Array;
  private readonly matched: Int32Array;
  /** Bumped whenever a name gains or loses its slot. */
  private generation = 0;
  private slotCache: { generation: number; refs: readonly object[]; ids: Int32Array } = {
    generation: -1,
    refs: [],
    ids: new Int32Array(0),
  };

  constructor(opts: PrefixIndexOptions = {}) {
    this.maxBlocks = opts.maxBlocks ?? 1_000_000;
    this.maxEndpoints = opts.maxEndpoints ?? 64;
    if (!(this.maxBlocks >= 1) || !(this.maxEndpoints >= 1)) {
      throw new RangeError("PrefixIndex: maxBlocks and maxEndpoints must be >= 1");
    }
    this.words = Math.ceil(this.maxEndpoints / 32);
    this.names = new Array(this.maxEndpoints).fill(null);
    this.counts = new Int32Array(this.maxEndpoints);
    this.capacity = new Float64Array(this.maxEndpoints).fill(Number.POSITIVE_INFINITY);
    this.alive = new Uint32Array(this.words);
    this.matched = new Int32Array(this.maxEndpoints);
    this.grow(Math.min(INITIAL_ENTRIES, this.maxBlocks));
  }

  /** Blocks held (each counted once however many endpoints hold it). */
  get size(): number {
    return this.live;
  }

  /** Blocks the index believes `endpoint` holds. */
  blocksOf(endpoint: string): number {
    const id = this.ids.get(endpoint);
    return id === undefined ? 0 : this.counts[id]!;
  }

  /** Bytes of typed-array storage (what the budget buys). */
  bytes(): number {
    return (
      this.keyLo.byteLength +
      this.keyHi.byteLength +
      this.bits.byteLength +
      this.prev.byteLength +
      this.next.byteLength +
      this.slots.byteLength
    );
  }

  /**
   * Caps what one endpoint may hold, e.g. from the engine's scraped `num_gpu_blocks` (the engine cannot
   * keep more, so believing more would promise hits it cannot give).
   */
  setEndpointCapacity(endpoint: string, blocks: number | null): void {
    const id = this.idOf(endpoint, true);
    if (id === NONE) return;
    this.capacity[id] = blocks !== null && blocks > 0 ? blocks : Number.POSITIVE_INFINITY;
    this.trim(id);
  }

  /**
   * Notes that `endpoint` now holds these blocks. Recorded last to first, so a prompt's first blocks are
   * the most recent and eviction eats chains from the tail, as the engine's own LRU does.
   * Returns false when the index already names `maxEndpoints` others.
   */
  record(endpoint: string, hashes: ArrayLike<BlockHash>): boolean {
    const id = this.idOf(endpoint, true);
    if (id === NONE) return false;
    const w = id >>> 5;
    const bit = 1 << (id & 31);
    for (let i = hashes.length - 1; i >= 0; i--) {
      const h = hashes[i]!;
      const lo = h >>> 0;
      const hi = Math.floor(h / 4294967296);
      let e = this.find(lo, hi);
      if (e === NONE) e = this.insert(lo, hi);
      else this.unlink(e);
      this.pushFront(e);
      const at = e * this.words + w;
      if ((this.bits[at]! & bit) === 0) {
        this.bits[at]! |= bit;
        this.counts[id]!++;
      }
    }
    this.trim(id);
    return true;
  }

  /** Per endpoint, how many leading blocks of `hashes` it holds (endpoints with none are absent). */
  match(hashes: ArrayLike<BlockHash>): Map<string, number> {
    const out = new Map<string, number>();
    if (this.walk(hashes) === 0) return out;
    for (let id = 0; id < this.maxEndpoints; id++) {
      const m = this.matched[id]!;
      if (m > 0) {
        out.set(this.names[id]!, m);
        this.matched[id] = 0;
      }
    }
    return out;
  }

  /**
   * The pick's form of `match`: `out[i]` becomes how many leading blocks of `hashes` `endpoints[i]`
   * holds, with no allocation. Returns the largest.
   */
  matchInto(
    hashes: ArrayLike<BlockHash>,
    endpoints: readonly { readonly name: string }[],
    out: Float64Array,
  ): number {
    const n = endpoints.length;
    out.fill(0, 0, n);
    const longest = this.walk(hashes);
    if (longest === 0) return 0;
    const ids = this.idsOf(endpoints);
    for (let i = 0; i < n; i++) {
      const id = ids[i]!;
      if (id !== NONE) out[i] = this.matched[id]!;
    }
    this.matched.fill(0);
    return longest;
  }

  /**
   * The slot of each candidate (NONE for names the index does not know). Picks pass the same endpoint
   * objects call after call (in fresh arrays), so the answer is kept and checked by reference: 64
   * pointer comparisons instead of 64 string lookups. Any slot change (a new name, a removal) voids it.
   */
  private idsOf(endpoints: readonly { readonly name: string }[]): Int32Array {
    const c = this.slotCache;
    const n = endpoints.length;
    let same = c.generation === this.generation && c.refs.length === n;
    for (let i = 0; same && i < n; i++) same = c.refs[i] === endpoints[i];
    if (same) return c.ids;
    const ids = new Int32Array(n);
    for (let i = 0; i < n; i++) ids[i] = this.ids.get(endpoints[i]!.name) ?? NONE;
    this.slotCache = { generation: this.generation, refs: endpoints.slice(), ids };
    return ids;
  }

  /**
   * Sets `matched[id]` for every endpoint holding a leading run of `hashes`; returns the longest run.
   * By bisection, not block by block: an endpoint holding block k holds blocks 0..k−1 too. Hashes are
   * chained, so only a prompt with all of them leads to block k; `record` touches them last to first, so
   * a prompt's earlier blocks are never less recent than its later ones, and eviction (global or per
   * endpoint, both from the least recent end) takes later blocks first. So per endpoint the held blocks
   * of a prompt are a prefix, found in O(log blocks) lookups per distinct run length instead of one per
   * block (a full match of 256 blocks: 2 lookups instead of 256). `matchLinear` walks block by block.
   */
  private walk(hashes: ArrayLike<BlockHash>): number {
    const n = hashes.length;
    if (n === 0) return 0;
    const first = this.find(hashes[0]! >>> 0, Math.floor(hashes[0]! / 4294967296));
    if (first === NONE) return 0;
    let longest = 0;
    for (let w = 0; w < this.words; w++) {
      const holders = this.bits[first * this.words + w]!;
      if (holders !== 0) longest = Math.max(longest, this.bisect(hashes, w, 1, n, holders));
    }
    return longest;
  }

  /**
   * Endpoints in `mask` (word `w`) hold blocks 0..lo−1 and, when hi < length, not block hi: each one's run
   * is in [lo, hi]. Settles each and returns the longest.
   */
  private bisect(hashes: ArrayLike<BlockHash>, w: number, lo: number, hi: number, mask: number): number {
    let longest = 0;
    let m = mask >>> 0;
    while (m !== 0) {
      if (lo === hi) {
        this.settle(w, m, lo);
        return Math.max(longest, lo);
      }
      // The common case first: every one holds the whole rest.
      const probe = m === mask && lo > 0 ? hi - 1 : (lo + hi) >>> 1;
      const held = (m & this.bitsAt(hashes[probe]!, w)) >>> 0;
      const rest = (m & ~held) >>> 0;
      if (held !== 0) longest = Math.max(longest, this.bisect(hashes, w, probe + 1, hi, held));
      m = rest;
      hi = probe;
    }
    return longest;
  }

  /** The endpoint bits (word `w`) of block `h`, 0 when no one holds it. */
  private bitsAt(h: BlockHash, w: number): number {
    const e = this.find(h >>> 0, Math.floor(h / 4294967296));
    return e === NONE ? 0 : this.bits[e * this.words + w]!;
  }

  /**
   * `match`, block by block: the reference the bisection must agree with (the tests compare them).
   */
  matchLinear(hashes: ArrayLike<BlockHash>): Map<string, number> {
    const W = this.words;
    const alive = this.alive;
    let n = 0;
    for (; n < hashes.length; n++) {
      const h = hashes[n]!;
      const e = this.find(h >>> 0, Math.floor(h / 4294967296));
      if (e === NONE) break;
      let any = 0;
      for (let w = 0; w < W; w++) {
        const was = n === 0 ? 0xffffffff : alive[w]!;
        const now = was & this.bits[e * W + w]!;
        // An endpoint that drops out here held exactly n leading blocks.
        const dropped = (n === 0 ? 0 : was) & ~now;
        if (dropped !== 0) this.settle(w, dropped, n);
        alive[w] = now;
        any |= now;
      }
      if (any === 0) break;
    }
    if (n > 0) for (let w = 0; w < W; w++) if (alive[w] !== 0) this.settle(w, alive[w]!, n);
    const out = new Map<string, number>();
    for (let id = 0; id < this.maxEndpoints; id++) {
      const m = this.matched[id]!;
      if (m > 0) out.set(this.names[id]!, m);
      this.matched[id] = 0;
    }
    return out;
  }

  /** Forgets an endpoint that left the pool; its blocks held by no one else are freed. */
  removeEndpoint(endpoint: string): void {
    const id = this.ids.get(endpoint);
    if (id === undefined) return;
    const at = id >>> 5;
    const bit = 1 << (id & 31);
    for (let e = this.head; e !== NONE; ) {
      const nextE = this.next[e]!;
      this.bits[e * this.words + at]! &= ~bit;
      if (this.empty(e)) this.release(e);
      e = nextE;
    }
    this.ids.delete(endpoint);
    this.generation++;
    this.names[id] = null;
    this.counts[id] = 0;
    this.capacity[id] = Number.POSITIVE_INFINITY;
  }

  private settle(w: number, dropped: number, n: number): void {
    let d = dropped >>> 0;
    while (d !== 0) {
      const low = d & -d;
      this.matched[w * 32 + (31 - Math.clz32(low))] = n;
      d = (d ^ low) >>> 0;
    }
  }

  private idOf(endpoint: string, create: boolean): number {
    const id = this.ids.get(endpoint);
    if (id !== undefined) return id;
    if (!create) return NONE;
    const slot = this.names.indexOf(null);
    if (slot === NONE) return NONE;
    this.names[slot] = endpoint;
    this.ids.set(endpoint, slot);
    this.generation++;
    return slot;
  }

  /** Over its capacity, an endpoint loses its least recent blocks; the walk is bounded per call. */
  private trim(id: number): void {
    let excess = this.counts[id]! - this.capacity[id]!;
    if (excess <= 0) return;
    const at = id >>> 5;
    const bit = 1 << (id & 31);
    let budget = Math.max(1024, 16 * excess);
    for (let e = this.tail; e !== NONE && excess > 0 && budget-- > 0; ) {
      const prevE = this.prev[e]!;
      const k = e * this.words + at;
      if ((this.bits[k]! & bit) !== 0) {
        this.bits[k]! &= ~bit;
        this.counts[id]!--;
        excess--;
        if (this.empty(e)) this.release(e);
      }
      e = prevE;
    }
  }

  private empty(e: number): boolean {
    for (let w = 0; w < this.words; w++) if (this.bits[e * this.words + w] !== 0) return false;
    return true;
  }

  private home(lo: number, hi: number): number {
    return (lo ^ Math.imul(hi, 0x9e3779b1)) & this.mask;
  }

  private find(lo: number, hi: number): number {
    for (let s = this.home(lo, hi); ; s = (s + 1) & this.mask) {
      const v = this.slots[s]!;
      if (v === 0) return NONE;
      const e = v - 1;
      if (this.keyLo[e] === lo && this.keyHi[e] === hi) return e;
    }
  }

  private insert(lo: number, hi: number): number {
    if (this.live >= this.maxBlocks) this.evictTail();
    let e: number;
    if (this.free !== NONE) {
      e = this.free;
      this.free = this.next[e]!;
    } else {
      if (this.used === this.cap) this.grow(Math.min(this.cap * 2, this.maxBlocks));
      e = this.used++;
    }
    this.keyLo[e] = lo;
    this.keyHi[e] = hi;
    this.bits.fill(0, e * this.words, (e + 1) * this.words);
    this.place(e);
    this.live++;
    return e;
  }

  private place(e: number): void {
    let s = this.home(this.keyLo[e]!, this.keyHi[e]!);
    while (this.slots[s] !== 0) s = (s + 1) & this.mask;
    this.slots[s] = e + 1;
  }

  /** The global least recently used block goes, for every endpoint holding it. */
  private evictTail(): void {
    const e = this.tail;
    for (let w = 0; w < this.words; w++) {
      let b = this.bits[e * this.words + w]!;
      while (b !== 0) {
        const low = b & -b;
        this.counts[w * 32 + (31 - Math.clz32(low))]!--;
        b = (b ^ low) >>> 0;
      }
    }
    this.release(e);
  }

  private release(e: number): void {
    this.unlink(e);
    this.unplace(e);
    this.next[e] = this.free;
    this.free = e;
    this.live--;
  }

  private unplace(e: number): void {
    const mask = this.mask;
    let i = this.home(this.keyLo[e]!, this.keyHi[e]!);
    while (this.slots[i] !== e + 1) i = (i + 1) & mask;
    // Backward-shift deletion: pull later members of the probe run into the hole.
    for (let j = (i + 1) & mask; this.slots[j] !== 0; j = (j + 1) & mask) {
      const f = this.slots[j]! - 1;
      const k = this.home(this.keyLo[f]!, this.keyHi[f]!);
      const between = i <= j ? i < k && k <= j : i < k || k <= j;
      if (!between) {
        this.slots[i] = this.slots[j]!;
        i = j;
      }
    }
    this.slots[i] = 0;
  }

  private unlink(e: number): void {
    const p = this.prev[e]!;
    const n = this.next[e]!;
    if (p === NONE) this.head = n;
    else this.next[p] = n;
    if (n === NONE) this.tail = p;
    else this.prev[n] = p;
  }

  private pushFront(e: number): void {
    this.prev[e] = NONE;
    this.next[e] = this.head;
    if (this.head !== NONE) this.prev[this.head] = e;
    this.head = e;
    if (this.tail === NONE) this.tail = e;
  }

  private grow(cap: number): void {
    const copy = <T extends Uint32Array | Int32Array>(old: T, make: (n: number) => T, per: number): T => {
      const a = make(cap * per);
      a.set(old);
      return a;
    };
    this.keyLo = copy(this.keyLo, (n) => new Uint32Array(n), 1);
    this.keyHi = copy(this.keyHi, (n) => new Uint32Array(n), 1);
    this.bits = copy(this.bits, (n) => new Uint32Array(n), this.words);
    this.prev = copy(this.prev, (n) => new Int32Array(n), 1);
    this.next = copy(this.next, (n) => new Int32Array(n), 1);
    this.cap = cap;
    let size = 1;
    while (size < 2 * cap) size *= 2;
    if (size !== this.slots.length) {
      this.slots = new Int32Array(size);
      this.mask = size - 1;
      for (let e = this.head; e !== NONE; e = this.next[e]!) this.place(e);
    }
  }
}
