import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { usageOf } from "./usage.js";

describe("usage from a completion body", () => {
  it("reads the usage object wherever it sits, without parsing the choices", () => {
    const body = Buffer.from(
      JSON.stringify({
        id: "x",
        choices: [{ message: { content: 'text with "usage": {braces} }' } }],
        usage: { prompt_tokens: 12, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 0 } },
        kv_transfer_params: null,
      }),
    );
    assert.deepEqual(usageOf(body), {
      prompt_tokens: 12,
      completion_tokens: 3,
      prompt_tokens_details: { cached_tokens: 0 },
    });
  });

  it("is null without usage or when it is cut off", () => {
    assert.equal(usageOf(Buffer.from('{"id":"x"}')), null);
    assert.equal(usageOf(Buffer.from('{"usage":{"prompt_tokens":1')), null);
    assert.equal(usageOf(Buffer.from('{"usage":null,"x":{"prompt_tokens":1}}')), null);
  });

  it("is null when a count is not a non-negative whole number (an engine's garbage), so no counter sees it", () => {
    for (const n of ["-5", "1.5", '"12"', "[1]", "{}", "true", "1e999"]) {
      assert.equal(usageOf(Buffer.from(`{"usage":{"prompt_tokens":${n},"completion_tokens":2}}`)), null, n);
      assert.equal(usageOf(Buffer.from(`{"usage":{"prompt_tokens":3,"completion_tokens":${n}}}`)), null, n);
      assert.equal(
        usageOf(Buffer.from(`{"usage":{"prompt_tokens":3,"prompt_tokens_details":{"cached_tokens":${n}}}}`)),
        null,
        n,
      );
    }
    assert.equal(usageOf(Buffer.from('{"usage":{"prompt_tokens":3,"prompt_tokens_details":[0]}}')), null);
    assert.deepEqual(
      usageOf(
        Buffer.from('{"usage":{"prompt_tokens":0,"completion_tokens":null,"prompt_tokens_details":null}}'),
      ),
      { prompt_tokens: 0, completion_tokens: null, prompt_tokens_details: null },
    );
  });

  it("reads a stream's usage frame", () => {
    const frame = Buffer.from(
      'data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage": {"prompt_tokens":5,"completion_tokens":2}}\n\n',
    );
    assert.deepEqual(usageOf(frame), { prompt_tokens: 5, completion_tokens: 2 });
  });

  it("reads any JSON spacing around the key, colon and object", () => {
    const usage = { prompt_tokens: 7, completion_tokens: 1 };
    for (const text of [
      '{"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 1}}',
      '{"choices":[],"usage" :\t{ "prompt_tokens" : 7 , "completion_tokens" : 1 }}',
      JSON.stringify({ choices: [], usage }, null, 2),
      JSON.stringify({ choices: [], usage }, null, "\t").replace(/\n/g, "\r\n"),
    ])
      assert.deepEqual(usageOf(Buffer.from(text)), usage, text);
  });

  it('passes over a quoted "usage" that is a value, and braces inside strings', () => {
    assert.deepEqual(usageOf(Buffer.from('{"usage": {"prompt_tokens": 2, "note": "} {"}, "tag": "usage"}')), {
      prompt_tokens: 2,
      note: "} {",
    });
    assert.equal(usageOf(Buffer.from('{"tag": "usage"}')), null);
    assert.equal(usageOf(Buffer.from('{"usage": null, "tag": "usage"}')), null);
    assert.equal(usageOf(Buffer.from('"usage"')), null);
  });
});
