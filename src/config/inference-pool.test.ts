import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatConfigError } from "./errors.js";
import { type LoadResult, loadConfigTexts } from "./loader.js";

const ROUTE = `apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata: { name: r, annotations: { ai.example.com/route-config-version: "r1" } }
spec:
  modelAliases:
    chat: { defaultPool: p, pools: [{ name: p, maxInputTokens: 100, maxOutputTokens: 10 }] }
`;

function load(spec: string): LoadResult {
  const pool = `apiVersion: tokengate.dev/v1alpha1\nkind: InferencePool\nmetadata:\n  name: p\nspec:\n${spec}`;
  return loadConfigTexts({ "pool.yaml": pool, "route.yaml": ROUTE });
}

function errors(r: LoadResult): string[] {
  return r.ok ? [] : r.errors.map((e) => formatConfigError(e).replace(/^pool\.yaml:/, ""));
}

describe("InferencePool validation", () => {
  it("takes endpoints as URLs or {url, name}, normalises them, and fills defaults", () => {
    const r = load(`  engine: sglang
  model: summary-7b
  endpoints:
    - http://127.0.0.1:8001/
    - { url: "http://localhost:8002", name: online-2 }
    - http://[::1]:8003
`);
    assert.ok(r.ok, errors(r).join("\n"));
    const p = r.config.pools.get("p")!;
    assert.equal(p.engine, "sglang");
    assert.equal(p.modelVersion, "summary-7b", "modelVersion defaults to the model name");
    assert.deepEqual(p.endpoints, [
      { name: "127.0.0.1:8001", url: "http://127.0.0.1:8001", modelVersion: null },
      { name: "online-2", url: "http://localhost:8002", modelVersion: null },
      { name: "[::1]:8003", url: "http://[::1]:8003", modelVersion: null },
    ]);
    assert.deepEqual(p.metrics, { path: "/metrics", intervalMs: 250 });
    assert.deepEqual(p.health, { path: "/health", intervalMs: 1000 });
  });

  it("refuses URLs that are not plain http origins", () => {
    const r = load(`  engine: vllm
  model: m
  endpoints:
    - ftp://127.0.0.1:8001
    - http://127.0.0.1:8002/v1
    - not a url
    - http://127.0.0.1:8003?x=1
    - { url: "http://a:b@127.0.0.1:8004" }
    - http://127.0.0.1:8005
    - http://127.0.0.1:8005
`);
    assert.deepEqual(errors(r), [
      '9:7 spec.endpoints[0]: "ftp://127.0.0.1:8001": only http:// endpoints are supported (got ftp:)',
      '10:7 spec.endpoints[1]: "http://127.0.0.1:8002/v1": write only http://host:port; the gateway adds the /v1/... path',
      '11:7 spec.endpoints[2]: "not a url" is not a URL; write http://host:port',
      '12:7 spec.endpoints[3]: "http://127.0.0.1:8003?x=1": write only http://host:port; the gateway adds the /v1/... path',
      "13:14 spec.endpoints[4].url: endpoint URLs must not contain credentials",
      "15:7 spec.endpoints[6]: duplicate endpoint http://127.0.0.1:8005",
    ]);
  });

  it("requires engine, model and a non-empty endpoint list, and rejects unknown fields", () => {
    const r = load(`  endpoints: []
  metrics: { path: metrics, interval: 5 }
`);
    assert.deepEqual(errors(r), [
      '5:1 spec: missing required field "engine"',
      '5:1 spec: missing required field "model"',
      "6:3 spec.endpoints: must not be empty",
      '7:20 spec.metrics.path: "metrics" is not valid: an absolute HTTP path such as /metrics',
      '7:29 spec.metrics.interval: unknown field "interval" (did you mean "intervalMs"?)',
    ]);
  });

  it("reports a maxKvCacheUsage that is a list containing itself (a YAML alias) instead of throwing", () => {
    const spec = (kv: string) => `  engine: vllm
  model: m
  endpoints: ["http://127.0.0.1:9000"]
  flowControl: { maxKvCacheUsage: ${kv} }
`;
    assert.deepEqual(errors(load(spec("&loop [*loop]"))), [
      "9:18 spec.flowControl.maxKvCacheUsage: must be a number in (0, 1], got a list",
    ]);
    assert.deepEqual(errors(load(spec(".nan"))), [
      "9:35 spec.flowControl.maxKvCacheUsage: must be a number in (0, 1], got NaN",
    ]);
    assert.deepEqual(errors(load(spec("1.5"))), [
      "9:35 spec.flowControl.maxKvCacheUsage: must be a number in (0, 1], got 1.5",
    ]);
  });

  it("turns longPrefill on with a map (150 ms, a quarter kept), off by default or with null", () => {
    const spec = (lp: string) => `  engine: vllm
  model: m
  endpoints: ["http://127.0.0.1:9000"]
  flowControl: { longPrefill: ${lp} }
`;
    const flow = (lp: string) => {
      const r = load(spec(lp));
      assert.ok(r.ok, errors(r).join("\n"));
      return r.config.pools.get("p")!.flowControl.longPrefill;
    };
    assert.deepEqual(flow("{}"), { minPrefillMs: 150, shortReserve: 0.25 });
    assert.deepEqual(flow("{ minPrefillMs: 300, shortReserve: 0.5 }"), {
      minPrefillMs: 300,
      shortReserve: 0.5,
    });
    assert.deepEqual(flow("null"), { minPrefillMs: null, shortReserve: 0.25 });
    assert.deepEqual(flow("{ minPrefillMs: null }"), { minPrefillMs: null, shortReserve: 0.25 }, "null: off");
    assert.deepEqual(errors(load(spec("{ shortReserve: 0.9, minPrefil: 1 }"))), [
      "9:47 spec.flowControl.longPrefill.shortReserve: must be a number in [0, 0.5], got 0.9",
      '9:52 spec.flowControl.longPrefill.minPrefil: unknown field "minPrefil" (did you mean "minPrefillMs"?)',
    ]);
  });

  it("bounds the predicted wait by the drain rule by default, by a number of ms, or not at all", () => {
    const spec = (w: string) => `  engine: vllm
  model: m
  endpoints: ["http://127.0.0.1:9000"]
  flowControl: { maxPredictedWaitMs: ${w} }
`;
    const bound = (w: string) => {
      const r = load(spec(w));
      assert.ok(r.ok, errors(r).join("\n"));
      return r.config.pools.get("p")!.flowControl.maxPredictedWaitMs;
    };
    assert.equal(bound("drain"), "drain");
    assert.equal(bound("300"), 300);
    assert.equal(bound("null"), null);
    assert.match(errors(load(spec("fast"))).join("\n"), /spec\.flowControl\.maxPredictedWaitMs/);
  });

  it("finds its engines by Kubernetes discovery instead of listing them, never both", () => {
    const r = load(`  engine: vllm
  model: m
  discovery: { kubernetes: { inferencePool: vllm-llama, namespace: llm } }
`);
    assert.ok(r.ok, errors(r).join("\n"));
    const pool = r.config.pools.get("p")!;
    assert.deepEqual(pool.endpoints, []);
    assert.deepEqual(pool.discovery, { kubernetes: { inferencePool: "vllm-llama", namespace: "llm" } });
    const defaulted = load(`  engine: vllm
  model: m
  discovery: { kubernetes: { inferencePool: vllm-llama } }
`);
    assert.ok(defaulted.ok);
    assert.equal(defaulted.config.pools.get("p")!.discovery!.kubernetes.namespace, null);
    assert.deepEqual(
      errors(
        load(`  engine: vllm
  model: m
  endpoints: ["http://127.0.0.1:9000"]
  discovery: { kubernetes: { inferencePool: Bad_Name } }
`),
      ),
      [
        "8:3 spec.endpoints: a pool lists its endpoints or finds them by discovery, not both",
        "9:45 spec.discovery.kubernetes.inferencePool: \"Bad_Name\" is not valid: a Kubernetes name: lower-case letters, digits, '-' and '.'",
      ],
    );
    assert.deepEqual(errors(load(`  engine: vllm\n  model: m\n  discovery: {}\n`)), [
      '8:3 spec.discovery: missing required field "kubernetes"',
    ]);
  });
});
