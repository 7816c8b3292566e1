// Pins the batch input checks: a good file gives its lines with bodies as parsed; blank lines and CRLF
// endings are not errors; each error code is reported with its line and field; every error in a file is
// reported, not the first; and the limits (bytes a line, requests a file) count UTF-8 bytes and
// non-blank lines.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type BatchEndpoint,
  type BatchInputLimits,
  type BatchLineError,
  batchErrorsObject,
  checkBatchInput,
  validateBatchInput,
} from "./batch-input.js";

const LIMITS: BatchInputLimits = { maxLines: 50_000, maxLineBytes: 1_000_000 };
const MODELS = new Set(["llama-3-8b", "qwen-7b"]);

/** Checks `text` as the gateway does (from the stored bytes); the string form must agree. */
async function check(text: string, endpoint: BatchEndpoint = "/v1/chat/completions", limits = LIMITS) {
  const opts = { endpoint, knownModel: (m: string) => MODELS.has(m), limits };
  const got = await checkBatchInput(Buffer.from(text, "utf8"), opts);
  assert.deepEqual(got, validateBatchInput(text, opts), "the bytes and the string are checked alike");
  return got;
}

function chat(id: string, extra: Record<string, unknown> = {}, body: Record<string, unknown> = {}): string {
  return JSON.stringify({
    custom_id: id,
    method: "POST",
    url: "/v1/chat/completions",
    body: { model: "llama-3-8b", messages: [{ role: "user", content: `hello ${id}` }], ...body },
    ...extra,
  });
}

/** The errors as [code, line, param], the part a test pins exactly. */
function brief(errors: readonly BatchLineError[]): [string, number | null, string | null][] {
  return errors.map((e) => [e.code, e.line, e.param]);
}

describe("a valid batch input file", () => {
  it("gives every line, numbered from 1, with its body as parsed and its size", async () => {
    const text = [chat("a"), chat("b", {}, { max_tokens: 32, temperature: 0 }), chat("c")].join("\n");
    const { lines, errors } = await check(text);
    assert.deepEqual(errors, []);
    assert.deepEqual(
      lines.map((l) => [l.line, l.customId, l.url]),
      [
        [1, "a", "/v1/chat/completions"],
        [2, "b", "/v1/chat/completions"],
        [3, "c", "/v1/chat/completions"],
      ],
    );
    assert.deepEqual(lines[1]!.body, JSON.parse(chat("b", {}, { max_tokens: 32, temperature: 0 })).body);
    assert.equal(lines[0]!.bytes, Buffer.byteLength(chat("a")));
  });

  it("skips blank lines, CRLF endings, a trailing newline and a byte order mark", async () => {
    const text = "\uFEFF" + chat("a") + "\r\n\r\n" + chat("b") + "\r\n   \n\t\r\n" + chat("c") + "\r\n\n";
    const { lines, errors } = await check(text);
    assert.deepEqual(errors, []);
    assert.deepEqual(
      lines.map((l) => [l.line, l.customId]),
      [
        [1, "a"],
        [3, "b"],
        [6, "c"],
      ],
    );
    assert.equal(lines[0]!.bytes, Buffer.byteLength(chat("a")), "neither the CR nor the BOM is counted");
  });

  it("follows the completions endpoint's rules: a prompt, string or array, and no messages needed", async () => {
    const line = (id: string, body: Record<string, unknown>) =>
      JSON.stringify({
        custom_id: id,
        method: "POST",
        url: "/v1/completions",
        body: { model: "qwen-7b", ...body },
      });
    const text = [
      line("s", { prompt: "Once upon a time" }),
      line("a", { prompt: ["one", "two"] }),
      line("none", { messages: [{ role: "user", content: "hi" }] }),
      line("num", { prompt: 42 }),
      chat("chat-url"),
    ].join("\n");
    const { lines, errors } = await check(text, "/v1/completions");
    assert.deepEqual(
      lines.map((l) => l.customId),
      ["s", "a"],
    );
    assert.deepEqual(brief(errors), [
      ["invalid_body", 3, "body.prompt"],
      ["invalid_body", 4, "body.prompt"],
      ["invalid_url", 5, "url"],
      ["invalid_body", 5, "body.prompt"],
    ]);
    assert.match(errors[2]!.message, /\/v1\/completions/, "names the batch's endpoint");
  });
});

describe("each error, with its line and field", () => {
  const cases: { name: string; line: string; code: string; param: string | null; says: RegExp }[] = [
    {
      name: "malformed JSON",
      line: '{"custom_id": "x",',
      code: "invalid_json",
      param: null,
      says: /not valid JSON/,
    },
    { name: "an array", line: "[1, 2]", code: "invalid_request", param: null, says: /not a JSON object/ },
    { name: "a string", line: '"hello"', code: "invalid_request", param: null, says: /not a JSON object/ },
    {
      name: "no custom_id",
      line: chat("x", { custom_id: undefined }),
      code: "missing_custom_id",
      param: "custom_id",
      says: /custom_id/,
    },
    {
      name: "a numeric custom_id",
      line: chat("x", { custom_id: 7 }),
      code: "missing_custom_id",
      param: "custom_id",
      says: /custom_id/,
    },
    {
      name: "an empty custom_id",
      line: chat(""),
      code: "missing_custom_id",
      param: "custom_id",
      says: /custom_id/,
    },
    {
      name: "method GET",
      line: chat("x", { method: "GET" }),
      code: "invalid_method",
      param: "method",
      says: /"GET".*"POST"/,
    },
    {
      name: "another endpoint's url",
      line: chat("x", { url: "/v1/embeddings" }),
      code: "invalid_url",
      param: "url",
      says: /"\/v1\/embeddings".*endpoint is \/v1\/chat\/completions/,
    },
    {
      name: "no body",
      line: chat("x", { body: undefined }),
      code: "invalid_body",
      param: "body",
      says: /body is missing/,
    },
    {
      name: "a string body",
      line: chat("x", { body: "{}" }),
      code: "invalid_body",
      param: "body",
      says: /body is "\{\}"/,
    },
    {
      name: "no model",
      line: chat("x", {}, { model: undefined }),
      code: "missing_model",
      param: "body.model",
      says: /body\.model/,
    },
    {
      name: "a numeric model",
      line: chat("x", {}, { model: 3 }),
      code: "missing_model",
      param: "body.model",
      says: /body\.model/,
    },
    {
      name: "an unknown model",
      line: chat("x", {}, { model: "gpt-4o" }),
      code: "model_not_found",
      param: "body.model",
      says: /"gpt-4o" is not a model/,
    },
    {
      name: "no messages",
      line: chat("x", {}, { messages: undefined }),
      code: "invalid_body",
      param: "body.messages",
      says: /body\.messages is missing/,
    },
    {
      name: "empty messages",
      line: chat("x", {}, { messages: [] }),
      code: "invalid_body",
      param: "body.messages",
      says: /an empty array/,
    },
    {
      name: "stream: true",
      line: chat("x", {}, { stream: true }),
      code: "invalid_body",
      param: "body.stream",
      says: /cannot stream/,
    },
  ];
  for (const c of cases) {
    it(`${c.name} → ${c.code}${c.param ? ` (${c.param})` : ""}`, async () => {
      const { lines, errors } = await check([chat("ok-1"), "", c.line, chat("ok-2")].join("\n"));
      assert.deepEqual(brief(errors), [[c.code, 3, c.param]]);
      assert.match(errors[0]!.message, /^line 3\b/);
      assert.match(errors[0]!.message, c.says);
      assert.deepEqual(
        lines.map((l) => l.line),
        [1, 4],
        "the good lines are still given",
      );
    });
  }

  it("stream: false is allowed", async () => {
    assert.deepEqual((await check(chat("x", {}, { stream: false }))).errors, []);
  });

  it("a duplicate custom_id names both lines", async () => {
    const { errors } = await check([chat("a"), chat("dup"), chat("b"), chat("dup"), chat("dup")].join("\n"));
    assert.deepEqual(brief(errors), [
      ["duplicate_custom_id", 4, "custom_id"],
      ["duplicate_custom_id", 5, "custom_id"],
    ]);
    assert.match(errors[0]!.message, /^line 4: custom_id "dup" is already used on line 2\b/);
    assert.match(errors[1]!.message, /^line 5: .* on line 2\b/, "always the first occurrence");
  });

  it("reports every error of a file and of a line, in file order", async () => {
    const text = [
      chat("a"),
      "not json",
      chat("b", { method: "PUT", url: "/v1/completions" }, { model: "nope", stream: true }),
      "",
      chat("a", { body: [] }),
      "null",
    ].join("\n");
    const { lines, errors } = await check(text);
    assert.deepEqual(
      lines.map((l) => l.customId),
      ["a"],
    );
    assert.deepEqual(brief(errors), [
      ["invalid_json", 2, null],
      ["invalid_method", 3, "method"],
      ["invalid_url", 3, "url"],
      ["model_not_found", 3, "body.model"],
      ["invalid_body", 3, "body.stream"],
      ["duplicate_custom_id", 5, "custom_id"],
      ["invalid_body", 5, "body"],
      ["invalid_request", 6, null],
    ]);
  });
});

describe("the file's limits", () => {
  it("a line over the byte limit counts UTF-8 bytes, and is not parsed", async () => {
    // "é" is 2 bytes, "字" 3 and "🙂" 4: 30 characters, 90 bytes of content.
    const content = "é字🙂".repeat(10);
    const line = chat("multi", {}, { messages: [{ role: "user", content }] });
    const bytes = Buffer.byteLength(line);
    assert.equal(bytes - line.length, 50, "the line has 50 more bytes than UTF-16 units");
    const at = (maxLineBytes: number) => check(line, undefined, { maxLines: 10, maxLineBytes });
    assert.deepEqual((await at(bytes)).errors, [], "exactly at the limit is allowed");
    assert.equal((await at(bytes)).lines[0]!.bytes, bytes);
    const over = (await at(line.length + 1)).errors;
    assert.deepEqual(brief(over), [["line_too_large", 1, null]], "over in bytes though not in characters");
    assert.match(over[0]!.message, new RegExp(`${bytes} bytes.*limit of ${line.length + 1}`));
    // Malformed, but too large: reported as too large, because it was never parsed.
    const big = "{" + "x".repeat(100);
    assert.deepEqual(brief((await check(big, undefined, { maxLines: 10, maxLineBytes: 50 })).errors), [
      ["line_too_large", 1, null],
    ]);
  });

  it("past maxLines requests, one too_many_lines error at the first line over, and checking stops", async () => {
    const text = [chat("a"), "", chat("b"), "bad json", chat("c"), "also bad", chat("d")].join("\n");
    const { lines, errors } = await check(text, undefined, { maxLines: 3, maxLineBytes: 10_000 });
    assert.deepEqual(brief(errors), [
      ["invalid_json", 4, null],
      ["too_many_lines", 5, null],
    ]);
    assert.match(errors[1]!.message, /limit of 3 requests/);
    assert.deepEqual(
      lines.map((l) => l.customId),
      ["a", "b"],
    );
    assert.deepEqual(brief((await check(text, undefined, { maxLines: 5, maxLineBytes: 10_000 })).errors), [
      ["invalid_json", 4, null],
      ["invalid_json", 6, null],
      ["too_many_lines", 7, null],
    ]);
  });

  it("an empty file, or one of blank lines only, is one empty_file error with no line", async () => {
    for (const text of ["", "\n", "\r\n  \r\n\t\n"]) {
      const { lines, errors } = await check(text);
      assert.deepEqual(lines, []);
      assert.deepEqual(brief(errors), [["empty_file", null, null]], JSON.stringify(text));
    }
  });
});

it("batchErrorsObject gives OpenAI's errors shape", async () => {
  const { errors } = await check(["{", chat("a", { method: "GET" })].join("\n"));
  const obj = batchErrorsObject(errors);
  assert.equal(obj.object, "list");
  assert.deepEqual(Object.keys(obj.data[0]!).sort(), ["code", "line", "message", "param"]);
  assert.deepEqual(
    obj.data.map((d) => [d.code, d.line, d.param]),
    [
      ["invalid_json", 1, null],
      ["invalid_method", 2, "method"],
    ],
  );
  assert.deepEqual(batchErrorsObject([]), { object: "list", data: [] });
  assert.deepEqual(JSON.parse(JSON.stringify(batchErrorsObject((await check("")).errors))), {
    object: "list",
    data: [{ code: "empty_file", message: "the file holds no requests", param: null, line: null }],
  });
});

describe("a big file", () => {
  it("is checked from its bytes with the event loop free between pieces, lines numbered as in the string", async () => {
    const pad = "z".repeat(20_000);
    const rows = Array.from({ length: 200 }, (_, i) =>
      i === 150 ? "not json" : chat(`r-${i + 1}`, {}, { messages: [{ role: "user", content: pad }] }),
    );
    let turns = 0;
    let done = false;
    const spin = (async () => {
      while (!done) {
        await new Promise((r) => setImmediate(r));
        turns++;
      }
    })();
    const got = await check(rows.join("\r\n"), undefined, { maxLines: 1000, maxLineBytes: 100_000 });
    done = true;
    await spin;
    assert.ok(turns >= 5, `the loop ran while 4 MB were checked (${turns} turns)`);
    assert.deepEqual(brief(got.errors), [["invalid_json", 151, null]]);
    assert.equal(got.lines.length, 199);
  });
});
