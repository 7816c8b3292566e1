import assert from "node:assert/strict";
import { describe, it } from "node:test";
import OpenAI from "openai";
import { makeEngineConfig } from "./engine-config.js";
import {
  Framing,
  type FramingOptions,
  JSON_STYLES,
  pythonJson,
  SSE_DATA_SPACES,
  SSE_LINE_ENDINGS,
  VLLM_FRAMING,
} from "./framing.js";
import { SimReplica } from "./replica.js";
import { makeUsage, StreamFrames } from "./responses.js";

const usage = makeUsage(12, 3, 0);

describe("stream frames in vLLM's framing", () => {
  it("are byte for byte what the simulator wrote before framing options existed", () => {
    const chat = new StreamFrames("chat", "chatcmpl-1", "m", 1700000000);
    const head =
      'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[';
    assert.equal(
      chat.roleFrame(),
      `${head}{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\n`,
    );
    assert.equal(
      chat.tokenFrame("hi", null),
      `${head}{"index":0,"delta":{"content":"hi"},"logprobs":null,"finish_reason":null}]}\n\n`,
    );
    assert.equal(
      chat.tokenFrame("中", "length"),
      `${head}{"index":0,"delta":{"content":"中"},"logprobs":null,"finish_reason":"length"}]}\n\n`,
    );
    assert.equal(
      chat.usageFrame(usage),
      `${head}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":0}}}\n\n`,
    );
    assert.equal(chat.done(), "data: [DONE]\n\n");
    assert.equal(
      chat.error("boom", 500, "InternalServerError"),
      'data: {"error":{"message":"boom","type":"InternalServerError","param":null,"code":500}}\n\n',
    );
    const cmpl = new StreamFrames("completion", "cmpl-1", "m", 1700000000);
    assert.equal(cmpl.roleFrame(), "");
    assert.equal(
      cmpl.tokenFrame("x", "stop"),
      'data: {"id":"cmpl-1","object":"text_completion","created":1700000000,"model":"m","choices":[' +
        '{"index":0,"text":"x","logprobs":null,"finish_reason":"stop","stop_reason":null}]}\n\n',
    );
  });
});

describe("pretty JSON, as Python's json.dumps writes it by default", () => {
  // Each expected line was printed by python3's json.dumps with default arguments.
  const pretty = new Framing({ jsonStyle: "pretty" });

  it("writes values with ', ' and ': ' and escapes non-ASCII, on one line", () => {
    assert.equal(pythonJson("😀\x7f\x1f\n"), '"\\ud83d\\ude00\\u007f\\u001f\\n"');
    assert.equal(
      pythonJson({ a: [], b: {}, c: [1, { d: null }], e: undefined }),
      '{"a": [], "b": {}, "c": [1, {"d": null}]}',
    );
  });

  it("frames role, token, usage and error events the same way", () => {
    const f = new StreamFrames("chat", "chatcmpl-1", "m", 1700000000, pretty);
    const head =
      '{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "m", "choices": [';
    assert.equal(
      f.roleFrame(),
      `data: ${head}{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": null, "finish_reason": null}]}\n\n`,
    );
    assert.equal(
      f.tokenFrame("héllo 中", null),
      `data: ${head}{"index": 0, "delta": {"content": "h\\u00e9llo \\u4e2d"}, "logprobs": null, "finish_reason": null}]}\n\n`,
    );
    assert.equal(
      f.usageFrame(usage),
      `data: ${head}], "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15, "prompt_tokens_details": {"cached_tokens": 0}}}\n\n`,
    );
    assert.equal(
      f.error("boom", 500, "InternalServerError"),
      'data: {"error": {"message": "boom", "type": "InternalServerError", "param": null, "code": 500}}\n\n',
    );
    const c = new StreamFrames("completion", "cmpl-1", "m", 1700000000, pretty);
    assert.equal(
      c.tokenFrame("x", "length"),
      'data: {"id": "cmpl-1", "object": "text_completion", "created": 1700000000, "model": "m", "choices": ' +
        '[{"index": 0, "text": "x", "logprobs": null, "finish_reason": "length", "stop_reason": null}]}\n\n',
    );
  });
});

describe("SSE line endings and the data: space", () => {
  it("end every event with two line endings and drop the space when asked", () => {
    const crlf = new StreamFrames(
      "chat",
      "c",
      "m",
      1,
      new Framing({ sseLineEnding: "crlf", sseDataSpace: "none" }),
    );
    assert.match(crlf.tokenFrame("x", null), /^data:\{"id":"c",.*\}\]\}\r\n\r\n$/);
    assert.equal(crlf.done(), "data:[DONE]\r\n\r\n");
    const cr = new Framing({ sseLineEnding: "cr" });
    assert.equal(cr.done, "data: [DONE]\r\r");
    assert.equal(VLLM_FRAMING.done, "data: [DONE]\n\n");
  });
});

async function withReplica(framing: Partial<FramingOptions>, fn: (r: SimReplica) => Promise<void>) {
  const r = new SimReplica({
    name: "f",
    port: 0,
    engine: makeEngineConfig("instant", "m"),
    framing,
    seed: 2,
  });
  await r.start();
  try {
    await fn(r);
  } finally {
    await r.stop();
  }
}

const post = (r: SimReplica, path: string, body: unknown) =>
  fetch(`${r.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("a replica in each framing, over HTTP", () => {
  for (const sseLineEnding of SSE_LINE_ENDINGS) {
    for (const jsonStyle of JSON_STYLES) {
      for (const sseDataSpace of SSE_DATA_SPACES) {
        const options = { sseLineEnding, jsonStyle, sseDataSpace };
        it(`streams ${JSON.stringify(options)} that the openai client reads`, async () => {
          await withReplica(options, async (r) => {
            const eol = { lf: "\n", crlf: "\r\n", cr: "\r" }[sseLineEnding];
            const raw = await (
              await post(r, "/v1/chat/completions", {
                messages: [{ role: "user", content: "你好，请总结一下" }],
                max_tokens: 5,
                stream: true,
                stream_options: { include_usage: true },
              })
            ).text();
            const events = raw.split(eol + eol);
            assert.equal(events.pop(), "", "the body ends with an event's end");
            assert.equal(events.length, 1 + 5 + 1 + 1, "role, 5 tokens, usage, [DONE]");
            const prefix = sseDataSpace === "space" ? "data: " : "data:";
            for (const e of events) {
              assert.ok(e.startsWith(prefix), e);
              assert.ok(!/[\r\n]/.test(e), "one line per event");
              if (jsonStyle === "pretty") assert.ok(!/[^\x00-\x7f]/.test(e), "ASCII only");
            }
            const usageEvent = events[events.length - 2]!;
            assert.ok(
              usageEvent.includes(
                jsonStyle === "pretty" ? '"usage": {"prompt_tokens": ' : '"usage":{"prompt_tokens":',
              ),
            );
            assert.equal(events.at(-1), `${prefix}[DONE]`);

            const client = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: "x", maxRetries: 0 });
            const stream = await client.chat.completions.create({
              model: "m",
              messages: [{ role: "user", content: "你好" }],
              max_tokens: 4,
              stream: true,
              stream_options: { include_usage: true },
            });
            let pieces = 0;
            let completionTokens: number | undefined;
            for await (const chunk of stream) {
              if (chunk.choices[0]?.delta.content) pieces++;
              if (chunk.usage) completionTokens = chunk.usage.completion_tokens;
            }
            assert.equal(pieces, 4);
            assert.equal(completionTokens, 4);
          });
        });
      }
    }
  }

  it("writes non-streaming bodies and errors in pretty JSON too", async () => {
    await withReplica({ jsonStyle: "pretty" }, async (r) => {
      const body = await (
        await post(r, "/v1/completions", { prompt: "Once upon a time", max_tokens: 3 })
      ).text();
      assert.match(body, /^\{"id": "cmpl-[0-9a-f]+", "object": "text_completion", "created": \d+, /);
      assert.match(body, /"usage": \{"prompt_tokens": \d+, "completion_tokens": 3, /);
      assert.ok(!body.includes("\n"));
      assert.equal(JSON.parse(body).usage.completion_tokens, 3);
      const err = await (await post(r, "/v1/chat/completions", { model: "m" })).text();
      assert.match(
        err,
        /^\{"error": \{"message": ".*", "type": "BadRequestError", "param": "messages", "code": 400\}\}$/,
      );
    });
  });
});
