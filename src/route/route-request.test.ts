import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { GatewayConfigSet } from "../config/config-set.js";
import { loadConfig, loadConfigTexts } from "../config/loader.js";
import type { RouteDecision, RouteProfile, RouteRejection } from "./route-decision.js";
import { routeRequest } from "./route-request.js";

const example = fileURLToPath(new URL("../../examples/support-summary", import.meta.url));

async function seedConfig(): Promise<GatewayConfigSet> {
  const r = await loadConfig(example, { missingEnv: "warning", env: {} });
  assert.ok(r.ok);
  return r.config;
}

function profile(p: Partial<RouteProfile>): RouteProfile {
  return {
    modelAlias: "summary-default",
    task: null,
    requestClass: null,
    inputTokens: 1000,
    maxTokens: null,
    ...p,
  };
}

function routed(r: RouteDecision | RouteRejection): RouteDecision {
  assert.ok(r.ok, `expected a decision, got ${JSON.stringify(r)}`);
  return r;
}

function rejected(r: RouteDecision | RouteRejection): RouteRejection {
  assert.ok(!r.ok, `expected a rejection, got ${JSON.stringify(r)}`);
  return r;
}

/** A small config: two aliases sharing pool `long`, and a rule whose pool is too small for some inputs. */
function customConfig(extra = "", poolExtra = ""): GatewayConfigSet {
  const pools = ["online", "long", "other"]
    .map(
      (n, i) =>
        `apiVersion: ai.example.com/v1alpha1\nkind: InferencePool\nmetadata: { name: ${n} }\nspec: { engine: vllm, model: m-${n}, modelVersion: v-${n}, endpoints: ["http://127.0.0.1:${9000 + i}"] }\n`,
    )
    .join("---\n");
  const route = `apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata: { name: r, annotations: { ai.example.com/route-config-version: "c1" } }
spec:
${extra}  modelAliases:
    chat:
      defaultPool: online
      pools:
        - { name: online, maxInputTokens: 8192, maxOutputTokens: 600${poolExtra} }
        - { name: long, minInputTokens: 8193, maxInputTokens: 32768, maxOutputTokens: 2000 }
    side:
      defaultPool: other
      pools:
        - { name: other, maxInputTokens: 4096, maxOutputTokens: 100 }
        - { name: long, maxInputTokens: 32768, maxOutputTokens: 2000 }
  rules:
    - { name: interactive, when: { requestClass: interactive }, routeTo: online }
    - { name: long-docs, when: { taskIn: [doc] }, routeTo: long }
`;
  const r = loadConfigTexts({ "pools.yaml": pools, "route.yaml": route });
  assert.ok(r.ok, r.ok ? "" : JSON.stringify(r.errors));
  return r.config;
}

describe("routeRequest on seed 004's route", () => {
  it("sends the seed's live request to summary-online by rule live-summary-short", async () => {
    const d = routed(
      routeRequest(
        await seedConfig(),
        profile({
          task: "live_ticket_summary",
          requestClass: "interactive",
          inputTokens: 2864,
          maxTokens: 420,
        }),
      ),
    );
    assert.equal(d.pool, "summary-online");
    assert.equal(d.rule, "live-summary-short");
    assert.equal(d.reason, "rule=live-summary-short");
    assert.equal(d.reasonLabel, "live-summary-short");
    assert.equal(d.upstreamModel, "summary-7b");
    assert.equal(d.modelVersion, "summary-7b-2026-06-15");
    assert.equal(d.configVersion, "support-summary-2026-06-15-r3");
    assert.deepEqual([d.maxTokens, d.maxTokensClamped, d.maxTokensSource], [420, false, "request"]);
    assert.deepEqual([d.taskKnown, d.priority, d.maxQueueMs, d.queuePolicy], [true, 100, 800, null]);
    assert.deepEqual(d.explain.slice(2), [
      "rule live-summary-short: match (task live_ticket_summary, input 2864 <= 8192) → pool summary-online",
      "max_tokens 420 is within pool summary-online's maxOutputTokens 600",
    ]);
  });

  it("sends long live conversations to summary-long, and splits exactly at 8192", async () => {
    const c = await seedConfig();
    const at = (n: number) =>
      routed(routeRequest(c, profile({ task: "live_ticket_summary", inputTokens: n })));
    assert.equal(at(8192).pool, "summary-online");
    const long = at(8193);
    assert.equal(long.pool, "summary-long");
    assert.equal(long.reason, "rule=live-summary-long");
    assert.equal(long.upstreamModel, "summary-14b-long");
    assert.ok(
      long.explain.includes("rule live-summary-short: no match, input 8193 > 8192"),
      long.explain.join("\n"),
    );
  });

  it("sends the seed's batch request to summary-batch with its pause policy", async () => {
    const d = routed(
      routeRequest(
        await seedConfig(),
        profile({
          task: "batch_recompute_summary",
          requestClass: "batch",
          inputTokens: 52000,
          maxTokens: 1800,
        }),
      ),
    );
    assert.equal(d.pool, "summary-batch");
    assert.equal(d.reason, "rule=quality-batch");
    assert.equal(d.priority, 10);
    assert.equal(d.queuePolicy?.pauseWhen?.ttftP95MsGt, 2000);
    assert.equal(d.queuePolicy?.pauseWhen?.pool, "summary-online");
    assert.equal(d.taskKnown, true, "the example lists the batch task in knownTasks");
  });

  it("falls back to the default pool for unknown tasks, and to the first pool that fits when it is too small", async () => {
    const c = await seedConfig();
    const small = routed(routeRequest(c, profile({ task: "mystery", inputTokens: 3000 })));
    assert.deepEqual(
      [small.pool, small.reason, small.reasonLabel, small.taskKnown],
      ["summary-online", "default", "default", false],
    );
    const big = routed(routeRequest(c, profile({ task: null, inputTokens: 20000 })));
    assert.deepEqual(
      [big.pool, big.reason, big.reasonLabel, big.taskKnown],
      ["summary-long", "default,size_fallback=summary-long", "default", false],
    );
    assert.ok(big.explain.includes("rule live-summary-short: no match, no task given"));
    assert.ok(big.explain.includes("rule quality-batch: no match, no request class given"));
  });

  it("refuses input larger than every pool with context_length_exceeded, never truncating", async () => {
    const r = rejected(
      routeRequest(await seedConfig(), profile({ task: "live_ticket_summary", inputTokens: 70000 })),
    );
    assert.deepEqual(
      [r.code, r.status, r.param, r.route],
      ["context_length_exceeded", 400, "messages", "summary-long"],
    );
    assert.match(r.message, /about 70000 input tokens.*largest limit.*65536 tokens \(pool summary-long\)/);
    assert.ok(
      r.explain.includes(
        "rule live-summary-long: conditions hold (task live_ticket_summary, input 70000 > 8192) but pool summary-long takes 8193..65536 input tokens, not 70000; next rule",
      ),
      r.explain.join("\n"),
    );
  });

  it("refuses an unknown model alias and lists the known ones", async () => {
    const r = rejected(routeRequest(await seedConfig(), profile({ modelAlias: "gpt-4" })));
    assert.deepEqual([r.code, r.status, r.param, r.route], ["model_not_found", 404, "model", null]);
    assert.deepEqual(r.fallbackOptions, ["summary-default"]);
    assert.match(r.message, /"gpt-4" does not exist; available models: summary-default/);
  });

  it("clamps max_tokens to the pool's maxOutputTokens and says so in the reason", async () => {
    const d = routed(
      routeRequest(await seedConfig(), profile({ task: "live_ticket_summary", maxTokens: 900 })),
    );
    assert.equal(d.reason, "rule=live-summary-short,max_tokens_clamped=900->600");
    assert.equal(d.reasonLabel, "live-summary-short", "the metric label stays low-cardinality");
    assert.deepEqual(
      [d.maxTokens, d.maxTokensRequested, d.maxTokensClamped, d.maxTokensSource],
      [600, 900, true, "pool_clamp"],
    );
  });

  it("sends the pool's maxOutputTokens upstream when max_tokens is absent", async () => {
    const d = routed(
      routeRequest(await seedConfig(), profile({ task: "live_ticket_summary", inputTokens: 20000 })),
    );
    assert.deepEqual([d.maxTokens, d.maxTokensClamped, d.maxTokensSource], [2200, false, "pool_default"]);
    assert.equal(d.reason, "rule=live-summary-long");
  });
});

describe("routeRequest rule semantics", () => {
  it("skips a rule whose pool cannot take the input and records why", () => {
    const d = routed(
      routeRequest(
        customConfig(),
        profile({ modelAlias: "chat", requestClass: "interactive", inputTokens: 20000 }),
      ),
    );
    assert.deepEqual([d.pool, d.reason], ["long", "default,size_fallback=long"]);
    assert.ok(
      d.explain.includes(
        "rule interactive: conditions hold (class interactive) but pool online takes 0..8192 input tokens, not 20000; next rule",
      ),
      d.explain.join("\n"),
    );
  });

  it("applies a rule only to aliases that list its pool", () => {
    const c = customConfig();
    const d = routed(
      routeRequest(
        c,
        profile({ modelAlias: "side", requestClass: "interactive", task: "doc", inputTokens: 100 }),
      ),
    );
    assert.deepEqual(
      [d.pool, d.rule, d.upstreamModel, d.modelVersion],
      ["long", "long-docs", "m-long", "v-long"],
    );
    assert.ok(d.explain.includes("rule interactive: skipped, pool online is not a pool of alias side"));
    const other = routed(
      routeRequest(c, profile({ modelAlias: "side", requestClass: "interactive", inputTokens: 100 })),
    );
    assert.deepEqual([other.pool, other.reason, other.maxTokens], ["other", "default", 100]);
  });

  it("refuses max_tokens above the pool limit when the pool's outputTokensPolicy is reject", () => {
    const c = customConfig("", ", outputTokensPolicy: reject");
    const r = rejected(routeRequest(c, profile({ modelAlias: "chat", maxTokens: 601 })));
    assert.deepEqual(
      [r.code, r.status, r.param, r.route],
      ["max_tokens_exceeded", 400, "max_tokens", "online"],
    );
    assert.match(r.message, /max_tokens is 601, but pool online allows at most 600 output tokens/);
    assert.equal(routed(routeRequest(c, profile({ modelAlias: "chat", maxTokens: 600 }))).maxTokens, 600);
  });

  it("skips rules in legacy_passthrough mode and refuses what the default pool cannot take", () => {
    const c = customConfig("  globalMode: legacy_passthrough\n");
    const d = routed(routeRequest(c, profile({ modelAlias: "chat", task: "doc", inputTokens: 100 })));
    assert.deepEqual(
      [d.pool, d.rule, d.reason, d.reasonLabel],
      ["online", null, "legacy_passthrough", "legacy_passthrough"],
    );
    const r = rejected(routeRequest(c, profile({ modelAlias: "chat", inputTokens: 9000 })));
    assert.equal(r.code, "context_length_exceeded");
    assert.match(r.message, /8192 tokens \(pool online\)/);
  });

  it("refuses sizes that fall in a gap between pools with no_eligible_pool", () => {
    const r = loadConfigTexts({
      "a.yaml": `apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: a }
spec: { engine: vllm, model: m, endpoints: ["http://127.0.0.1:9000"] }
---
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: b }
spec: { engine: vllm, model: m, endpoints: ["http://127.0.0.1:9001"] }
---
apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata: { name: r, annotations: { ai.example.com/route-config-version: "g" } }
spec:
  modelAliases:
    m:
      defaultPool: a
      pools: [{ name: a, maxInputTokens: 100, maxOutputTokens: 10 }, { name: b, minInputTokens: 200, maxInputTokens: 300, maxOutputTokens: 10 }]
`,
    });
    assert.ok(r.ok);
    const rej = rejected(routeRequest(r.config, profile({ modelAlias: "m", inputTokens: 150 })));
    assert.equal(rej.code, "no_eligible_pool");
    assert.match(rej.message, /takes 150 input tokens \(estimated\); pools take a 0\.\.100, b 200\.\.300/);
  });
});

describe("routeRequest without an explanation (the request path)", () => {
  it("decides exactly as with one, and builds no trace", async () => {
    const config = await seedConfig();
    const cases: Partial<RouteProfile>[] = [
      { task: "live_ticket_summary", inputTokens: 2864, maxTokens: 420 },
      { task: "live_ticket_summary", inputTokens: 9000 },
      { task: "batch_summary_recompute", requestClass: "batch", inputTokens: 52000, maxTokens: 900 },
      { task: "unknown_task", inputTokens: 500, maxTokens: 100_000 },
      { task: "live_ticket_summary", inputTokens: 10_000_000 },
      { modelAlias: "nope" },
    ];
    for (const c of cases) {
      const full = routeRequest(config, profile(c));
      const lean = routeRequest(config, profile(c), { explain: false });
      assert.ok(full.explain.length > 0);
      assert.deepEqual(lean.explain, []);
      assert.deepEqual({ ...lean, explain: [] }, { ...full, explain: [] }, JSON.stringify(c));
    }
  });
});
