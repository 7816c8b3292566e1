// Fuzzes the gateway over real HTTP with fast-check: simulated engines behind it, and a few hundred
// POSTs to /v1/chat/completions and /v1/completions whose bodies are random OpenAI-shaped JSON (see
// request-arbitraries.ts) or raw bytes — invalid UTF-8, truncated JSON, arrays nested 100,000 deep,
// numbers past float range, a body over the size limit — with random X-AI-* headers and sometimes a
// bad or missing key, a few at a time. Every answer is a 2xx or a 4xx in the OpenAI error shape with a
// catalogue code (the only 5xx allowed is the documented 503 for a pinned version no endpoint runs; an
// engine's own 4xx, passed on as it came, keeps vLLM's shape); no connection is dropped; and afterwards
// every request wrote its log line, no endpoint holds an in-flight request and no queue a ticket.

import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { errorCatalogue } from "../errors/gateway-error.js";
import { KEYS, type Platform, startPlatform } from "../testing/platform.js";
import {
  aiHeaders,
  chatBody,
  completionBody,
  goodChatBody,
  goodCompletionBody,
  goodHeaders,
  headerValue,
  type Json,
} from "../testing/request-arbitraries.js";

const CODES = new Set<string>(errorCatalogue().map((e) => e.code));
const MAX_BODY = 1_048_576;
const engineRefusals: string[] = [];

/** A body as bytes: JSON of a random request, or bytes no JSON parser takes whole. */
function bodyBytes(json: fc.Arbitrary<Json>): fc.Arbitrary<Buffer> {
  const text = json.map((v) => JSON.stringify(v));
  return fc.oneof(
    { weight: 16, arbitrary: text.map((s) => Buffer.from(s)) },
    // Cut anywhere: truncated JSON.
    {
      weight: 2,
      arbitrary: fc.tuple(text, fc.nat()).map(([s, n]) => Buffer.from(s).subarray(0, n % (s.length + 1))),
    },
    // Invalid UTF-8 spliced in (inside a string or between tokens).
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          text,
          fc.nat(),
          fc.constantFrom([0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80], [0x80]),
        )
        .map(([s, n, bad]) => {
          const b = Buffer.from(s);
          const at = n % (b.length + 1);
          return Buffer.concat([b.subarray(0, at), Buffer.from(bad), b.subarray(at)]);
        }),
    },
    // Arrays nested deep, as a field of an otherwise valid request or as the whole body.
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom(10, 1000, 5000, 100_000),
          fc.constantFrom("extra", "max_tokens", "messages", "body"),
        )
        .map(([depth, where]) => {
          const deep = `${"[".repeat(depth)}${"]".repeat(depth)}`;
          if (where === "body") return Buffer.from(deep);
          const msgs = where === "messages" ? deep : '[{"role":"user","content":"hi"}]';
          const extra = where === "messages" ? "" : `,"${where}":${deep}`;
          return Buffer.from(
            `{"model":"summary-default","max_tokens":5,"messages":${msgs},"prompt":"hi"${extra}}`,
          );
        }),
    },
    // Numbers JSON allows and doubles do not hold.
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          "1e999",
          "-1e999",
          "123456789012345678901234567890",
          "-0",
          "0.0000000000000000000001",
          "1E400",
        )
        .map((n) =>
          Buffer.from(
            `{"model":"summary-default","max_tokens":${n},"messages":[{"role":"user","content":"hi"}],"prompt":"x"}`,
          ),
        ),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)) },
    { weight: 1, arbitrary: fc.constant(Buffer.alloc(0)) },
    // Over limits.maxBodyBytes (1 MiB): refused, the connection closed.
    { weight: 1, arbitrary: fc.constant(Buffer.alloc(MAX_BODY + 10, 0x20)) },
  );
}

const auth = fc.oneof(
  { weight: 8, arbitrary: fc.constant<string | null>(`Bearer ${KEYS.basic}`) },
  { weight: 1, arbitrary: fc.constant<string | null>(`Bearer ${KEYS.quality}`) },
  { weight: 1, arbitrary: fc.constantFrom<string | null>(null, "Bearer sk-nope", "Basic x", "Bearer ") },
);

interface Call {
  path: "/v1/chat/completions" | "/v1/completions";
  body: Buffer;
  headers: Record<string, string>;
}

const call: fc.Arbitrary<Call> = fc
  .tuple(
    fc.boolean(),
    fc.nat(9).map((n) => n === 0),
    fc.oneof(aiHeaders, goodHeaders, goodHeaders),
    auth,
    fc.boolean(),
    fc.oneof({ weight: 19, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: headerValue }),
  )
  .chain(([chat, crossed, headers, key, json, tenant]) =>
    // Now and then a chat body goes to /v1/completions and the other way round.
    bodyBytes(
      chat !== crossed
        ? fc.oneof(chatBody, goodChatBody, goodChatBody, goodChatBody)
        : fc.oneof(completionBody, goodCompletionBody, goodCompletionBody, goodCompletionBody),
    ).map((body) => ({
      path: chat ? ("/v1/chat/completions" as const) : ("/v1/completions" as const),
      body,
      headers: {
        ...headers,
        // Naming a tenant without the upstream secret is refused before the body is read: now and then.
        ...(tenant === null ? {} : { "x-ai-tenant": tenant }),
        ...(key === null ? {} : { authorization: key }),
        ...(json ? { "content-type": "application/json" } : {}),
      },
    })),
  );

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function send(url: string, agent: Agent, c: Call): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${c.path}`,
      { method: "POST", agent, headers: { ...c.headers, "content-length": String(c.body.length) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (b: Buffer) => chunks.push(b));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString(),
          }),
        );
        res.on("error", reject);
      },
    );
    req.setTimeout(15_000, () => req.destroy(new Error("no answer in 15 s")));
    req.on("error", (e) => reject(new Error(`connection dropped: ${e.message}`)));
    req.end(c.body);
  });
}

function checkAnswer(c: Call, a: Answer): void {
  const where = `${c.path} ${a.status}: ${a.text.slice(0, 300)}`;
  assert.ok(
    (a.status >= 200 && a.status < 300) || (a.status >= 400 && a.status < 500) || a.status === 503,
    `not a 2xx or a 4xx; ${where}`,
  );
  assert.ok(a.headers["x-ai-trace-id"], "every answer carries its trace id");
  if (a.status >= 200 && a.status < 300) {
    if (String(a.headers["content-type"]).startsWith("text/event-stream")) {
      assert.match(a.text, /data: \[DONE\]\s*$/, `a stream ends with [DONE]; ${where}`);
      assert.doesNotMatch(a.text, /"error"/, `no error event; ${where}`);
    } else {
      const body = JSON.parse(a.text);
      assert.ok(Array.isArray(body.choices) && body.choices.length === 1, where);
    }
    return;
  }
  const { error } = JSON.parse(a.text) as { error: Record<string, unknown> };
  assert.equal(typeof error.message, "string", where);
  assert.equal(typeof error.type, "string", where);
  if (typeof error.code === "number") {
    // An engine's own refusal, passed on as it came (vLLM's shape: the status as its code).
    assert.equal(error.code, a.status, where);
    assert.ok("param" in error, `the engine's param; ${where}`);
    engineRefusals.push(where);
    return;
  }
  assert.ok(typeof error.code === "string" && CODES.has(error.code), `a catalogue code; ${where}`);
  if (a.status === 503) assert.equal(error.code, "model_version_unavailable", where);
  if (error.code === "invalid_request") assert.equal(typeof error.param, "string", `param named; ${where}`);
}

describe("the gateway over HTTP, fuzzed", () => {
  let p: Platform;
  before(async () => {
    p = await startPlatform({
      onlineAdapters: ["tone-a", "tone-b"],
      // `strict` refuses over its limits; `pinned` pins a version no endpoint runs (the documented 503).
      extraAliases: `
    split:
      defaultPool: summary-online
      pools: [{ name: summary-online, maxInputTokens: 8192, maxOutputTokens: 40 }]
      targets: [{ adapter: tone-a, weight: 50 }, { adapter: tone-b, weight: 50 }]
      stickyBy: header:x-user-id
    strict:
      defaultPool: summary-online
      pools: [{ name: summary-online, minInputTokens: 2, maxInputTokens: 60, maxOutputTokens: 16, outputTokensPolicy: reject }]
    pinned:
      defaultPool: summary-online
      defaultVersion: summary-7b-2099-01-01
      pools: [{ name: summary-online, maxInputTokens: 8192, maxOutputTokens: 40 }]
`,
    });
  });
  after(() => p?.stop());

  it("answers every random request with a 2xx or a 4xx with a code, drops no connection, and leaks no slot", async (t) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    let sent = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 3 }), async (calls) => {
          sent += calls.length;
          const answers = await Promise.all(calls.map((c) => send(p.url, agent, c)));
          for (const [i, c] of calls.entries()) checkAnswer(c, answers[i]!);
        }),
        { numRuns: 150, seed: 0x12f0221, includeErrorInReport: true, endOnFailure: true },
      );
    } finally {
      agent.destroy();
    }
    // Every request wrote its log line, and nothing is held: no endpoint slot, no queued ticket.
    for (const until = Date.now() + 5000; p.lines.length < sent && Date.now() < until; )
      await new Promise((r) => setTimeout(r, 10));
    assert.equal(p.lines.length, sent, "one log line per request");
    const seen = new Map<string, number>();
    for (const l of p.lines) {
      const k = `${l.http_status} ${l.error_code ?? l.status}`;
      seen.set(k, (seen.get(k) ?? 0) + 1);
    }
    t.diagnostic(
      `${sent} requests: ${[...seen]
        .sort()
        .map(([k, n]) => `${k} ×${n}`)
        .join(", ")}; ${engineRefusals.length} of them engine refusals passed on`,
    );
    const errors = p.lines.filter(
      (l) => l.status === "error" && l.error_code !== "model_version_unavailable",
    );
    assert.deepEqual(errors, [], "no request ended in error");
    for (const pool of p.gateway.pools.values())
      for (const e of pool.endpoints) {
        assert.equal(e.inflightRequests, 0, `${e.name} holds no request`);
        assert.equal(e.inflightTokens, 0, `${e.name} holds no tokens`);
        assert.equal(e.prefill.held(), null, `${e.name}'s prefill view holds nothing`);
      }
    for (const [name, flow] of p.gateway.flow.pools) assert.equal(flow.depth, 0, `${name}'s queue is empty`);
  });
});
