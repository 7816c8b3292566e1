// Pins the prompt block hashes: chained over the prefix, salted by model and adapter, full blocks only.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { chainSalt, hashChars, promptBlockHashes } from "./block-hashes.js";

const text = "The quick brown fox jumps over the lazy dog. ".repeat(20); // 900 chars

describe("promptBlockHashes", () => {
  it("hashes only full blocks of blockBytes bytes", () => {
    assert.equal(promptBlockHashes(text, "m", null).length, Math.floor(900 / 64));
    assert.equal(promptBlockHashes(text.slice(0, 63), "m", null).length, 0);
    assert.equal(promptBlockHashes(text, "m", null, { blockBytes: 96 }).length, 9);
  });

  it("stops at maxBlocks with the same leading hashes as an uncapped run", () => {
    const capped = promptBlockHashes(text, "m", null, { maxBlocks: 3 });
    assert.deepEqual([...capped], [...promptBlockHashes(text, "m", null).slice(0, 3)]);
  });

  it("cuts non-ASCII text by UTF-8 bytes and rejects a block size that is not a multiple of 8", () => {
    assert.equal(promptBlockHashes("語".repeat(64), "m", null).length, 3); // 192 bytes
    assert.throws(() => promptBlockHashes(text, "m", null, { blockBytes: 60 }), /multiple of 8/);
  });

  it("does not depend on what a previous, longer prompt left in the scratch buffer", () => {
    const short = "x".repeat(130);
    const before = promptBlockHashes(short, "m", null);
    promptBlockHashes("y".repeat(100_000), "m", null, { maxBlocks: 2000 });
    assert.deepEqual([...promptBlockHashes(short, "m", null)], [...before]);
  });

  it("gives equal prefixes equal hashes and diverges from the first differing block on", () => {
    const a = promptBlockHashes(text, "m", null);
    const changed = `${text.slice(0, 200)}X${text.slice(201)}`; // block 3 (chars 192..255) differs
    const b = promptBlockHashes(changed, "m", null);
    assert.deepEqual([...b.slice(0, 3)], [...a.slice(0, 3)]);
    for (let i = 3; i < a.length; i++) assert.notEqual(b[i], a[i], `block ${i} must differ (chained)`);
  });

  it("hashes a prompt given as parts exactly as the parts joined, reading only the capped head", () => {
    const long = "lorem ipsum dolor sit amet ".repeat(2000); // 54 KB, far past a 4-block cap
    const parts = ["<system>", long, "\n<user>", "Zürich 你好 😀 question", "\n"];
    for (const maxBlocks of [4, 256, Number.POSITIVE_INFINITY]) {
      assert.deepEqual(
        promptBlockHashes(parts, "m", null, { maxBlocks }),
        promptBlockHashes(parts.join(""), "m", null, { maxBlocks }),
      );
    }
    // A cut inside a multi-byte character or a surrogate pair still matches the joined text.
    const tricky = ["a".repeat(63), "😀😀", "é".repeat(40)];
    for (const maxBlocks of [1, 2, 3]) {
      assert.deepEqual(
        promptBlockHashes(tricky, "m", null, { maxBlocks }),
        promptBlockHashes(tricky.join(""), "m", null, { maxBlocks }),
      );
    }
    assert.equal(promptBlockHashes([], "m", null).length, 0);
  });

  it("salts by model and LoRA adapter", () => {
    const base = promptBlockHashes(text, "m", null)[0];
    assert.notEqual(promptBlockHashes(text, "other", null)[0], base);
    assert.notEqual(promptBlockHashes(text, "m", "adapter-1")[0], base);
    assert.notEqual(chainSalt("m", "a"), chainSalt("m", "b"));
  });

  it("returns safe 53-bit integers", () => {
    for (const h of promptBlockHashes(text, "m", null)) {
      assert.ok(Number.isSafeInteger(h) && h >= 0, String(h));
    }
  });

  it("distinguishes odd-length and non-ASCII text", () => {
    assert.notEqual(hashChars(0, "abc", 0, 3), hashChars(0, "abd", 0, 3));
    assert.notEqual(hashChars(0, "ab", 0, 2), hashChars(0, "ab\u0000", 0, 3));
    assert.notEqual(hashChars(0, "日本語", 0, 3), hashChars(0, "日本誤", 0, 3));
  });
});
