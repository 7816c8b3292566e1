import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { GatewayConfigSet } from "../config/config-set.js";
import { formatConfigError } from "../config/errors.js";
import { loadConfigTexts } from "../config/loader.js";
import type { StickyBy } from "../config/route-types.js";
import { rolloutEffect, sendsToLegacy } from "./rollout-effect.js";
import type { RouteDecision } from "./route-decision.js";
import { routeRequest } from "./route-request.js";

const POOLS = ["online", "long", "batch"]
  .map(
    (n, i) =>
      `apiVersion: ai.example.com/v1alpha1\nkind: InferencePool\nmetadata: { name: ${n} }\nspec: { engine: vllm, model: m-${n}, modelVersion: v1, endpoints: ["http://127.0.0.1:${9000 + i}"] }\n`,
  )
  .join("---\n");

function load(extra: string, aliasExtra = "") {
  return loadConfigTexts({
    "pools.yaml": POOLS,
    "route.yaml": `apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata: { name: r, annotations: { ai.example.com/route-config-version: "r1" } }
spec:
${extra}
  modelAliases:
    chat:
      defaultPool: online
${aliasExtra}      pools:
        - { name: online, maxInputTokens: 8192, maxOutputTokens: 600 }
        - { name: long, minInputTokens: 8193, maxInputTokens: 65536, maxOutputTokens: 2200 }
        - { name: batch, maxInputTokens: 65536, maxOutputTokens: 2200 }
  rules:
    - { name: live, when: { taskIn: [live], inputTokensLte: 8192 }, routeTo: online }
    - { name: live-long, when: { taskIn: [live], inputTokensGt: 8192 }, routeTo: long }
    - { name: batch, when: { requestClass: batch }, routeTo: batch }
`,
  });
}

function config(extra: string, aliasExtra = ""): GatewayConfigSet {
  const r = load(extra, aliasExtra);
  assert.ok(r.ok, r.ok ? "" : r.errors.map(formatConfigError).join("\n"));
  return r.config;
}

function errors(extra: string): string[] {
  const r = load(extra);
  assert.ok(!r.ok, "expected the config to be refused");
  return r.errors.map((e) => formatConfigError(e).replace(/^route\.yaml:\d+:\d+ /, ""));
}

const LEGACY = "  legacy: { url: http://legacy.internal:8000 }";

function decide(c: GatewayConfigSet, task: string | null, requestClass: string | null, inputTokens: number) {
  const d = routeRequest(c, { modelAlias: "chat", task, requestClass, inputTokens, maxTokens: null });
  assert.ok(d.ok);
  return d as RouteDecision;
}

function effect(
  c: GatewayConfigSet,
  d: RouteDecision | null,
  labels: { task: string | null; requestClass: string | null },
  key: string | null,
) {
  return rolloutEffect(c.route, labels, d, (_by: StickyBy) => key, []);
}

describe("rollout stages and route rollback", () => {
  it("validates spec.legacy and spec.rollout: every error with its path", () => {
    assert.deepEqual(errors("  rollout: { stage: shadow-label }"), [
      'spec.rollout.stage: stages shadow-label and canary send traffic to the legacy service: set spec.legacy.url (e.g. "http://summarizer-legacy:8000")',
    ]);
    const e = errors(`${LEGACY}
  rollout:
    stage: canary
    route_effect: disabled
    write_headers: [X-AI-Task, X-AI-Colour]
    pools: { onlin: full }
    gates: { labelledRatioMin: 1.5 }`);
    assert.ok(
      e.some((m) => /route_effect disabled contradicts stage canary/.test(m)),
      e.join("\n"),
    );
    assert.ok(
      e.some((m) => /write_headers\[1\]: "X-AI-Colour" is not a label/.test(m)),
      e.join("\n"),
    );
    assert.ok(
      e.some((m) => /pools.onlin: pool "onlin" is not declared.*did you mean "online"/.test(m)),
      e.join("\n"),
    );
    assert.ok(
      e.some((m) => /labelledRatioMin: must be a ratio from 0 to 1/.test(m)),
      e.join("\n"),
    );
    assert.ok(
      e.some((m) => /a canary stage needs a "canary" block/.test(m)),
      e.join("\n"),
    );
    const c = errors(`${LEGACY}
  rollout:
    stage: canary
    canary: { percent: 101, routeTo: online }`);
    assert.deepEqual(c, ["spec.rollout.canary.percent: must be a number from 0 to 100, got a number (101)"]);
    assert.match(errors("  legacy: { url: http://legacy:8000/v1 }")[0]!, /origin only/);
  });

  it("accepts the seed's shadow-label block as written, with its three headers", () => {
    const c = config(`${LEGACY}
  rollout:
    stage: shadow-label
    traffic: 100%
    route_effect: disabled
    write_headers: [X-AI-Task, X-AI-Request-Class, X-AI-Input-Tokens-Estimated]`);
    const r = c.route.rollout!;
    assert.equal(r.stage, "shadow-label");
    assert.deepEqual(r.writeHeaders, ["x-ai-task", "x-ai-request-class", "x-ai-input-tokens-estimated"]);
    assert.equal(r.gates.labelledRatioMin, 0.95);
    assert.ok(sendsToLegacy(c.route));
    const d = decide(c, "live", "interactive", 500);
    const fx = effect(c, d, { task: "live", requestClass: "interactive" }, "t1");
    assert.deepEqual(fx, {
      to: "legacy",
      stage: "shadow-label",
      reason: "rollout=shadow-label",
      passthrough: false,
    });
    // A request the route refuses still goes to the legacy service.
    assert.equal(effect(c, null, { task: null, requestClass: null }, null).to, "legacy");
  });

  it("canary: only matching requests of routeTo, a sticky share that only grows", () => {
    const at = (percent: number) =>
      config(`${LEGACY}
  rollout:
    stage: canary
    canary:
      match: { requestClass: interactive, inputTokensLte: 8192 }
      percent: ${percent}
      routeTo: online
      stickyBy: tenant
    pools: { long: full }`);
    const tenants = Array.from({ length: 400 }, (_, i) => `tenant-${i}`);
    const inside = (c: GatewayConfigSet) => {
      const d = decide(c, "live", "interactive", 500);
      return new Set(
        tenants.filter((t) => effect(c, d, { task: "live", requestClass: "interactive" }, t).to === "route"),
      );
    };
    const five = inside(at(5));
    const fifty = inside(at(50));
    const all = inside(at(100));
    assert.ok(five.size > 5 && five.size < 40, `5% of 400 tenants, got ${five.size}`);
    assert.ok(fifty.size > 160 && fifty.size < 240, `50% of 400 tenants, got ${fifty.size}`);
    assert.equal(all.size, 400);
    for (const t of five) assert.ok(fifty.has(t), `${t} was in the 5% canary and left it at 50%`);
    assert.equal(inside(at(0)).size, 0);
    const c = at(50);
    const t = [...fifty][0]!;
    const d = decide(c, "live", "interactive", 500);
    assert.deepEqual(effect(c, d, { task: "live", requestClass: "interactive" }, t), {
      to: "route",
      stage: "canary",
      note: "canary=50%",
    });
    // Not matching: a batch-class request the rules send elsewhere, or one of another class.
    const batch = decide(c, null, "batch", 500);
    assert.equal(effect(c, batch, { task: null, requestClass: "batch" }, t).to, "legacy");
    const other = decide(c, "live", "background", 500);
    assert.deepEqual(effect(c, other, { task: "live", requestClass: "background" }, t), {
      to: "legacy",
      stage: "canary",
      reason: "rollout=canary,no_match",
      passthrough: false,
    });
    // A pool with its own stage: long-context requests are served by tokengate already.
    const long = decide(c, "live", "interactive", 20_000);
    assert.equal(long.pool, "long");
    assert.deepEqual(effect(c, long, { task: "live", requestClass: "interactive" }, t), {
      to: "route",
      stage: "full",
      note: null,
    });
  });

  it("legacy_passthrough sends everything to the legacy service unchanged; without one, the old default-pool meaning", () => {
    const c = config(`${LEGACY}\n  globalMode: legacy_passthrough`);
    const d = decide(c, "live", "interactive", 20_000);
    assert.equal(d.pool, "long", "the rules still decide on paper");
    assert.deepEqual(effect(c, d, { task: "live", requestClass: null }, "t"), {
      to: "legacy",
      stage: null,
      reason: "legacy_passthrough",
      passthrough: true,
    });
    const bare = config("  globalMode: legacy_passthrough");
    assert.equal(sendsToLegacy(bare.route), false);
    assert.equal(decide(bare, "live", null, 500).reason, "legacy_passthrough");
    const full = config(`${LEGACY}\n  rollout: { stage: full }`);
    assert.equal(sendsToLegacy(full.route), false, "a full rollout costs the request path nothing");
  });

  it("model-alias rollback: rollbackFrom's targets are served at defaultVersion, weights kept, and say so", () => {
    const c = config(
      "",
      `      defaultVersion: v1
      rollbackFrom: v2
      targets: [{ modelVersion: v1, weight: 50 }, { modelVersion: v2, weight: 50 }]
`,
    );
    let rolledBack = 0;
    for (let i = 0; i < 40; i++) {
      const d = routeRequest(c, {
        modelAlias: "chat",
        task: null,
        requestClass: null,
        inputTokens: 100,
        maxTokens: null,
        stickyKey: () => `t${i}`,
      });
      assert.ok(d.ok);
      assert.equal(d.modelVersion, "v1");
      assert.equal(d.target.modelVersion, "v1");
      if (d.target.name === "v2") {
        rolledBack++;
        assert.match(d.reason, /,alias_rollback=v2->v1$/);
      } else assert.doesNotMatch(d.reason, /alias_rollback/);
    }
    assert.ok(rolledBack > 5 && rolledBack < 35, `about half the tenants were on v2: ${rolledBack}`);
    const r = load("", "      rollbackFrom: v2\n");
    assert.ok(!r.ok);
    assert.match(formatConfigError(r.errors[0]!), /rollbackFrom: needs defaultVersion/);
  });
});
