import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatConfigError } from "./errors.js";
import { type LoadResult, loadConfigTexts } from "./loader.js";

const POOLS = ["online", "long", "batch"]
  .map(
    (n, i) =>
      `apiVersion: ai.example.com/v1alpha1\nkind: InferencePool\nmetadata: { name: ${n} }\nspec: { engine: vllm, model: m-${n}, endpoints: ["http://127.0.0.1:${9000 + i}"] }\n`,
  )
  .join("---\n");

/** A valid route whose `spec` lines can be replaced by the test. */
function route(spec: string): string {
  return `apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata:
  name: r
  annotations:
    ai.example.com/route-config-version: "r1"
spec:
${spec}`;
}

const ALIASES = `  modelAliases:
    chat:
      defaultPool: online
      pools:
        - { name: online, maxInputTokens: 8192, maxOutputTokens: 600 }
        - { name: long, minInputTokens: 8193, maxInputTokens: 65536, maxOutputTokens: 2200 }
        - { name: batch, maxInputTokens: 65536, maxOutputTokens: 2200 }
`;

function load(spec: string): LoadResult {
  return loadConfigTexts({ "pools.yaml": POOLS, "route.yaml": route(spec) });
}

function messages(r: LoadResult, kind: "errors" | "warnings" = "errors"): string[] {
  const list = kind === "errors" ? (r.ok ? [] : r.errors) : r.warnings;
  return list.map((e) => formatConfigError(e).replace(/^route\.yaml:\d+:\d+ /, ""));
}

describe("InferenceRoute validation", () => {
  it("accepts the seed's optional fields: defaultVersion, rollbackFrom, globalMode, knownTasks", () => {
    const r = load(`  globalMode: legacy_passthrough
  knownTasks: [ticket_qa]
  modelAliases:
    chat:
      defaultPool: online
      defaultVersion: summary-7b-2026-06-10
      rollbackFrom: summary-7b-2026-06-15
      pools:
        - { name: online, maxInputTokens: 8192, maxOutputTokens: 600, outputTokensPolicy: reject }
  rules:
    - { name: qa, when: { taskIn: [live_ticket_summary] }, routeTo: online }
`);
    assert.ok(r.ok, messages(r).join("\n"));
    const route = r.config.route;
    assert.equal(route.globalMode, "legacy_passthrough");
    assert.deepEqual([...route.knownTasks].sort(), ["live_ticket_summary", "ticket_qa"]);
    const alias = route.aliases.get("chat")!;
    assert.equal(alias.defaultVersion, "summary-7b-2026-06-10");
    assert.equal(alias.rollbackFrom, "summary-7b-2026-06-15");
    assert.equal(alias.pools[0]!.outputTokensPolicy, "reject");
    assert.equal(alias.pools[0]!.maxQueueMs, 30000);
    assert.equal(alias.pools[0]!.priority, 0);
  });

  it("accepts requestClass as a string or a list", () => {
    const r = load(`${ALIASES}  rules:
    - { name: a, when: { requestClass: batch }, routeTo: batch }
    - { name: b, when: { requestClass: [interactive, assist] }, routeTo: online }
`);
    assert.ok(r.ok, messages(r).join("\n"));
    assert.deepEqual(
      r.config.route.rules.map((x) => x.when.requestClass),
      [["batch"], ["interactive", "assist"]],
    );
  });

  it("rejects numbers written as strings, zero and fractions with the field's path", () => {
    const r = load(`  modelAliases:
    chat:
      defaultPool: online
      pools:
        - { name: online, maxInputTokens: "8192", maxOutputTokens: 0, maxQueueMs: 1.5 }
`);
    assert.deepEqual(messages(r), [
      'spec.modelAliases.chat.pools[0].maxInputTokens: must be an integer, got a string ("8192")',
      "spec.modelAliases.chat.pools[0].maxOutputTokens: must be a positive integer, got 0",
      "spec.modelAliases.chat.pools[0].maxQueueMs: must be an integer, got a number (1.5)",
    ]);
  });

  it("catches typos in rule conditions and values", () => {
    const r = load(`${ALIASES}  globalMode: legacy
  rules:
    - name: a
      when: { taskin: [x], inputTokensLte: 8192 }
      routeTo: online
      queuePolicy: { pauseWhen: { pool: onlin, ttftP95MsGt: 2000, windowSecond: 30 } }
`);
    assert.deepEqual(messages(r), [
      'spec.globalMode: must be one of "rules", "legacy_passthrough", got "legacy"',
      'spec.rules[0].when.taskin: unknown field "taskin" (did you mean "taskIn"?)',
      'spec.rules[0].queuePolicy.pauseWhen.pool: pool "onlin" is not declared under any model alias (did you mean "online"?)',
      'spec.rules[0].queuePolicy.pauseWhen.windowSecond: unknown field "windowSecond" (did you mean "windowSeconds"?)',
    ]);
  });

  it("rejects a rule whose token conditions can never both hold", () => {
    const r = load(`${ALIASES}  rules:
    - { name: a, when: { inputTokensGt: 9000, inputTokensLte: 8192 }, routeTo: long }
`);
    assert.deepEqual(messages(r), [
      "spec.rules[0].when.inputTokensGt: never matches: inputTokensGt (9000) is not below inputTokensLte (8192)",
    ]);
  });

  it("rejects a pool listed twice under an alias and an alias without pools", () => {
    const r = load(`  modelAliases:
    chat:
      defaultPool: online
      pools:
        - { name: online, maxInputTokens: 8192, maxOutputTokens: 600 }
        - { name: online, maxInputTokens: 100, maxOutputTokens: 600 }
    other:
      defaultPool: online
      pools: []
`);
    assert.deepEqual(messages(r), [
      'spec.modelAliases.chat.pools[1].name: pool "online" is listed twice under this alias',
      "spec.modelAliases.other.pools: must not be empty",
    ]);
  });

  it("rejects a version annotation that is not a string", () => {
    const r = loadConfigTexts({
      "pools.yaml": POOLS,
      "route.yaml": route(ALIASES).replace('"r1"', "3"),
    });
    assert.ok(
      messages(r).some((m) => m.includes("must be a string (quote it), got a number (3)")),
      messages(r).join("\n"),
    );
  });

  it("warns about gaps between pool ranges, unreachable rules, and rules shadowing the rest", () => {
    const r = load(`  modelAliases:
    chat:
      defaultPool: online
      pools:
        - { name: online, maxInputTokens: 8192, maxOutputTokens: 600 }
        - { name: long, minInputTokens: 10000, maxInputTokens: 65536, maxOutputTokens: 2200 }
        - { name: batch, maxInputTokens: 65536, maxOutputTokens: 2200 }
  rules:
    - { name: never, when: { inputTokensGt: 8192 }, routeTo: online }
    - { name: all, routeTo: batch }
    - { name: last, when: { requestClass: x }, routeTo: long }
`);
    assert.ok(r.ok);
    assert.deepEqual(messages(r, "warnings"), [
      'spec.rules[0].when: rule "never" can never match: pool "online" takes 0..8192 input tokens',
      'spec.rules[1]: rule "all" has no conditions, so the rules after it are only reached by oversize inputs',
    ]);
    const gap = load(`  modelAliases:
    chat:
      defaultPool: online
      pools:
        - { name: online, maxInputTokens: 8192, maxOutputTokens: 600 }
        - { name: long, minInputTokens: 10000, maxInputTokens: 65536, maxOutputTokens: 2200 }
`);
    assert.deepEqual(
      messages(gap, "warnings").filter((m) => m.startsWith("spec.")),
      ["spec.modelAliases.chat.pools: no pool takes inputs of 8193..9999 tokens; they will be refused"],
    );
  });
});
