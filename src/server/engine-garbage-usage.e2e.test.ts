// Pins the gateway against an engine that reports garbage token counts (-5, "12", 1e999): the reply
// goes out, the counts are unknown in the log, /metrics stays numeric, and the process lives. Before,
// a negative count made the token counter's inc() throw in the request's settle step, an unhandled
// rejection that ends a Node 20 process, and a string count was concatenated into the metric's value.

import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { loadConfigTexts } from "../config/loader.js";
import type { RequestLogLine } from "../telemetry/request-log.js";
import { Gateway } from "./gateway.js";

const KEY = "sk-garbage-usage-test";

describe("an engine reporting garbage usage", () => {
  let engine: Server;
  let gw: Gateway;
  let usage = "";
  const lines: RequestLogLine[] = [];
  const rejections: unknown[] = [];
  const onRejection = (e: unknown) => rejections.push(e);

  before(async () => {
    // Just enough of vLLM: health, a metrics page, models, and a reply carrying `usage`.
    engine = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        if (req.url === "/metrics")
          return res.end("vllm:num_requests_waiting 0\nvllm:num_requests_running 0\n");
        if (req.url === "/v1/models")
          return res.end('{"object":"list","data":[{"id":"m","object":"model"}]}');
        if (req.url !== "/v1/chat/completions") return res.end("ok");
        res.setHeader("content-type", "application/json");
        res.end(
          `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":${usage}}`,
        );
      });
    });
    await new Promise<void>((r) => engine.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(engine.address() as AddressInfo).port}`;
    const loaded = loadConfigTexts({
      "pools.yaml": `apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: p }
spec: { engine: vllm, model: m, endpoints: ["${url}"], metrics: { intervalMs: 100 }, health: { intervalMs: 100 } }
`,
      "route.yaml": `apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata: { name: r, annotations: { ai.example.com/route-config-version: "garbage-r1" } }
spec:
  modelAliases:
    chat: { defaultPool: p, pools: [{ name: p, maxInputTokens: 8192, maxOutputTokens: 64 }] }
`,
      "gateway.yaml": `apiVersion: tokengate.dev/v1alpha1
kind: GatewayConfig
metadata: { name: g }
spec:
  listen: { host: 127.0.0.1, port: 0 }
  auth: { apiKeys: [{ key: ${KEY}, tenant: t }] }
`,
    });
    if (!loaded.ok) throw new Error(loaded.errors.map((e) => e.message).join("\n"));
    gw = new Gateway(loaded.config, { logDestination: "none" });
    gw.log.listener = (l) => lines.push(l);
    process.on("unhandledRejection", onRejection);
    await gw.start();
    const ep = [...gw.pools.values()][0]!.endpoints[0]!;
    for (const end = Date.now() + 15_000; Date.now() < end && !ep.routable(Date.now()); )
      await new Promise((r) => setTimeout(r, 20));
  });
  after(async () => {
    process.off("unhandledRejection", onRejection);
    await gw.stop();
    await new Promise((r) => engine.close(r));
  });

  it("answers, logs the counts as unknown, keeps /metrics numeric, and leaves no rejection unhandled", async () => {
    const counts = ["-5", '"12"', "1e999", "[1]", "1.5"];
    for (const n of counts) {
      usage = `{"prompt_tokens":${n},"completion_tokens":${n}}`;
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "chat", messages: [{ role: "user", content: "hello" }] }),
      });
      assert.equal(res.status, 200, n);
      await res.text();
    }
    for (const end = Date.now() + 5000; lines.length < counts.length && Date.now() < end; )
      await new Promise((r) => setTimeout(r, 10));
    assert.equal(lines.length, counts.length, "every request wrote its log line");
    for (const l of lines) {
      assert.equal(l.status, "ok");
      assert.equal(l.input_tokens_actual, null);
      assert.equal(l.output_tokens, null);
    }
    const metrics = await (await fetch(`${gw.adminUrl}/metrics`)).text();
    for (const m of metrics.split("\n").filter((s) => /^ai_gateway_(input|output)_tokens_total/.test(s)))
      assert.match(m, / \d+(\.\d+)?$/, m);
    assert.deepEqual(rejections, []);
  });
});
