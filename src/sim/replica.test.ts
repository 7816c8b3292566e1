import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { parsePrometheusText } from "../telemetry/prom-parse.js";
import type { EngineOverrides } from "./engine-config.js";
import { makeEngineConfig } from "./engine-config.js";
import { SimReplica } from "./replica.js";
import { sampleText } from "./sample-text.js";

async function startReplica(
  overrides: EngineOverrides = {},
  opts: { dialect?: "vllm" | "sglang"; profile?: string } = {},
): Promise<SimReplica> {
  const r = new SimReplica({
    name: "t",
    port: 0,
    engine: makeEngineConfig(opts.profile ?? "instant", "sim-7b", { maxModelLen: 4096, ...overrides }),
    dialect: opts.dialect,
    seed: 7,
  });
  await r.start();
  return r;
}

function client(r: SimReplica): OpenAI {
  return new OpenAI({ baseURL: `${r.url}/v1`, apiKey: "unused", maxRetries: 0, timeout: 10_000 });
}

async function post(
  r: SimReplica,
  path: string,
  body: string,
): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(`${r.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null, headers: res.headers };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `cond` holds or `ms` pass (a loaded machine can be slow); the caller asserts after. */
async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !cond() && Date.now() < end; ) await sleep(10);
}

describe("simulated replica: OpenAI API through the official client", () => {
  let r: SimReplica;
  before(async () => {
    r = await startReplica({ loraModules: ["support-lora"], maxLoras: 1 });
  });
  after(() => r.stop());

  it("answers a non-streaming chat with usage including cached tokens", async () => {
    const res = await client(r).chat.completions.create({
      model: "sim-7b",
      messages: [{ role: "user", content: "Summarize the ticket in three parts." }],
      max_tokens: 20,
    });
    assert.equal(res.object, "chat.completion");
    assert.equal(res.choices[0]!.finish_reason, "length");
    assert.equal(res.usage!.completion_tokens, 20);
    assert.ok(res.usage!.prompt_tokens > 5);
    assert.equal(res.usage!.prompt_tokens_details!.cached_tokens, 0);
    assert.ok((res.choices[0]!.message.content ?? "").length > 20);
  });

  it("streams chunks, a final usage chunk with no choices, and [DONE]", async () => {
    const stream = await client(r).chat.completions.create({
      model: "sim-7b",
      messages: [{ role: "user", content: "Stream me a summary." }],
      max_tokens: 9,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let contentChunks = 0;
    let usage: OpenAI.CompletionUsage | null | undefined = null;
    let finish: string | null = null;
    for await (const chunk of stream) {
      if (chunk.usage) {
        usage = chunk.usage;
        assert.equal(chunk.choices.length, 0);
      }
      const c = chunk.choices[0];
      if (c?.delta.content) {
        text += c.delta.content;
        contentChunks++;
      }
      if (c?.finish_reason) finish = c.finish_reason;
    }
    assert.equal(contentChunks, 9);
    assert.equal(finish, "length");
    assert.equal(usage?.completion_tokens, 9);
    assert.ok(text.length > 9);
  });

  it("serves /v1/completions streaming and not", async () => {
    const c = client(r);
    const res = await c.completions.create({ model: "sim-7b", prompt: "Once upon a time", max_tokens: 5 });
    assert.equal(res.object, "text_completion");
    assert.equal(res.usage!.completion_tokens, 5);
    const stream = await c.completions.create({
      model: "sim-7b",
      prompt: "Once upon a time",
      max_tokens: 4,
      stream: true,
    });
    let n = 0;
    for await (const chunk of stream) if (chunk.choices[0]?.text) n++;
    assert.equal(n, 4);
  });

  it("generates the same text for the same seed", async () => {
    const ask = () =>
      client(r).chat.completions.create({
        model: "sim-7b",
        messages: [{ role: "user", content: "Same question" }],
        max_tokens: 12,
        seed: 1234,
      });
    const [a, b] = await Promise.all([ask(), ask()]);
    assert.equal(a.choices[0]!.message.content, b.choices[0]!.message.content);
  });

  it("reuses the previous turn's blocks in a multi-turn chat", async () => {
    const c = client(r);
    const history: OpenAI.ChatCompletionMessageParam[] = [
      { role: "system", content: sampleText("en", 300, 5) },
      { role: "user", content: "First question about the order." },
    ];
    const t1 = await c.chat.completions.create({ model: "sim-7b", messages: history, max_tokens: 40 });
    history.push({ role: "assistant", content: t1.choices[0]!.message.content! });
    history.push({ role: "user", content: "And a follow-up." });
    const t2 = await c.chat.completions.create({ model: "sim-7b", messages: history, max_tokens: 5 });
    const reusable = t1.usage!.prompt_tokens + 40;
    const cached = t2.usage!.prompt_tokens_details!.cached_tokens!;
    assert.ok(
      cached >= Math.floor(reusable / 16) * 16 - 16,
      `cached ${cached} of ${reusable} reusable tokens`,
    );
  });

  it("routes a LoRA adapter by model name and lists it in /v1/models", async () => {
    const c = client(r);
    const models = await c.models.list();
    assert.deepEqual(
      models.data.map((m) => m.id),
      ["sim-7b", "support-lora"],
    );
    const res = await c.chat.completions.create({
      model: "support-lora",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 3,
    });
    assert.equal(res.model, "support-lora");
  });

  it("reports queue, prefill and decode time in Server-Timing (header, or trailer when streaming)", async () => {
    const res = await fetch(`${r.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "x" }], max_tokens: 3 }),
    });
    await res.text();
    assert.match(
      res.headers.get("server-timing") ?? "",
      /^queue;dur=[\d.]+, prefill;dur=[\d.]+, decode;dur=[\d.]+$/,
    );
  });
});

describe("simulated replica: bad input gets vLLM's errors", () => {
  let r: SimReplica;
  before(async () => {
    r = await startReplica();
  });
  after(() => r.stop());

  it("malformed JSON → 400", async () => {
    const res = await post(r, "/v1/chat/completions", "{nope");
    assert.equal(res.status, 400);
    assert.equal(res.json.error.type, "BadRequestError");
    assert.equal(res.json.error.code, 400);
  });

  it("no messages → 400 naming messages", async () => {
    const res = await post(r, "/v1/chat/completions", JSON.stringify({ model: "sim-7b" }));
    assert.equal(res.status, 400);
    assert.equal(res.json.error.param, "messages");
  });

  it("max_tokens ≤ 0 → 400 through the openai client", async () => {
    await assert.rejects(
      client(r).chat.completions.create({
        model: "sim-7b",
        messages: [{ role: "user", content: "x" }],
        max_tokens: 0,
      }),
      (e: unknown) => e instanceof OpenAI.BadRequestError && /max_tokens/.test(e.message),
    );
  });

  it("prompt past --max-model-len → 400 with vLLM's wording", async () => {
    const res = await post(
      r,
      "/v1/chat/completions",
      JSON.stringify({ messages: [{ role: "user", content: sampleText("en", 5000, 1) }], max_tokens: 10 }),
    );
    assert.equal(res.status, 400);
    assert.match(res.json.error.message, /maximum context length is 4096 tokens/);
  });

  it("unknown model → 404", async () => {
    await assert.rejects(
      client(r).chat.completions.create({ model: "gpt-9", messages: [{ role: "user", content: "x" }] }),
      (e: unknown) => e instanceof OpenAI.NotFoundError,
    );
  });
});

describe("simulated replica: cancellation and faults", () => {
  it("a client that disconnects aborts the request and frees its blocks", async () => {
    const r = await startReplica({}, { profile: "h100-llama8b" });
    try {
      const stream = await client(r).chat.completions.create({
        model: "sim-7b",
        messages: [{ role: "user", content: sampleText("en", 1000, 2) }],
        max_tokens: 2000,
        stream: true,
      });
      let got = 0;
      // Leaving the loop makes the openai client abort the HTTP request.
      for await (const _ of stream) if (++got === 5) break;
      assert.equal(got, 5);
      await until(() => r.engine.numRunning === 0);
      assert.equal(r.engine.numRunning, 0);
      assert.equal(r.engine.kv.usage(), 0);
      assert.equal(r.engine.stats.finished.abort, 1);
    } finally {
      await r.stop();
    }
  });

  it("error rate 1 → every request gets 503", async () => {
    const r = await startReplica();
    try {
      r.setFaults({ errorRate: 1 });
      await assert.rejects(
        client(r).chat.completions.create({ model: "sim-7b", messages: [{ role: "user", content: "x" }] }),
        (e: unknown) => e instanceof OpenAI.InternalServerError && e.status === 503,
      );
    } finally {
      await r.stop();
    }
  });

  it("a crash mid-stream closes the socket and the client raises; the replica restarts later", async () => {
    const r = await startReplica({}, { profile: "h100-llama8b" });
    try {
      const stream = await client(r).chat.completions.create({
        model: "sim-7b",
        messages: [{ role: "user", content: "long answer please" }],
        max_tokens: 1000,
        stream: true,
      });
      const posted = await post(r, "/admin/faults", JSON.stringify({ crashAtMs: 60, restartAfterMs: 100 }));
      assert.equal(posted.status, 200);
      let n = 0;
      await assert.rejects(async () => {
        for await (const _ of stream) n++;
      });
      assert.ok(n > 0 && n < 1000, `got ${n} chunks before the crash`);
      assert.equal(r.crashes, 1);
      await until(() => r.isListening);
      const ok = await client(r).chat.completions.create({
        model: "sim-7b",
        messages: [{ role: "user", content: "x" }],
        max_tokens: 2,
      });
      assert.equal(ok.usage!.completion_tokens, 2);
    } finally {
      await r.stop();
    }
  });

  it("crash after N requests", async () => {
    const r = await startReplica();
    try {
      r.setFaults({ crashAfterRequests: 2 });
      const c = client(r);
      await c.chat.completions.create({
        model: "sim-7b",
        messages: [{ role: "user", content: "x" }],
        max_tokens: 2,
      });
      await assert.rejects(
        c.chat.completions.create({ model: "sim-7b", messages: [{ role: "user", content: "x" }] }),
      );
      assert.equal(r.isListening, false);
    } finally {
      await r.stop();
    }
  });

  it("a stalled stream sends nothing for the stall, then resumes", async () => {
    const r = await startReplica();
    try {
      r.setFaults({ stallAfterTokens: 3, stallMs: 300 });
      const stream = await client(r).chat.completions.create({
        model: "sim-7b",
        messages: [{ role: "user", content: "x" }],
        max_tokens: 6,
        stream: true,
      });
      const times: number[] = [];
      for await (const chunk of stream) if (chunk.choices[0]?.delta.content) times.push(performance.now());
      assert.equal(times.length, 6);
      assert.ok(times[3]! - times[2]! >= 250, `gap ${times[3]! - times[2]!} ms`);
    } finally {
      await r.stop();
    }
  });

  it("slow and stale /metrics, failing /health, and 429 with Retry-After past the waiting bound", async () => {
    const r = await startReplica({ maxNumSeqs: 1 }, { profile: "h100-llama8b" });
    try {
      r.setFaults({ metricsDelayMs: 150 });
      let t = performance.now();
      await (await fetch(`${r.url}/metrics`)).text();
      assert.ok(performance.now() - t >= 140);
      r.setFaults({ metricsDelayMs: 0, metricsStale: true });
      const c = client(r);
      await c.chat.completions.create({
        model: "sim-7b",
        messages: [{ role: "user", content: "x" }],
        max_tokens: 2,
      });
      const stale = parsePrometheusText(await (await fetch(`${r.url}/metrics`)).text());
      assert.equal(
        stale.get("vllm:generation_tokens_total")?.[0]?.value ?? 0,
        0,
        "stale page predates the request",
      );
      r.setFaults({ healthFail: true });
      assert.equal((await fetch(`${r.url}/health`)).status, 503);
      r.setFaults({ healthFail: false, healthDelayMs: 150 });
      t = performance.now();
      assert.equal((await fetch(`${r.url}/health`)).status, 200);
      assert.ok(performance.now() - t >= 140);
      r.setFaults({ healthDelayMs: 0 });
      r.setFaults({ healthFail: false, maxWaiting: 1, retryAfterSeconds: 3 });
      const long = { model: "sim-7b", messages: [{ role: "user" as const, content: "x" }], max_tokens: 200 };
      const p1 = c.chat.completions.create(long);
      await until(() => r.engine.numRunning === 1);
      const p2 = c.chat.completions.create(long); // waits: max_num_seqs is 1
      await until(() => r.engine.numWaiting === 1);
      const res = await post(r, "/v1/chat/completions", JSON.stringify(long));
      assert.equal(res.status, 429);
      assert.equal(res.headers.get("retry-after"), "3");
      assert.equal(res.json.error.type, "RateLimitError");
      t = performance.now();
      await Promise.all([p1, p2]);
    } finally {
      await r.stop();
    }
  });

  it("rejects an unknown fault with 400", async () => {
    const r = await startReplica();
    try {
      const res = await post(r, "/admin/faults", JSON.stringify({ explode: true }));
      assert.equal(res.status, 400);
      assert.match(res.json.error.message, /unknown fault "explode"/);
    } finally {
      await r.stop();
    }
  });
});

describe("simulated replica: /metrics dialects", () => {
  for (const dialect of ["vllm", "sglang"] as const) {
    it(`exports ${dialect} names that parse`, async () => {
      const r = await startReplica({}, { dialect });
      try {
        await client(r).chat.completions.create({
          model: "sim-7b",
          messages: [{ role: "user", content: "x" }],
          max_tokens: 4,
        });
        const res = await fetch(`${r.url}/metrics`);
        assert.match(res.headers.get("content-type") ?? "", /text\/plain; version=0.0.4/);
        const m = parsePrometheusText(await res.text());
        assert.equal(m.malformed, 0);
        const names =
          dialect === "vllm"
            ? [
                "vllm:num_requests_running",
                "vllm:num_requests_waiting",
                "vllm:kv_cache_usage_perc",
                "vllm:prefix_cache_queries_total",
                "vllm:prefix_cache_hits_total",
                "vllm:prompt_tokens_total",
                "vllm:generation_tokens_total",
                "vllm:request_success_total",
                "vllm:time_to_first_token_seconds_bucket",
                "vllm:inter_token_latency_seconds_bucket",
                "vllm:e2e_request_latency_seconds_bucket",
                "vllm:request_queue_time_seconds_bucket",
                "vllm:request_prefill_time_seconds_bucket",
                "vllm:request_decode_time_seconds_bucket",
                "vllm:cache_config_info",
              ]
            : [
                "sglang:num_running_reqs",
                "sglang:num_queue_reqs",
                "sglang:token_usage",
                "sglang:cache_hit_rate",
                "sglang:prompt_tokens_total",
                "sglang:generation_tokens_total",
                "sglang:time_to_first_token_seconds_bucket",
              ];
        for (const n of names) assert.ok(m.has(n), `${n} is exported`);
        const gen = dialect === "vllm" ? "vllm:generation_tokens_total" : "sglang:generation_tokens_total";
        assert.equal(m.get(gen)![0]!.value, 4);
        if (dialect === "vllm") {
          assert.deepEqual(m.get("vllm:num_requests_running")![0]!.labels, {
            engine: "0",
            model_name: "sim-7b",
          });
          assert.equal(m.get("vllm:cache_config_info")![0]!.labels.block_size, "16");
        }
      } finally {
        await r.stop();
      }
    });
  }
});
