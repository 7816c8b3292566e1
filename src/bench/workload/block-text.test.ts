import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { promptBlockHashes } from "../../picker/prefix-index/block-hashes.js";
import { renderChatPrompt } from "../../sim/chat-template.js";
import { hashString } from "../../sim/rng.js";
import { countTokens, tokenize, tokenPieces } from "../../sim/tokenizer.js";
import type { TraceRequest } from "../trace-formats/trace.js";
import { blockText, hashIdsText, leadingTokens } from "./block-text.js";
import { buildMessages, userText } from "./messages.js";

const LANGS = ["en", "zh"] as const;

const req = (
  id: string,
  hashIds: number[],
  tokens: number,
  extra: Partial<TraceRequest> = {},
): TraceRequest => ({
  t_ms: 0,
  id,
  tenant: "default",
  task: null,
  request_class: "interactive",
  input_tokens: tokens,
  max_tokens: 1,
  stream: true,
  hash_ids: hashIds,
  hash_block_tokens: 64,
  ...extra,
});

/** The engine's view: the chat-templated prompt's token ids. */
function engineTokens(r: TraceRequest): Uint32Array {
  return tokenize(renderChatPrompt(buildMessages(r)));
}

function commonPrefix(a: ArrayLike<unknown>, b: ArrayLike<unknown>): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/** "<|start|>", "user", "\n" open the user message. */
const HEADER_TOKENS = 3;

describe("block texts", () => {
  it("have exactly their token count, and every cut between tokens keeps its count", () => {
    for (const lang of LANGS) {
      for (const tokens of [1, 2, 3, 16, 100, 512]) {
        for (const id of [0, 1, 46, -7, 123_456_789]) {
          const text = blockText(lang, tokens, id);
          assert.equal(countTokens(text), tokens, `${lang} ${tokens} tokens, id ${id}`);
          for (let r = 0; r <= tokens; r++) {
            assert.equal(
              countTokens(leadingTokens(text, r)),
              r,
              `${lang} id ${id}: the first ${r} of ${tokens}`,
            );
          }
        }
      }
    }
  });

  it("concatenate without merging across the seam, so a prompt has exactly its length", () => {
    for (const lang of LANGS) {
      for (const size of [1, 2, 16, 512]) {
        const ids = [3, 1, 4, 1, 5, 9, 2, 6];
        const joined = ids.map((id) => blockText(lang, size, id)).join("");
        assert.equal(countTokens(joined), ids.length * size, `${lang}, blocks of ${size}`);
        for (const tokens of [1, size * 3 - 1, size * 8, size * 8 + 37]) {
          const text = hashIdsText(ids, size, tokens, lang, 7);
          assert.equal(countTokens(text), tokens, `${lang}, blocks of ${size}, ${tokens} tokens`);
          // The chat template trims the message: the count must survive that too.
          assert.equal(countTokens(text.trim()), tokens, `${lang}, trimmed`);
        }
      }
    }
  });

  it("are deterministic: the same id, the same text, across calls and past the cache", () => {
    const first = blockText("en", 512, 42);
    for (let id = 10_000; id < 15_000; id++) blockText("en", 16, id); // evicts 42
    assert.equal(blockText("en", 512, 42), first);
    assert.equal(hashIdsText([1, 2, 3], 64, 150, "zh", 5), hashIdsText([1, 2, 3], 64, 150, "zh", 5));
  });

  it("of ids closer than the opening words (387 English, 101 Chinese) differ in their first token", () => {
    for (const [lang, span] of [
      ["en", 387],
      ["zh", 101],
    ] as const) {
      const firsts = new Set<string>();
      for (let id = 1000; id < 1000 + span; id++) firsts.add(tokenPieces(blockText(lang, 16, id))[0]!);
      assert.equal(firsts.size, span, lang);
    }
  });
});

describe("prompts from hash_ids", () => {
  it("[1,2,3] and [1,2,9] share exactly the first two blocks, then differ at once; [5,6] and [7,8] share nothing", () => {
    for (const lang of LANGS) {
      const a = req("a", [1, 2, 3], 192, { lang });
      const b = req("b", [1, 2, 9], 192, { lang });
      // The engine's tokens: the template header, then exactly two blocks of 64 tokens.
      assert.equal(commonPrefix(engineTokens(a), engineTokens(b)), HEADER_TOKENS + 2 * 64, lang);
      const c = req("c", [5, 6], 128, { lang });
      const d = req("d", [7, 8], 128, { lang });
      assert.equal(commonPrefix(engineTokens(c), engineTokens(d)), HEADER_TOKENS, lang);

      // The text: the two blocks' text, then (English) the next block's leading space and no token more.
      const shared = blockText(lang, 64, 1) + blockText(lang, 64, 2);
      const [ta, tb] = [userText(a), userText(b)];
      assert.ok(ta.startsWith(shared) && tb.startsWith(shared), lang);
      assert.notEqual(tokenPieces(ta.slice(shared.length))[0], tokenPieces(tb.slice(shared.length))[0]);
      assert.ok(commonPrefix(ta, tb) - shared.length <= 8, `${lang}: only a few characters of a token`);

      // The gateway's prefix index (64-byte blocks): what the common text fills, and for c, d nothing.
      const [ha, hb] = [promptBlockHashes(ta, "m", null), promptBlockHashes(tb, "m", null)];
      const sharedBytes = Buffer.byteLength(ta.slice(0, commonPrefix(ta, tb)));
      assert.equal(commonPrefix(ha, hb), Math.floor(sharedBytes / 64), lang);
      assert.ok(
        commonPrefix(ha, hb) >= Math.floor(Buffer.byteLength(shared) / 64) && commonPrefix(ha, hb) > 0,
      );
      const [hc, hd] = [userText(c), userText(d)].map((t) => promptBlockHashes(t, "m", null));
      assert.equal(commonPrefix(hc!, hd!), 0, lang);
    }
  });

  it("the same ids in other requests give the same prompt, whatever the request id", () => {
    const a = req("a", [10, 11], 128);
    const b = req("b", [10, 11], 128);
    assert.equal(userText(a), userText(b));
    assert.deepEqual(engineTokens(a), engineTokens(b));
  });

  it("a partial last block is the head of the full one: 655 and 672 tokens on [46, 47] share 655", () => {
    const a = req("a", [46, 47], 655, { hash_block_tokens: 512 });
    const b = req("b", [46, 47], 672, { hash_block_tokens: 512 });
    assert.equal(countTokens(userText(a)), 655);
    assert.equal(countTokens(userText(b)), 672);
    assert.ok(userText(b).startsWith(userText(a)));
    assert.equal(commonPrefix(engineTokens(a), engineTokens(b)), HEADER_TOKENS + 655);
  });

  it("tokens past the ids' blocks are the request's own, shared with nothing", () => {
    // 100 tokens on one 64-token id: 36 more of the request's own.
    const a = req("a", [1], 100);
    const b = req("b", [1], 100);
    assert.equal(countTokens(userText(a)), 100);
    assert.equal(commonPrefix(engineTokens(a), engineTokens(b)), HEADER_TOKENS + 64);
    assert.equal(userText(a), hashIdsText([1], 64, 100, "en", hashString("user:a")));
  });

  it("a prefix group's system prompt comes first, the blocks after it", () => {
    const shared = { prefix_group: "g", prefix_tokens: 40 };
    const a = buildMessages(req("a", [1, 2], 128, shared));
    assert.deepEqual(
      a.map((m) => m.role),
      ["system", "user"],
    );
    assert.equal(a[1]!.content, hashIdsText([1, 2], 64, 128, "en", 0));
  });
});
