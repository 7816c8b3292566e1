// Chained KV block hashes, as vLLM's automatic prefix caching computes them: each full block's hash
// covers its parent's hash and its own token ids, and the chain starts from a salt (model / LoRA name),
// so equal blocks under different adapters never collide.

import { hashString } from "./rng.js";

/** Hashes are kept as 53-bit integers so they can be Map keys without BigInt. */
export type BlockHash = number;

const HI_MASK = 0x1fffff; // 21 bits, so hi * 2^32 + lo stays below 2^53

/** The root of a chain: the model (or LoRA adapter) name salts every block of a request. */
export function chainSalt(modelName: string, loraName: string | null): BlockHash {
  const s = loraName ? `${modelName}\u0000lora:${loraName}` : modelName;
  return (hashString(s, 0x9e3779b9) & HI_MASK) * 4294967296 + hashString(s);
}

/** Hash of one block of `blockSize` tokens starting at `start`, chained on `parent`. */
export function hashBlock(
  parent: BlockHash,
  tokens: ArrayLike<number>,
  start: number,
  blockSize: number,
): BlockHash {
  // Two independent 32-bit multiplicative mixes (murmur-style) over the parent and the tokens.
  let h1 = (parent >>> 0) ^ 0x85ebca6b;
  let h2 = Math.floor(parent / 4294967296) ^ 0xc2b2ae35;
  for (let i = start; i < start + blockSize; i++) {
    const t = tokens[i]! >>> 0;
    h1 = Math.imul(h1 ^ t, 0xcc9e2d51);
    h1 = (h1 << 15) | (h1 >>> 17);
    h2 = Math.imul(h2 ^ t, 0x1b873593);
    h2 = (h2 << 13) | (h2 >>> 19);
    h2 = (h2 + h1) | 0;
  }
  h1 ^= h1 >>> 16;
  h1 = Math.imul(h1, 0x85ebca6b);
  h1 ^= h1 >>> 13;
  h2 ^= h2 >>> 16;
  h2 = Math.imul(h2, 0xc2b2ae35);
  h2 ^= h2 >>> 13;
  return ((h2 >>> 0) & HI_MASK) * 4294967296 + (h1 >>> 0);
}
