import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CharRadixTree } from "./char-radix-tree.js";

describe("SGLang's character radix tree", () => {
  it("matches the longest prefix, into an edge too, and names a tenant of the deepest node reached", () => {
    const t = new CharRadixTree();
    t.insert("hello world", "w1", 1);
    t.insert("hello there", "w2", 2);
    assert.deepEqual(t.prefixMatch("hello world, again", 3), { matched: 11, tenant: "w1" });
    assert.deepEqual(t.prefixMatch("hello thermometer", 4), { matched: 10, tenant: "w2" });
    // "hello " is shared; the first tenant to have reached that node is w1.
    assert.deepEqual(t.prefixMatch("hello you", 5), { matched: 6, tenant: "w1" });
    assert.deepEqual(t.prefixMatch("goodbye", 6), { matched: 0, tenant: null });
    assert.deepEqual(t.prefixMatch("", 7), { matched: 0, tenant: null });
  });

  it("counts each tenant's characters and forgets a tenant that left", () => {
    const t = new CharRadixTree();
    t.insert("abcdef", "w1", 1);
    t.insert("abcxyz", "w2", 2);
    assert.deepEqual(Object.fromEntries(t.sizes()), { w1: 6, w2: 6 });
    t.removeTenant("w1");
    assert.deepEqual(Object.fromEntries(t.sizes()), { w2: 6 });
    assert.deepEqual(t.prefixMatch("abcdef", 3), { matched: 3, tenant: "w2" });
  });

  it("evicts a tenant's least recently used leaves until it fits", () => {
    const t = new CharRadixTree();
    t.insert("aaaa-old", "w1", 1);
    t.insert("bbbb-new", "w1", 5);
    t.insert("aaaa-kept", "w2", 2);
    t.evictTenantsBySize(8);
    // w1 held 16 (its old leaf and then "aaaa-" went); w2 held 9 ("kept" went).
    assert.deepEqual(Object.fromEntries(t.sizes()), { w1: 8, w2: 5 });
    assert.equal(t.prefixMatch("bbbb-new", 6).tenant, "w1", "the recent one stays");
    assert.deepEqual(t.prefixMatch("aaaa-old", 7), { matched: 5, tenant: "w2" }, "w1's old leaf went");
  });
});
