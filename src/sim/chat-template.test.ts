// Pins the chat template's text and the property prefix caching relies on: turn N+1's prompt starts
// with turn N's prompt tokens, then the reply's tokens, then the end marker.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type ChatMessage, renderChatPrompt, renderCompletionPrompt } from "./chat-template.js";
import { OutputText } from "./output-text.js";
import { END_TOKEN_ID, START_TOKEN_ID, tokenize, tokenPieces } from "./tokenizer.js";

function isPrefix(prefix: ArrayLike<number>, whole: ArrayLike<number>): boolean {
  if (prefix.length > whole.length) return false;
  for (let i = 0; i < prefix.length; i++) if (prefix[i] !== whole[i]) return false;
  return true;
}

function generatedReply(seed: number, lang: "en" | "zh", tokens: number): string {
  const out = new OutputText(seed, lang);
  let text = "";
  for (let i = 0; i < tokens; i++) text += out.piece(i);
  return text;
}

describe("renderChatPrompt", () => {
  it("renders one marked block per message and the assistant header", () => {
    const prompt = renderChatPrompt([
      { role: "system", content: "Be brief." },
      { role: "user", content: "  Hi!\n" },
    ]);
    assert.equal(
      prompt,
      "<|start|>system\nBe brief.<|end|>\n<|start|>user\nHi!<|end|>\n<|start|>assistant\n",
    );
  });

  it("omits the assistant header when addGenerationPrompt is false", () => {
    const prompt = renderChatPrompt([{ role: "user", content: "Hi" }], { addGenerationPrompt: false });
    assert.equal(prompt, "<|start|>user\nHi<|end|>\n");
  });

  it("joins text content parts, skips other parts, and renders null content as empty", () => {
    const prompt = renderChatPrompt(
      [
        {
          role: "user",
          content: [{ type: "text", text: "first" }, { type: "image_url" }, { type: "text", text: "second" }],
        },
        { role: "assistant", content: null },
      ],
      { addGenerationPrompt: false },
    );
    assert.equal(prompt, "<|start|>user\nfirst\nsecond<|end|>\n<|start|>assistant\n<|end|>\n");
  });

  it("tokenizes each marker to one special token", () => {
    const pieces = tokenPieces(renderChatPrompt([{ role: "user", content: "你好" }]));
    assert.deepEqual(pieces.slice(0, 3), ["<|start|>", "user", "\n"]);
    const ids = tokenize(renderChatPrompt([{ role: "user", content: "你好" }]));
    assert.equal(ids.filter((id) => id === START_TOKEN_ID).length, 2);
    assert.equal(ids.filter((id) => id === END_TOKEN_ID).length, 1);
  });

  const replies: Array<[string, (turn: number) => string]> = [
    ["generated English", (turn) => generatedReply(turn, "en", 40 + turn * 7)],
    ["generated Chinese", (turn) => generatedReply(turn, "zh", 40 + turn * 7)],
    [
      "hand-written",
      (turn) =>
        [
          "Sure: the total is 1,299.00 USD.",
          "您的订单已经发货，预计明天送达。",
          "Use `x <= 3` or <|end and check 42",
          "好的\n\n1. 申请退款\n2. 等待审核😀",
        ][turn % 4]!,
    ],
  ];
  for (const [name, reply] of replies) {
    it(`extends turn N's prompt tokens with the reply and end marker in turn N+1 (${name})`, () => {
      const messages: ChatMessage[] = [{ role: "system", content: "你是一名客服助手。Answer briefly." }];
      for (let turn = 0; turn < 6; turn++) {
        messages.push({
          role: "user",
          content: turn % 2 ? `Question ${turn}?` : `第${turn}个问题：订单在哪里？`,
        });
        const before = tokenize(renderChatPrompt(messages));
        const text = reply(turn);
        messages.push({ role: "assistant", content: text });
        messages.push({ role: "user", content: "继续" });
        const after = tokenize(renderChatPrompt(messages));
        messages.pop();
        const expected = [...before, ...tokenize(text), END_TOKEN_ID];
        assert.ok(isPrefix(expected, after), `turn ${turn}: ${JSON.stringify(text)}`);
      }
    });
  }
});

describe("renderCompletionPrompt", () => {
  it("passes the prompt through unchanged", () => {
    assert.equal(renderCompletionPrompt("  raw\nprompt "), "  raw\nprompt ");
  });
});
