import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { formatConfigError } from "./errors.js";
import { DEFAULT_GATEWAY_SETTINGS, parseAddress, trustedAddressList } from "./gateway-settings.js";
import { type LoadOptions, type LoadResult, loadConfigTexts } from "./loader.js";

const BASE = `apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: p }
spec: { engine: vllm, model: m, endpoints: ["http://127.0.0.1:9000"] }
---
apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata: { name: r, annotations: { ai.example.com/route-config-version: "r1" } }
spec:
  modelAliases:
    chat: { defaultPool: p, pools: [{ name: p, maxInputTokens: 100, maxOutputTokens: 10 }] }
`;

function load(spec: string, options: LoadOptions = {}): LoadResult {
  const gateway = `apiVersion: tokengate.dev/v1alpha1\nkind: GatewayConfig\nmetadata:\n  name: g\nspec:\n${spec}`;
  return loadConfigTexts({ "base.yaml": BASE, "gateway.yaml": gateway }, options);
}

function errors(r: LoadResult): string[] {
  return r.ok ? [] : r.errors.map((e) => formatConfigError(e).replace(/^gateway\.yaml:\d+:\d+ /, ""));
}

describe("GatewayConfig", () => {
  it("defaults everything when the document is absent", () => {
    const r = loadConfigTexts({ "base.yaml": BASE }, { env: {} });
    assert.ok(r.ok);
    assert.deepEqual(r.config.gateway, DEFAULT_GATEWAY_SETTINGS);
    assert.deepEqual(r.config.gateway.admin, {
      host: "127.0.0.1",
      port: 9090,
      separate: true,
      token: null,
      tokenEnv: "TOKENGATE_ADMIN_TOKEN",
    });
  });

  it("keeps only SHA-256 hashes of API keys and maps them to tenants", () => {
    const hash = createHash("sha256").update("sk-second-key-0002").digest("hex");
    const r = load(`  auth:
    apiKeys:
      - { key: sk-first-key-0001, tenant: support-basic }
      - { keySha256: ${hash.toUpperCase()}, tenant: quality-job }
`);
    assert.ok(r.ok, errors(r).join("\n"));
    assert.deepEqual(r.config.gateway.auth.apiKeys, [
      { keySha256: createHash("sha256").update("sk-first-key-0001").digest("hex"), tenant: "support-basic" },
      { keySha256: hash, tenant: "quality-job" },
    ]);
    assert.equal(JSON.stringify(r.config.gateway).includes("sk-first-key-0001"), false);
  });

  it("rejects ambiguous or weak keys, duplicate keys and bad tenant names", () => {
    const r = load(`  auth:
    apiKeys:
      - { key: sk-first-key-0001, keySha256: ${"a".repeat(64)}, tenant: t }
      - { key: short, tenant: t }
      - { key: sk-first-key-0001, tenant: "bad tenant" }
      - { key: sk-first-key-0001, tenant: t2 }
      - { key: sk-first-key-0001, tenant: t3 }
`);
    assert.deepEqual(errors(r), [
      'spec.auth.apiKeys[0]: set exactly one of "key" and "keySha256"',
      "spec.auth.apiKeys[1].key: must be at least 8 characters",
      `spec.auth.apiKeys[2].tenant: "bad tenant" is not valid: letters, digits, '.', '_' and '-', at most 64 characters`,
      "spec.auth.apiKeys[4]: the same key is listed twice",
    ]);
  });

  it("reads trusted upstreams: secret from the environment, addresses as IPs or CIDR blocks", () => {
    const spec = `  auth:
    trustedUpstreams:
      sharedSecretEnv: ENTRY_SECRET
      addresses: ["10.0.0.0/8", "127.0.0.1", "fd00::/8"]
`;
    const r = load(spec, { env: { ENTRY_SECRET: "0123456789abcdef" } });
    assert.ok(r.ok, errors(r).join("\n"));
    const t = r.config.gateway.auth.trustedUpstreams!;
    assert.equal(t.sharedSecret, "0123456789abcdef");
    assert.equal(t.secretHeader, "X-AI-Upstream-Secret");
    assert.deepEqual(t.addresses, [
      { address: "10.0.0.0", prefix: 8, family: "ipv4" },
      { address: "127.0.0.1", prefix: 32, family: "ipv4" },
      { address: "fd00::", prefix: 8, family: "ipv6" },
    ]);
    const list = trustedAddressList(t.addresses);
    assert.equal(list.check("10.1.2.3", "ipv4"), true);
    assert.equal(list.check("11.1.2.3", "ipv4"), false);
    assert.equal(list.check("fd12::1", "ipv6"), true);
    assert.equal(
      list.check("::ffff:127.0.0.1", "ipv6"),
      true,
      "IPv4-mapped addresses of a dual-stack socket",
    );
    assert.deepEqual(errors(load(spec, { env: {} })), [
      "spec.auth.trustedUpstreams.sharedSecretEnv: environment variable ENTRY_SECRET is not set (the gateway will not start without it)",
    ]);
  });

  it("refuses a trusted-upstream block that would trust anyone, and bad addresses", () => {
    const r = load(`  auth:
    trustedUpstreams: { secretHeader: X-Secret }
---
apiVersion: tokengate.dev/v1alpha1
kind: GatewayConfig
metadata: { name: g2 }
spec:
  auth:
    trustedUpstreams: { sharedSecret: short, addresses: ["10.0.0.0/33", "host.local", 7] }
`);
    assert.deepEqual(errors(r), [
      `spec.auth.trustedUpstreams: set "sharedSecret", "sharedSecretEnv" or "addresses"; otherwise anyone could claim a tenant`,
      "gateway.yaml:9:1: only one GatewayConfig is allowed",
      "spec.auth.trustedUpstreams.sharedSecret: must be at least 16 characters",
      'spec.auth.trustedUpstreams.addresses[0]: "10.0.0.0/33" is not an IP address or CIDR block',
      'spec.auth.trustedUpstreams.addresses[1]: "host.local" is not an IP address or CIDR block',
      "spec.auth.trustedUpstreams.addresses[2]: 7 is not an IP address or CIDR block",
    ]);
  });

  it("puts the admin listener on its own port only when asked, and checks timeouts against the total", () => {
    const r = load(
      `  listen: { port: 0 }
  admin: { host: 127.0.0.1, port: 9090 }
  limits: { maxBodyBytes: 1048576 }
  timeouts: { firstByteMs: 120000, totalMs: 900000 }
  retry: { maxAttempts: 1, budgetPercent: 0 }
  streaming: { heartbeatMs: 15000 }
  shutdown: { drainMs: 0 }
  logging: { prompts: true, destination: /var/log/tokengate.log }
`,
      { env: {} },
    );
    assert.ok(r.ok, errors(r).join("\n"));
    const g = r.config.gateway;
    assert.deepEqual(g.listen, { host: "0.0.0.0", port: 0 });
    assert.deepEqual(g.admin, {
      host: "127.0.0.1",
      port: 9090,
      separate: true,
      token: null,
      tokenEnv: "TOKENGATE_ADMIN_TOKEN",
    });
    assert.deepEqual(g.timeouts, { connectMs: 2000, firstByteMs: 120000, idleMs: 30000, totalMs: 900000 });
    assert.deepEqual(g.retry, { maxAttempts: 1, budgetPercent: 0, minRetryConcurrency: 3 });
    assert.deepEqual(g.limits, { maxBodyBytes: 1048576, bodyReadMs: 60000 });
    assert.deepEqual(g.streaming, { heartbeatMs: 15000 });
    assert.deepEqual(g.shutdown, { drainMs: 0 });
    assert.deepEqual(g.logging, { prompts: true, destination: "/var/log/tokengate.log" });
    const ephemeral = load("  listen: { port: 0 }\n");
    assert.ok(ephemeral.ok);
    assert.equal(
      ephemeral.config.gateway.admin.port,
      0,
      "a test gateway's admin listener: its own free port",
    );
    assert.equal(ephemeral.config.gateway.admin.separate, true);
    const shared = load("  listen: { host: 127.0.0.1, port: 8080 }\n  admin: { port: 8080 }\n");
    assert.ok(shared.ok);
    assert.equal(shared.config.gateway.admin.separate, false, "the same host and port: one listener");
    assert.deepEqual(
      errors(
        load(`  listen: { port: 8080 }
  admin: { host: 127.0.0.1, port: 8080 }
  limits: { bodyReadMs: 50 }
  timeouts: { idleMs: 700000 }
  retry: { maxAttempts: 0 }
  streaming: { heartbeatMs: 50 }
  logging: { prompt: true }
`),
      ),
      [
        "spec.admin.port: equals listen.port on another host; give admin the same host to share the listener",
        "spec.limits.bodyReadMs: must be >= 100, got 50",
        "spec.timeouts.idleMs: is 700000, longer than totalMs (600000)",
        "spec.retry.maxAttempts: must be a positive integer, got 0",
        "spec.streaming.heartbeatMs: must be 0 (off) or at least 100, got 50",
        'spec.logging.prompt: unknown field "prompt" (did you mean "prompts"?)',
      ],
    );
  });

  it("takes the admin token from admin.token or the variable admin.tokenEnv names, never shorter than 16", () => {
    const literal = load("  admin: { token: an-admin-token-of-32-characters! }\n", { env: {} });
    assert.ok(literal.ok);
    assert.equal(literal.config.gateway.admin.token?.reveal(), "an-admin-token-of-32-characters!");
    assert.equal(JSON.stringify(literal.config.gateway.admin.token), '"[redacted]"');
    const fromEnv = load("  admin: { tokenEnv: MY_ADMIN_TOKEN }\n", {
      env: { MY_ADMIN_TOKEN: "sixteen-chars-or-more" },
    });
    assert.ok(fromEnv.ok);
    assert.equal(fromEnv.config.gateway.admin.token?.reveal(), "sixteen-chars-or-more");
    const noDoc = loadConfigTexts(
      { "base.yaml": BASE },
      { env: { TOKENGATE_ADMIN_TOKEN: "sixteen-chars-or-more" } },
    );
    assert.ok(noDoc.ok);
    assert.equal(noDoc.config.gateway.admin.token?.reveal(), "sixteen-chars-or-more");
    assert.deepEqual(errors(load("  admin: { token: short }\n", { env: {} })), [
      "spec.admin.token: must be at least 16 characters",
    ]);
    assert.deepEqual(errors(load("  admin: { port: 9091 }\n", { env: { TOKENGATE_ADMIN_TOKEN: "short" } })), [
      "spec.admin.tokenEnv: environment variable TOKENGATE_ADMIN_TOKEN must hold at least 16 characters",
    ]);
  });

  it("parses addresses strictly", () => {
    assert.deepEqual(parseAddress("192.168.0.0/16"), { address: "192.168.0.0", prefix: 16, family: "ipv4" });
    assert.equal(parseAddress("192.168.0.0/16/1"), undefined);
    assert.equal(parseAddress("192.168.0.0/"), undefined);
    assert.equal(parseAddress("::1/129"), undefined);
  });

  it("reports an address that is a list containing itself (a YAML alias) instead of throwing", () => {
    const r = load(`  auth:
    trustedUpstreams: { addresses: ["127.0.0.1", &loop [*loop], { a: 1 }, .nan] }
`);
    assert.deepEqual(errors(r), [
      "spec.auth.trustedUpstreams.addresses[1]: a list is not an IP address or CIDR block",
      "spec.auth.trustedUpstreams.addresses[2]: a map is not an IP address or CIDR block",
      "spec.auth.trustedUpstreams.addresses[3]: NaN is not an IP address or CIDR block",
    ]);
  });
});
