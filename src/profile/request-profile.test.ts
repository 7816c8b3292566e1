// Pins the profile stage's refusals of malformed chat messages and fields: each is a GatewayError(400)
// naming the field, where a TypeError or RangeError once escaped (found by request-plan.fuzz.test.ts).

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GatewayError } from "../errors/gateway-error.js";
import { profileRequest } from "./request-profile.js";

function refusal(body: unknown): { code: string; param: string | null; message: string } {
  try {
    profileRequest("chat", body, {});
  } catch (err) {
    assert.ok(err instanceof GatewayError, `a GatewayError, not ${(err as Error).stack}`);
    return { code: err.code, param: err.param, message: err.message };
  }
  assert.fail("the body was accepted");
}

const chat = (message: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  model: "m",
  messages: [
    { role: "user", content: "hi" },
    { role: "user", ...message },
  ],
  ...extra,
});

describe("profileRequest refusals", () => {
  it("refuses a content part that is not an object with a type, naming messages[i].content[j]", () => {
    for (const part of [null, 3, "text", ["x"], {}, { type: 1, text: "x" }]) {
      assert.deepEqual(refusal(chat({ content: [{ type: "text", text: "a" }, part] })), {
        code: "invalid_request",
        param: "messages[1].content[1]",
        message: "messages[1].content[1] must be a content part with a type",
      });
    }
  });

  it("refuses a message name that is not a string", () => {
    assert.equal(refusal(chat({ name: ["a"] })).param, "messages[1].name");
    assert.equal(refusal(chat({ name: 5 })).param, "messages[1].name");
  });

  it("refuses tool_calls that are not a list of objects with string function fields", () => {
    assert.equal(refusal(chat({ tool_calls: 5 })).param, "messages[1].tool_calls");
    assert.equal(refusal(chat({ tool_calls: [null] })).param, "messages[1].tool_calls[0]");
    assert.equal(
      refusal(chat({ tool_calls: [{ function: "f" }] })).param,
      "messages[1].tool_calls[0].function",
    );
    assert.equal(
      refusal(chat({ tool_calls: [{ function: { name: ["x"] } }] })).param,
      "messages[1].tool_calls[0].function.name",
    );
    assert.equal(
      refusal(chat({ tool_calls: [{ function: { name: "f", arguments: { a: 1 } } }] })).param,
      "messages[1].tool_calls[0].function.arguments",
    );
  });

  it("still takes null name, tool_calls and function fields, and parts of any type", () => {
    const p = profileRequest(
      "chat",
      chat({
        name: null,
        content: [{ type: "image_url", image_url: { url: "x" } }],
        tool_calls: [{ id: "c", function: { name: null, arguments: "{}" } }, { id: "d" }],
      }),
      {},
    );
    assert.ok(p.inputTokensRaw > 0);
  });

  it("shows an array or object max_tokens by its kind, so one nested too deeply for JSON.stringify is refused", () => {
    const deep = JSON.parse(`${"[".repeat(20000)}${"]".repeat(20000)}`);
    assert.deepEqual(refusal(chat({}, { max_tokens: deep })), {
      code: "invalid_request",
      param: "max_tokens",
      message: "max_tokens must be a positive integer, got an array",
    });
    assert.equal(
      refusal(chat({}, { max_tokens: { n: 1 } })).message,
      "max_tokens must be a positive integer, got an object",
    );
    assert.equal(
      refusal(JSON.parse('{"model":"m","messages":[{"role":"user"}],"max_tokens":1e999}')).message,
      "max_tokens must be a positive integer, got Infinity",
      "not null, as JSON.stringify(Infinity) would show it",
    );
    assert.equal(
      refusal(chat({}, { max_tokens: "x".repeat(100_000) })).message.length,
      "max_tokens must be a positive integer, got ".length + 41,
      "a long string is cut short",
    );
  });
});
