import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { makeEngineConfig } from "./engine-config.js";
import { SimReplica } from "./replica.js";

const KEY = "sk-sim-test-key";

describe("--api-key as vLLM's AuthenticationMiddleware checks it", () => {
  let r: SimReplica;
  before(async () => {
    r = new SimReplica({
      name: "auth",
      port: 0,
      engine: makeEngineConfig("instant", "m", { enableLora: true }),
      apiKey: KEY,
    });
    await r.start();
  });
  after(() => r.stop());

  const call = (path: string, init: RequestInit = {}) => fetch(`${r.url}${path}`, init);
  const chatBody = JSON.stringify({ model: "m", messages: [{ role: "user", content: "x" }], max_tokens: 2 });
  const postChat = (authorization?: string) =>
    call("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
      body: chatBody,
    });

  it('answers every /v1 path without the key with 401 {"error": "Unauthorized"}', async () => {
    for (const [method, path] of [
      ["POST", "/v1/chat/completions"],
      ["POST", "/v1/completions"],
      ["GET", "/v1/models"],
      ["POST", "/v1/load_lora_adapter"],
      ["POST", "/v1/unload_lora_adapter"],
      ["GET", "/v1/no-such-route"],
    ] as const) {
      const res = await call(path, { method, body: method === "POST" ? "{}" : undefined });
      assert.equal(res.status, 401, `${method} ${path}`);
      assert.equal(res.headers.get("content-type"), "application/json");
      assert.equal(await res.text(), '{"error":"Unauthorized"}');
    }
  });

  it("takes Bearer with the right key (scheme in any case) and refuses anything else", async () => {
    assert.equal((await postChat(`Bearer ${KEY}`)).status, 200);
    assert.equal((await postChat(`bearer ${KEY}`)).status, 200);
    assert.equal((await postChat("Bearer wrong")).status, 401);
    assert.equal((await postChat(`Basic ${KEY}`)).status, 401);
    assert.equal(
      (await postChat(`Bearer  ${KEY}`)).status,
      401,
      "the token is everything after the first space",
    );
    assert.equal((await postChat(KEY)).status, 401);
  });

  it("leaves /health, /metrics, /tokenize, /version, /admin/* and OPTIONS open", async () => {
    for (const path of ["/health", "/metrics", "/version", "/admin/state", "/admin/faults"]) {
      assert.equal((await call(path)).status, 200, path);
    }
    const tok = await call("/tokenize", { method: "POST", body: JSON.stringify({ prompt: "hello" }) });
    assert.equal(tok.status, 200);
    assert.notEqual((await call("/v1/models", { method: "OPTIONS" })).status, 401);
  });

  it("serves the openai client given the key, and raises AuthenticationError without it", async () => {
    const ok = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const res = await ok.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "x" }],
      max_tokens: 3,
    });
    assert.equal(res.usage?.completion_tokens, 3);
    assert.deepEqual(
      (await ok.models.list()).data.map((m) => m.id),
      ["m"],
    );
    const bad = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: "nope", maxRetries: 0 });
    await assert.rejects(bad.models.list(), (e: unknown) => e instanceof OpenAI.AuthenticationError);
  });
});
