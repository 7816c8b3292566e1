import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { estimateChatTokens, estimateTextTokens } from "./token-estimate.js";

describe("estimateTextTokens", () => {
  it("counts a short word with its leading space as one token, and long words in ~4-letter pieces", () => {
    assert.equal(estimateTextTokens(""), 0);
    assert.equal(estimateTextTokens("Hello world"), 2);
    assert.equal(estimateTextTokens("the cat sat on the mat"), 6);
    assert.equal(estimateTextTokens("internationalization"), 5);
  });

  it("costs digits in groups of three, punctuation per mark, and whitespace runs", () => {
    assert.equal(estimateTextTokens("1234567"), 3);
    assert.equal(estimateTextTokens("a, b."), 4);
    assert.equal(estimateTextTokens("a\n\n\nb"), 4);
    assert.equal(estimateTextTokens(" ".repeat(32)), 2);
  });

  it("costs Chinese at about 1.4 characters per token and CJK punctuation per mark", () => {
    const text = "您好请问有什么可以帮您的吗".repeat(10);
    const t = estimateTextTokens(text);
    assert.ok(t > text.length / 1.6 && t < text.length / 1.2, `${t} tokens for ${text.length} characters`);
    assert.equal(estimateTextTokens("，。"), 2);
  });

  it("costs emoji per UTF-16 unit and accented words like ASCII ones", () => {
    assert.equal(estimateTextTokens("🙂"), 2);
    assert.equal(estimateTextTokens("café déjà"), 2);
  });
});

describe("estimateChatTokens", () => {
  it("adds the chat template's per-message markers and the reply header", () => {
    const one = estimateChatTokens([{ role: "user", content: "Hello world" }]);
    assert.equal(one, 4 + 1 + 2 + 4);
    const two = estimateChatTokens([
      { role: "system", content: "Summarize." },
      { role: "user", content: "Hello world" },
    ]);
    assert.equal(two - one, 4 + 1 + 3, 'system + "Summarize." (a 9-letter word and a period)');
  });

  it("reads text parts, names and tool-call arguments, and ignores images", () => {
    const parts = estimateChatTokens([
      {
        role: "user",
        content: [{ type: "text", text: "Hello" }, { type: "image_url" }, { type: "text", text: "world" }],
      },
    ]);
    assert.equal(parts, estimateChatTokens([{ role: "user", content: "Hello\nworld" }]));
    const tool = estimateChatTokens([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ function: { name: "lookup", arguments: '{"id": 7}' } }],
      },
    ]);
    assert.ok(tool > estimateChatTokens([{ role: "assistant", content: null }]) + 5);
  });
});
