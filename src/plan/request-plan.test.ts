// Pins the plan: the estimate each candidate pool is judged by is its own served model's (the
// correction is learned per model), the upstream body names the served target, and the routing
// labels the body carried are not sent to the engine.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadConfigTexts } from "../config/loader.js";
import { GatewayError } from "../errors/gateway-error.js";
import { TokenCorrection } from "../profile/token-correction.js";
import { planRequest } from "./request-plan.js";

const CONFIG = {
  "pools.yaml": `
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: small }
spec: { engine: vllm, model: m-7b, endpoints: ["http://127.0.0.1:9"], loraAdapters: [tone] }
---
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: large }
spec: { engine: vllm, model: m-14b, endpoints: ["http://127.0.0.1:10"] }
`,
  "route.yaml": `
apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata: { name: r, annotations: { ai.example.com/route-config-version: "plan-r1" } }
spec:
  modelAliases:
    chat:
      defaultPool: small
      pools:
        - { name: small, maxInputTokens: 1000, maxOutputTokens: 100 }
        - { name: large, minInputTokens: 1001, maxInputTokens: 100000, maxOutputTokens: 100 }
`,
};

function config() {
  const loaded = loadConfigTexts(CONFIG);
  if (!loaded.ok) throw new Error(loaded.errors.map((e) => e.message).join("\n"));
  return loaded.config;
}

const body = (model: string, words: number, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: "user", content: "word ".repeat(words) }],
  ...extra,
});

describe("planRequest", () => {
  it("judges each pool by its own model's corrected estimate", () => {
    const c = config();
    const correction = new TokenCorrection();
    const plain = planRequest(c, correction, {
      kind: "chat",
      body: body("chat", 800),
      headers: {},
      tenant: null,
    });
    const raw = plain.profile.inputTokensRaw;
    assert.equal(plain.decision.pool, "small");
    // m-7b's tokenizer turns out 40% denser; m-14b's matches the estimate.
    for (let i = 0; i < 200; i++) {
      correction.observe("m-7b", 1000, 1400);
      correction.observe("m-14b", 1000, 1000);
    }
    const plan = planRequest(c, correction, {
      kind: "chat",
      body: body("chat", 800),
      headers: {},
      tenant: null,
    });
    assert.ok(correction.apply("m-7b", raw) > 1000, "too large for the small pool on m-7b's count");
    assert.equal(plan.decision.pool, "large");
    assert.equal(
      plan.decision.inputTokens,
      correction.apply("m-14b", raw),
      "the large pool's own model's estimate",
    );
    assert.equal(plan.cost, plan.decision.inputTokens + plan.decision.maxTokens);
  });

  it("sends the adapter as the model, salts the prefix hashes by it, and keeps routing labels out of the body", () => {
    const c = config();
    const input = (model: string) => ({
      kind: "chat" as const,
      body: body(model, 300, { task: "live_ticket_summary", metadata: { request_class: "interactive" } }),
      headers: {},
      tenant: null,
    });
    const base = planRequest(c, null, input("chat"));
    const adapter = planRequest(c, null, input("tone"));
    const sent = JSON.parse(adapter.upstreamBody.toString()) as Record<string, unknown>;
    assert.equal(sent.model, "tone");
    assert.equal(sent.task, undefined);
    assert.deepEqual(sent.metadata, { request_class: "interactive" }, "metadata is OpenAI's own field");
    assert.equal(adapter.profile.task, "live_ticket_summary");
    assert.equal(adapter.profile.requestClass, "interactive");
    assert.deepEqual([adapter.pickRequest.model, adapter.pickRequest.lora], ["m-7b", "tone"]);
    assert.equal(base.pickRequest.lora, null);
    assert.notDeepEqual(
      Array.from(adapter.pickRequest.blockHashes),
      Array.from(base.pickRequest.blockHashes),
    );
  });
});

describe("planRequest upstream body", () => {
  it("sends no stream_options when the request does not stream, as vLLM refuses them there", () => {
    const sent = (extra: Record<string, unknown>) =>
      JSON.parse(
        planRequest(config(), null, {
          kind: "chat",
          body: body("chat", 3, { stream_options: { include_usage: true }, ...extra }),
          headers: {},
          tenant: null,
        }).upstreamBody.toString(),
      );
    assert.equal(sent({}).stream_options, undefined);
    assert.equal(sent({ stream: false }).stream_options, undefined);
    assert.deepEqual(sent({ stream: true }).stream_options, { include_usage: true });
  });
});

describe("planRequest refusals", () => {
  const refusal = (kind: "chat" | "completion", b: Record<string, unknown>) => {
    try {
      planRequest(config(), null, { kind, body: b, headers: {}, tenant: null });
    } catch (err) {
      assert.ok(err instanceof GatewayError, `a GatewayError, not ${(err as Error).stack}`);
      return err;
    }
    assert.fail("planned");
  };

  it("names prompt, not messages, when a completion is too large for every pool", () => {
    const e = refusal("completion", { model: "chat", prompt: "word ".repeat(200_000) });
    assert.equal(e.code, "context_length_exceeded");
    assert.equal(e.param, "prompt");
    assert.equal(refusal("chat", body("chat", 200_000)).param, "messages");
  });

  it("names max_completion_tokens when that is what a chat request sent over the pool's limit", () => {
    const strict = loadConfigTexts({
      ...CONFIG,
      "route.yaml": CONFIG["route.yaml"].replace(
        "maxOutputTokens: 100 }\n        - { name: large",
        "maxOutputTokens: 100, outputTokensPolicy: reject }\n        - { name: large",
      ),
    });
    assert.ok(strict.ok);
    const plan = (b: Record<string, unknown>) => {
      try {
        planRequest(strict.config, null, { kind: "chat", body: b, headers: {}, tenant: null });
      } catch (err) {
        return err as GatewayError;
      }
      assert.fail("planned");
    };
    const e = plan(body("chat", 10, { max_completion_tokens: 500 }));
    assert.deepEqual([e.code, e.param], ["max_tokens_exceeded", "max_completion_tokens"]);
    assert.equal(plan(body("chat", 10, { max_tokens: 500 })).param, "max_tokens");
  });

  it("refuses a body nested too deeply for JSON.stringify with invalid_request on body, not a RangeError", () => {
    const deep = JSON.parse(`${"[".repeat(20000)}${"]".repeat(20000)}`);
    const e = refusal("chat", body("chat", 3, { extra: deep }));
    assert.deepEqual([e.code, e.status, e.param], ["invalid_request", 400, "body"]);
  });
});
