// Pins the gateway against engines that speak unlike vLLM on a good day, end to end with the official
// openai client: streams framed with CRLF (sse-starlette), `data:` without its space and JSON written
// with spaces (Python's json.dumps) are relayed frame by frame with TTFT and usage in the log, and an
// engine started with --api-key is fronted with the pool's key.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { loadConfigTexts } from "../config/loader.js";
import { makeEngineConfig } from "../sim/engine-config.js";
import { SimReplica } from "../sim/replica.js";
import type { RequestLogLine } from "../telemetry/request-log.js";
import { Gateway } from "./gateway.js";

const KEY = "sk-framing-test";
const ENGINE_KEY = "engine-key-for-framing-test";

describe("engines that frame differently, behind --api-key", () => {
  let gw: Gateway;
  let engine: SimReplica;
  let client: OpenAI;
  const lines: RequestLogLine[] = [];
  before(async () => {
    engine = new SimReplica({
      name: "starlette-0",
      port: 0,
      engine: makeEngineConfig("instant", "base-8b", { maxModelLen: 8192 }),
      seed: 1,
      apiKey: ENGINE_KEY,
      framing: { sseLineEnding: "crlf", jsonStyle: "pretty", sseDataSpace: "none" },
    });
    await engine.start();
    process.env.TG_FRAMING_ENGINE_KEY = ENGINE_KEY;
    const texts = {
      "pools.yaml": `
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: p }
spec:
  engine: vllm
  model: base-8b
  upstreamAuth: { apiKeyEnv: TG_FRAMING_ENGINE_KEY }
  endpoints: ["${engine.url}"]
  metrics: { intervalMs: 100 }
  health: { intervalMs: 100 }
`,
      "route.yaml": `
apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata: { name: r, annotations: { ai.example.com/route-config-version: "framing-r1" } }
spec:
  modelAliases:
    chat: { defaultPool: p, pools: [{ name: p, maxInputTokens: 8192, maxOutputTokens: 512 }] }
`,
      "gateway.yaml": `
apiVersion: tokengate.dev/v1alpha1
kind: GatewayConfig
metadata: { name: g }
spec:
  listen: { host: 127.0.0.1, port: 0 }
  auth: { apiKeys: [{ key: ${KEY}, tenant: t }] }
`,
    };
    const loaded = loadConfigTexts(texts);
    if (!loaded.ok) throw new Error(loaded.errors.map((e) => e.message).join("\n"));
    gw = new Gateway(loaded.config, { logDestination: "none" });
    gw.log.listener = (l) => lines.push(l);
    await gw.start();
    const ep = [...gw.pools.values()][0]!.endpoints[0]!;
    for (const end = Date.now() + 15_000; Date.now() < end && !(ep.routable(Date.now()) && ep.modelsReadAt); )
      await new Promise((r) => setTimeout(r, 20));
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.stop();
    await engine.stop();
  });

  it("relays a CRLF, pretty-printed stream frame by frame, with TTFT and usage in the log", async () => {
    const stream = await client.chat.completions.create(
      {
        model: "chat",
        messages: [{ role: "user", content: "summarise" }],
        max_tokens: 24,
        stream: true,
        stream_options: { include_usage: true },
      },
      { headers: { "x-ai-trace-id": "crlf-done" } },
    );
    let text = "";
    let usage: OpenAI.CompletionUsage | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    assert.ok(text.length > 0);
    assert.equal(usage?.completion_tokens, 24);
    for (let i = 0; i < 200 && !lines.some((l) => l.trace_id === "crlf-done"); i++)
      await new Promise((r) => setTimeout(r, 10));
    const line = lines.find((l) => l.trace_id === "crlf-done")!;
    assert.equal(line.status, "ok");
    assert.equal(line.output_tokens, 24);
    assert.ok((line.input_tokens_actual ?? 0) > 0, "usage read from the pretty usage frame");
    assert.ok(line.ttft_ms !== null, "TTFT found in a pretty frame");
  });

  it("passes frames on while the engine is still generating (a stalled engine's first tokens arrive)", async () => {
    // The engine stops after 3 tokens and holds the stream open: a relay that waited for "\n\n" would
    // hand the client nothing at all.
    await fetch(`${engine.url}/admin/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ stallAfterTokens: 3, stallMs: null }),
    });
    const controller = new AbortController();
    try {
      const stream = await client.chat.completions.create(
        { model: "chat", messages: [{ role: "user", content: "summarise" }], max_tokens: 50, stream: true },
        { signal: controller.signal },
      );
      let content = 0;
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta?.content) content++;
        if (content === 3) break;
      }
      assert.equal(content, 3);
    } finally {
      controller.abort();
      await fetch(`${engine.url}/admin/faults`, { method: "DELETE" });
    }
  });

  it("fronts the engine with the pool's key; the engine refuses callers without it", async () => {
    const { data } = await client.chat.completions
      .create({ model: "chat", messages: [{ role: "user", content: "hi" }], max_tokens: 4 })
      .withResponse();
    assert.equal(data.usage?.completion_tokens, 4);
    const direct = await fetch(`${engine.url}/v1/models`);
    assert.equal(direct.status, 401, "the engine does require its key");
    assert.ok(!JSON.stringify(lines).includes(ENGINE_KEY));
  });
});
