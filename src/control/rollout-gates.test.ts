import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { GatewayConfigSet } from "../config/config-set.js";
import { loadConfigTexts } from "../config/loader.js";
import { notForward, type RolloutSample, RolloutStats, rolloutSignature } from "./rollout-gates.js";

const POOLS = ["online", "long"]
  .map(
    (n, i) =>
      `apiVersion: ai.example.com/v1alpha1\nkind: InferencePool\nmetadata: { name: ${n} }\nspec: { engine: vllm, model: m, endpoints: ["http://127.0.0.1:${9000 + i}"] }\n`,
  )
  .join("---\n");

function config(rollout: string): GatewayConfigSet {
  const r = loadConfigTexts({
    "pools.yaml": POOLS,
    "route.yaml": `apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata: { name: r, annotations: { ai.example.com/route-config-version: "r1" } }
spec:
  legacy: { url: http://legacy:8000 }
${rollout}
  modelAliases:
    chat:
      defaultPool: online
      pools:
        - { name: online, maxInputTokens: 8192, maxOutputTokens: 600 }
        - { name: long, minInputTokens: 8193, maxInputTokens: 65536, maxOutputTokens: 2200 }
`,
  });
  assert.ok(r.ok, r.ok ? "" : JSON.stringify(r.errors));
  return r.config;
}

const CANARY = (percent: number, extra = "") => `  rollout:
    stage: canary
    canary: { match: { requestClass: interactive }, percent: ${percent}, routeTo: online }
    gates: { minRequests: 10 }
${extra}`;

function sample(s: Partial<RolloutSample>): RolloutSample {
  return {
    rolloutSide: "legacy",
    task: "live",
    taskKnown: true,
    inputTokensEstimated: 1000,
    inputTokensActual: 1000,
    status: "ok",
    ttftMs: 200,
    ...s,
  };
}

describe("rollout gates", () => {
  it("shadow-label: too few requests fail; the seed's three gates, each with its figure", () => {
    const c = config("  rollout: { stage: shadow-label, gates: { minRequests: 20 } }");
    const stats = new RolloutStats(rolloutSignature(c.route));
    for (let i = 0; i < 10; i++) stats.record(sample({}));
    let r = stats.report("r1", c.route.rollout);
    assert.equal(r.pass, false);
    assert.deepEqual(
      r.gates.map((g) => [g.name, g.pass]),
      [
        ["requests", false],
        ["labelled_ratio", true],
        ["token_estimate_p90_error", true],
        ["unknown_task_ratio", true],
      ],
    );
    // 10 more: one unlabelled (95% labelled holds), one of an unknown task (5% > 1%), estimates off by 10%.
    for (let i = 0; i < 8; i++) stats.record(sample({ inputTokensEstimated: 1100 }));
    stats.record(sample({ task: null }));
    stats.record(sample({ task: "mystery", taskKnown: false }));
    r = stats.report("r1", c.route.rollout);
    const g = Object.fromEntries(r.gates.map((x) => [x.name, x]));
    assert.equal(g.requests!.pass, true);
    assert.equal(g.labelled_ratio!.value, 19 / 20);
    assert.equal(g.labelled_ratio!.pass, true);
    assert.ok(Math.abs(g.token_estimate_p90_error!.value! - 0.1) < 1e-9);
    assert.equal(g.unknown_task_ratio!.value, 1 / 20);
    assert.equal(g.unknown_task_ratio!.pass, false);
    assert.equal(r.pass, false);
    // Requests outside any rollout are not the stage's.
    stats.record(sample({ rolloutSide: null, task: null }));
    assert.equal(stats.report("r1", c.route.rollout).requests, 20);
  });

  it("canary: its own requests' failures and TTFT P95, next to the legacy side's", () => {
    const c = config(CANARY(5));
    const stats = new RolloutStats(rolloutSignature(c.route));
    for (let i = 0; i < 50; i++) stats.record(sample({ rolloutSide: "legacy", ttftMs: 3000 }));
    for (let i = 0; i < 9; i++) stats.record(sample({ rolloutSide: "canary", ttftMs: 300 }));
    assert.equal(stats.report("r1", c.route.rollout).pass, false, "9 canary requests are too few");
    stats.record(sample({ rolloutSide: "canary", ttftMs: 400 }));
    const r = stats.report("r1", c.route.rollout);
    assert.equal(r.pass, true, JSON.stringify(r.gates));
    assert.equal(r.sides.canary.requests, 10);
    assert.match(r.gates[2]!.detail, /legacy P95: 3000 ms/);
    stats.record(sample({ rolloutSide: "canary", status: "error", ttftMs: Number.NaN }));
    assert.equal(stats.report("r1", c.route.rollout).pass, false, "1 failed of 11 is above 1%");
  });

  it("a promotion moves something forward and nothing back", () => {
    const shadow = config("  rollout: { stage: shadow-label }").route;
    const five = config(CANARY(5)).route;
    const fifty = config(CANARY(50)).route;
    const longFull = config(CANARY(50, "    pools: { long: full }")).route;
    const full = config("  rollout: { stage: full }").route;
    assert.equal(notForward(shadow, five), null);
    assert.equal(notForward(five, fifty), null);
    assert.equal(notForward(fifty, longFull), null);
    assert.equal(notForward(longFull, full), null);
    assert.match(notForward(fifty, five)!, /canary would shrink from 50% to 5%/);
    assert.match(notForward(five, five)!, /nothing moves forward/);
    assert.match(notForward(full, shadow)!, /pool online would go back from full to shadow-label/);
    assert.notEqual(rolloutSignature(five), rolloutSignature(fifty));
  });
});
