import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { formatConfigError } from "./errors.js";
import { type LoadResult, loadConfig, loadConfigTexts } from "./loader.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const example = `${root}examples/support-summary`;
const broken = `${root}src/config/testdata/broken`;
const env = { TOKENGATE_UPSTREAM_SECRET: "a-secret-of-sixteen+" };

function errorsOf(r: LoadResult) {
  assert.equal(r.ok, false, "expected the config to be rejected");
  return r.ok ? [] : r.errors;
}

function lines(r: LoadResult): string[] {
  return errorsOf(r).map((e) => formatConfigError({ ...e, file: e.file.replace(root, "") }));
}

describe("loadConfig on the support-summary example", () => {
  it("loads every document, reports the route version, and skips the SimFleet", async () => {
    const r = await loadConfig(example, { env });
    assert.ok(r.ok, r.ok ? "" : r.errors.map(formatConfigError).join("\n"));
    const c = r.config;
    assert.equal(c.version, "support-summary-2026-06-15-r3");
    assert.deepEqual([...c.pools.keys()], ["summary-online", "summary-long", "summary-batch"]);
    assert.deepEqual(
      c.route.rules.map((x) => x.name),
      ["live-summary-short", "live-summary-long", "quality-batch"],
    );
    assert.equal(c.pools.get("summary-online")?.model, "summary-7b");
    assert.equal(c.pools.get("summary-long")?.endpoints.length, 2);
    assert.equal(c.gateway.listen.port, 8080);
    assert.equal(c.gateway.auth.trustedUpstreams?.sharedSecret, env.TOKENGATE_UPSTREAM_SECRET);
    assert.deepEqual(
      c.sources.map((s) => s.replace(`${example}/`, "")).filter((s) => s !== "fleet.yaml"),
      ["budget.yaml", "gateway.yaml", "pools.yaml", "route.yaml"],
    );
    assert.equal(c.budgets.tenants.get("support-basic")?.maxSingleInputTokens, 12000);
    assert.deepEqual(c.budgets.tenants.get("quality-job")?.allowedWindows, [
      { startMinutes: 1200, endMinutes: 510 },
    ]);
    for (const d of c.documents.filter((x) => x.kind === "SimFleet")) assert.equal(d.skipped, true);
    assert.deepEqual(r.warnings, []);
  });

  it("returns a frozen config", async () => {
    const r = await loadConfig(example, { env });
    assert.ok(r.ok);
    assert.ok(Object.isFrozen(r.config));
    assert.ok(Object.isFrozen(r.config.gateway.timeouts));
    const pool = r.config.route.aliases.get("summary-default")!.pools[0]!;
    assert.throws(() => {
      (pool as { maxInputTokens: number }).maxInputTokens = 1;
    }, TypeError);
  });

  it("reads the seed's pool limits exactly", async () => {
    const r = await loadConfig(example, { env });
    assert.ok(r.ok);
    const alias = r.config.route.aliases.get("summary-default")!;
    assert.deepEqual(
      alias.pools.map((p) => [
        p.name,
        p.minInputTokens,
        p.maxInputTokens,
        p.maxOutputTokens,
        p.maxQueueMs,
        p.priority,
      ]),
      [
        ["summary-online", 0, 8192, 600, 800, 100],
        ["summary-long", 8193, 65536, 2200, 12000, 50],
        ["summary-batch", 0, 65536, 2200, 300000, 10],
      ],
    );
    const batch = r.config.route.rules[2]!;
    assert.deepEqual(batch.when.requestClass, ["batch"]);
    assert.deepEqual(batch.queuePolicy?.pauseWhen, {
      pool: "summary-online",
      ttftP95MsGt: 2000,
      windowSeconds: 60,
      resumeBelowMs: 1600,
      resumeAfterSeconds: 10,
      minSamples: 20,
      retryAfterSeconds: 900,
    });
    assert.deepEqual(batch.queuePolicy?.fallbackOptions, ["retry_later", "short_summary_only"]);
  });

  it("treats an unset secret env variable as an error, or a warning when asked", async () => {
    const strict = await loadConfig(example, { env: {} });
    assert.match(
      lines(strict).join("\n"),
      /gateway\.yaml:\d+:\d+ spec\.auth\.trustedUpstreams\.sharedSecretEnv: environment variable TOKENGATE_UPSTREAM_SECRET is not set/,
    );
    const lax = await loadConfig(example, { env: {}, missingEnv: "warning" });
    assert.ok(lax.ok);
    assert.equal(lax.config.gateway.auth.trustedUpstreams?.sharedSecret, null);
    assert.equal(lax.warnings.length, 1);
  });
});

describe("loadConfig on a broken config", () => {
  it("collects every error with file:line:col, YAML path and a suggestion, and no config", async () => {
    const r = await loadConfig(broken);
    assert.equal(r.ok, false);
    assert.equal("config" in r, false);
    assert.deepEqual(lines(r), [
      'src/config/testdata/broken/pools.yaml:11:7 spec.endpoints[1]: "https://127.0.0.1:8002": only http:// endpoints are supported (got https:)',
      "src/config/testdata/broken/pools.yaml:12:7 spec.endpoints[2]: endpoint URLs must not contain credentials",
      'src/config/testdata/broken/pools.yaml:19:11 spec.engine: must be one of "vllm", "sglang", got "tgi"',
      'src/config/testdata/broken/pools.yaml:23:17 spec.metrics.intervalMs: must be an integer, got a string ("250")',
      'src/config/testdata/broken/pools.yaml:26:7 kind: unknown kind "InferenceRouter"; expected one of InferencePool, InferenceRoute, GatewayConfig, EndpointPicker, InferenceBudget, SimFleet, RegionDirector (did you mean "InferenceRoute"?)',
      `src/config/testdata/broken/route.yaml:11:20 spec.modelAliases.summary-default.defaultPool: pool "summary-onlin" is not one of this alias's pools (summary-online, summary-long, summary-batch) (did you mean "summary-online"?)`,
      'src/config/testdata/broken/route.yaml:16:11 spec.modelAliases.summary-default.pools[1]: missing required field "maxInputTokens"',
      'src/config/testdata/broken/route.yaml:18:11 spec.modelAliases.summary-default.pools[1].maxInputToken: unknown field "maxInputToken" (did you mean "maxInputTokens"?)',
      'src/config/testdata/broken/route.yaml:20:17 spec.modelAliases.summary-default.pools[2].name: pool "summary-batch" has no InferencePool document',
      "src/config/testdata/broken/route.yaml:21:27 spec.modelAliases.summary-default.pools[2].minInputTokens: minInputTokens (70000) is greater than maxInputTokens (65536)",
      "src/config/testdata/broken/route.yaml:23:28 spec.modelAliases.summary-default.pools[2].maxOutputTokens: must be a positive integer, got -5",
      'src/config/testdata/broken/route.yaml:29:16 spec.rules[0].routeTo: pool "summary-onlne" is not declared under any model alias (did you mean "summary-online"?)',
      'src/config/testdata/broken/route.yaml:30:13 spec.rules[1].name: duplicate rule name "live-summary-short"',
      'src/config/testdata/broken/route.yaml:35:9 spec.rules[1].queuePolicy.pauseWhen: missing required field "ttftP95MsGt"',
    ]);
  });

  it("reports YAML syntax errors with their position and validates the other files", () => {
    const r = loadConfigTexts({
      "bad.yaml": "kind: InferencePool\nspec:\n  engine: vllm\n   model: x\n",
      "route.yaml": "kind: InferenceRoute\n",
    });
    const out = lines(r);
    assert.ok(
      out.some((l) => /^bad\.yaml:\d+:\d+: YAML syntax: /.test(l)),
      out.join("\n"),
    );
    assert.ok(out.includes('route.yaml:1:1: missing required field "apiVersion"'), out.join("\n"));
  });

  it("reports a missing path and an empty folder", async () => {
    assert.match(
      lines(await loadConfig(`${root}no/such/dir`))[0]!,
      /no\/such\/dir: cannot read: no such file or directory$/,
    );
    assert.match(
      lines(await loadConfig(`${root}src/config`))[0]!,
      /folder has no \*\.yaml or \*\.yml files$/,
    );
  });

  it("requires the route config version annotation", async () => {
    const out = lines(await loadConfig(`${root}src/config/testdata/no-version.yaml`));
    assert.deepEqual(out, [
      'src/config/testdata/no-version.yaml:12:1 metadata: missing annotation "ai.example.com/route-config-version" (the config version that logs show and rollbacks name, e.g. "support-summary-2026-06-15-r3")',
    ]);
  });
});

describe("document set rules", () => {
  const pool = (name: string) =>
    `apiVersion: tokengate.dev/v1alpha1\nkind: InferencePool\nmetadata: { name: ${name} }\nspec: { engine: vllm, model: m, endpoints: ["http://127.0.0.1:9000"] }\n`;
  const route = `apiVersion: tokengate.dev/v1alpha1
kind: InferenceRoute
metadata:
  name: r
  annotations: { ai.example.com/route-config-version: "v1" }
spec:
  modelAliases:
    m: { defaultPool: a, pools: [{ name: a, maxInputTokens: 100, maxOutputTokens: 10 }] }
`;

  it("accepts both API groups and validates InferenceBudget documents", () => {
    const budget =
      "apiVersion: ai.example.com/v1alpha1\nkind: InferenceBudget\nmetadata: { name: b }\nspec: { timeZone: Asia/Shanghai, tenants: [{ name: t, concurrentRequests: 2 }] }\n";
    const r = loadConfigTexts({ "all.yaml": `${pool("a")}---\n${route}---\n${budget}` });
    assert.ok(r.ok, r.ok ? "" : JSON.stringify(r.errors));
    assert.equal(r.config.budgets.timeZone, "Asia/Shanghai");
    assert.equal(r.config.budgets.tenants.get("t")?.concurrentRequests, 2);
    const bad = loadConfigTexts({
      "all.yaml": `${pool("a")}---\n${route}---\n${budget.replace("concurrentRequests: 2", "concurentRequests: 2")}`,
    });
    assert.ok(!bad.ok);
    assert.match(
      bad.errors[0]!.message,
      /unknown field "concurentRequests".*did you mean "concurrentRequests"/,
    );
    assert.equal(bad.errors[0]!.path, "spec.tenants[0].concurentRequests");
    const wide = loadConfigTexts({
      "all.yaml": `${pool("a")}---\n${route}---\n${budget.replace("concurrentRequests: 2", "maxSingleInputTokens: 5000")}`,
    });
    assert.ok(wide.ok);
    assert.match(
      wide.warnings.map((w) => `${w.path}: ${w.message}`).join("\n"),
      /spec.tenants\[0\].maxSingleInputTokens: tenant "t" may send 5000 input tokens, but no pool takes more than 100/,
    );
    assert.deepEqual(r.config.gateway.listen, { host: "0.0.0.0", port: 8080 });
  });

  it("rejects a second InferenceRoute, duplicate pool names, and a missing route", () => {
    const out = lines(
      loadConfigTexts({ "a.yaml": `${pool("a")}---\n${pool("a")}---\n${route}---\n${route}` }),
    );
    assert.ok(
      out.some((l) =>
        l.startsWith('a.yaml:8:19 metadata.name: InferencePool "a" is already defined at a.yaml:3'),
      ),
      out.join("\n"),
    );
    assert.ok(
      out.some((l) => l.includes("only one InferenceRoute is allowed; the first is at a.yaml:11")),
      out.join("\n"),
    );
    assert.deepEqual(lines(loadConfigTexts({ "p.yaml": pool("a") })), [
      "p.yaml: no InferenceRoute document found",
    ]);
  });

  it("warns about an InferencePool no alias uses", () => {
    const r = loadConfigTexts({ "a.yaml": `${pool("a")}---\n${pool("spare")}---\n${route}` });
    assert.ok(r.ok);
    assert.deepEqual(r.warnings.map(formatConfigError), [
      'a.yaml:8:19 metadata.name: InferencePool "spare" is not used by any model alias',
    ]);
  });

  it("rejects unknown top-level and metadata fields", () => {
    const out = lines(
      loadConfigTexts({
        "a.yaml": `${pool("a").replace("metadata: {", "status: {}\nmetadata: { uid: x,")}---\n${route}`,
      }),
    );
    assert.deepEqual(out, [
      'a.yaml:3:1 status: unknown field "status"',
      'a.yaml:4:13 metadata.uid: unknown field "uid"',
    ]);
  });
});
