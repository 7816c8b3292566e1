import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadConfigTexts } from "./loader.js";

const base = {
  "pools.yaml": `
apiVersion: tokengate.dev/v1alpha1
kind: InferencePool
metadata: { name: online }
spec: { engine: vllm, model: m, endpoints: ["http://127.0.0.1:9001"] }
---
apiVersion: tokengate.dev/v1alpha1
kind: InferencePool
metadata: { name: batch }
spec: { engine: vllm, model: m, endpoints: ["http://127.0.0.1:9002"] }
`,
  "route.yaml": `
apiVersion: tokengate.dev/v1alpha1
kind: InferenceRoute
metadata: { name: r, annotations: { ai.example.com/route-config-version: "v1" } }
spec:
  modelAliases:
    m:
      defaultPool: online
      pools:
        - { name: online, maxInputTokens: 8192, maxOutputTokens: 600, maxQueueMs: 800, priority: 100 }
        - { name: batch, maxInputTokens: 65536, maxOutputTokens: 2200, maxQueueMs: 300000, priority: 10 }
  rules: []
`,
};

describe("EndpointPicker documents", () => {
  it("gives each pool its own picker, the pool-less one to the others, and defaults otherwise", () => {
    const loaded = loadConfigTexts({
      ...base,
      "picker.yaml": `
apiVersion: tokengate.dev/v1alpha1
kind: EndpointPicker
metadata: { name: online-picker }
spec:
  pools: [online]
  scorers:
    - { type: prefix-affinity, weight: 5 }
    - { type: queue-depth, weight: 1 }
  loadGuard: { marginMs: 250 }
`,
    });
    assert.ok(loaded.ok, loaded.ok ? "" : JSON.stringify(loaded.errors));
    const online = loaded.config.pickers.get("online")!;
    assert.deepEqual(
      online.scorers.map((s) => [s.type, s.weight]),
      [
        ["prefix-affinity", 5],
        ["queue-depth", 1],
      ],
    );
    assert.equal(online.loadGuard?.marginMs, 250);
    const batch = loaded.config.pickers.get("batch")!;
    assert.ok(
      batch.scorers.some((s) => s.type === "predicted-delay"),
      "the batch pool keeps the defaults",
    );
  });

  it("reports a bad plugin or an unknown pool with its place in the file", () => {
    const loaded = loadConfigTexts({
      ...base,
      "picker.yaml": `apiVersion: tokengate.dev/v1alpha1
kind: EndpointPicker
metadata: { name: p }
spec:
  pools: [onlin]
  scorers:
    - { type: prefix-afinity, weight: 1 }
`,
    });
    assert.equal(loaded.ok, false);
    if (loaded.ok) return;
    const text = loaded.errors.map((e) => `${e.file}:${e.line} ${e.path}: ${e.message}`).join("\n");
    assert.match(text, /picker\.yaml:5 spec\.pools\[0\]: pool "onlin" is not declared/);
    assert.match(text, /picker\.yaml:7 spec\.scorers\[0\]\.type/);
  });
});
