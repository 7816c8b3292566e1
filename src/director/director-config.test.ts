import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DIRECTOR_DEFAULTS, parseDirectorConfig } from "./director-config.js";

const HEAD = `apiVersion: tokengate.dev/v1alpha1
kind: RegionDirector
metadata:
  name: global
spec:
`;

const REGIONS = `  regions:
    - { name: eu-west, gatewayUrl: "http://gw.eu-west.example:8080" }
    - { name: us-east, gatewayUrl: "https://gw.us-east.example/", cost: 1.5 }
`;

function parse(spec: string, env: Record<string, string | undefined> = {}) {
  return parseDirectorConfig(HEAD + spec, "director.yaml", env);
}

function errors(spec: string, env: Record<string, string | undefined> = {}): string[] {
  const r = parse(spec, env);
  assert.equal(r.ok, false, "expected errors");
  return r.ok ? [] : r.errors;
}

describe("parseDirectorConfig", () => {
  it("defaults everything but the regions", () => {
    const r = parse(REGIONS);
    assert.ok(r.ok, r.ok ? "" : r.errors.join("\n"));
    const { name, regions, latencyMs, residency, ...rest } = r.config;
    assert.equal(name, "global");
    assert.deepEqual(rest, DIRECTOR_DEFAULTS);
    assert.deepEqual([latencyMs, residency], [{}, {}]);
    assert.deepEqual(regions, [
      {
        name: "eu-west",
        gatewayUrl: "http://gw.eu-west.example:8080",
        summaryUrl: "http://gw.eu-west.example:8080/admin/region/summary",
        summaryToken: null,
        cost: 1,
      },
      {
        name: "us-east",
        gatewayUrl: "https://gw.us-east.example",
        summaryUrl: "https://gw.us-east.example/admin/region/summary",
        summaryToken: null,
        cost: 1.5,
      },
    ]);
    assert.equal(DIRECTOR_DEFAULTS.hysteresis.dwellMs, 30_000);
    assert.deepEqual(DIRECTOR_DEFAULTS.listen, { host: "0.0.0.0", port: 8090 });
    assert.ok(Object.isFrozen(r.config.regions[0]));
  });

  it("reads every field, and the summary token from its variable", () => {
    const r = parse(
      `  listen: { host: 127.0.0.1, port: 9000 }
  mode: redirect
  regions:
    - name: eu-west
      gatewayUrl: http://gw-eu:8080
      summaryUrl: http://gw-eu:9090/admin/region/summary
      summaryTokenEnv: EU_TOKEN
      cost: 0.8
    - { name: us-east, gatewayUrl: "http://gw-us:8080" }
  latencyMs:
    eu-west: { eu-west: 4, us-east: 85.5 }
    ap-south: { us-east: 200 }
  defaultLatencyMs: 150
  residency:
    acme-eu: [eu-west]
  weights: { latency: 1, headroom: 0, errors: 0, cost: 0 }
  hysteresis: { dwellMs: 60000, switchMargin: 0.2 }
  breaker: { errorRateToOpen: 0.5, failuresToOpen: 5, openMs: 20000, halfOpenProbes: 1 }
  spillover: { minHeadroom: 0.2, maxShare: 0.3 }
  affinity: { header: X-Conversation, ttlMs: 60000 }
  polling: { intervalMs: 500, staleAfterMs: 2000, timeoutMs: 400 }
  answerTtlS: 5
`,
      { EU_TOKEN: "secret-token-value" },
    );
    assert.ok(r.ok, r.ok ? "" : r.errors.join("\n"));
    const c = r.config;
    assert.deepEqual(c.listen, { host: "127.0.0.1", port: 9000 });
    assert.equal(c.mode, "redirect");
    assert.deepEqual(c.regions[0], {
      name: "eu-west",
      gatewayUrl: "http://gw-eu:8080",
      summaryUrl: "http://gw-eu:9090/admin/region/summary",
      summaryToken: "secret-token-value",
      cost: 0.8,
    });
    assert.deepEqual(c.latencyMs, {
      "eu-west": { "eu-west": 4, "us-east": 85.5 },
      "ap-south": { "us-east": 200 },
    });
    assert.equal(c.defaultLatencyMs, 150);
    assert.deepEqual(c.residency, { "acme-eu": ["eu-west"] });
    assert.deepEqual(c.weights, { latency: 1, headroom: 0, errors: 0, cost: 0 });
    assert.deepEqual(c.hysteresis, { dwellMs: 60_000, switchMargin: 0.2 });
    assert.deepEqual(c.breaker, {
      errorRateToOpen: 0.5,
      failuresToOpen: 5,
      openMs: 20_000,
      halfOpenProbes: 1,
    });
    assert.deepEqual(c.spillover, { minHeadroom: 0.2, maxShare: 0.3 });
    assert.deepEqual(c.affinity, { header: "x-conversation", ttlMs: 60_000 });
    assert.deepEqual(c.polling, { intervalMs: 500, staleAfterMs: 2000, timeoutMs: 400 });
    assert.equal(c.answerTtlS, 5);
    const byTenant = parse(`${REGIONS}  affinity: { header: false }\n`);
    assert.equal(byTenant.ok && byTenant.config.affinity.header, null);
  });

  it("reports unknown fields with a suggestion, at the key", () => {
    assert.deepEqual(errors(`${REGIONS}  hysteresis: { dwelMs: 1000 }\n  spilover: {}\n`), [
      'director.yaml:9:17 spec.hysteresis.dwelMs: unknown field "dwelMs" (did you mean "dwellMs"?)',
      'director.yaml:10:3 spec.spilover: unknown field "spilover" (did you mean "spillover"?)',
    ]);
  });

  it("reports residency and latency entries naming unknown regions", () => {
    assert.deepEqual(
      errors(
        `${REGIONS}  residency:\n    acme: [eu-west, eu-wset]\n  latencyMs:\n    eu-west: { us-esat: 80 }\n`,
      ),
      [
        'director.yaml:10:21 spec.residency.acme[1]: unknown region "eu-wset" (did you mean "eu-west"?)',
        'director.yaml:12:16 spec.latencyMs.eu-west.us-esat: unknown region "us-esat" (did you mean "us-east"?)',
      ],
    );
  });

  it("reports duplicate region names, negative costs and non-http URLs", () => {
    assert.deepEqual(
      errors(`  regions:
    - { name: eu-west, gatewayUrl: "http://a:1" }
    - { name: eu-west, gatewayUrl: "ftp://b", cost: -1 }
    - { name: us-east, gatewayUrl: "nonsense", summaryUrl: "file:///etc/passwd" }
`),
      [
        'director.yaml:8:36 spec.regions[1].gatewayUrl: "ftp://b" must be an http:// or https:// URL',
        "director.yaml:8:53 spec.regions[1].cost: must be a number ≥ 0, got a number (-1)",
        'director.yaml:8:15 spec.regions[1].name: duplicate region "eu-west" (first at regions[0])',
        'director.yaml:9:36 spec.regions[2].gatewayUrl: "nonsense" is not a URL',
        'director.yaml:9:60 spec.regions[2].summaryUrl: "file:///etc/passwd" must be an http:// or https:// URL',
      ].sort(byPosition),
    );
  });

  it("reports negative weights, and all weights zero", () => {
    assert.deepEqual(errors(`${REGIONS}  weights: { latency: -0.5 }\n`), [
      "director.yaml:9:23 spec.weights.latency: must be a number ≥ 0, got a number (-0.5)",
    ]);
    assert.deepEqual(errors(`${REGIONS}  weights: { latency: 0, headroom: 0, errors: 0, cost: 0 }\n`), [
      "director.yaml:9:3 spec.weights: all weights are 0: nothing would tell regions apart",
    ]);
  });

  it("reports staleAfterMs not above intervalMs", () => {
    assert.deepEqual(errors(`${REGIONS}  polling:\n    intervalMs: 2000\n    staleAfterMs: 2000\n`), [
      "director.yaml:11:19 spec.polling.staleAfterMs: staleAfterMs (2000) must be longer than intervalMs (2000), or every summary goes stale before the next poll",
    ]);
    assert.deepEqual(errors(`${REGIONS}  polling: { intervalMs: 6000 }\n`), [
      "director.yaml:9:3 spec.polling: staleAfterMs (5000) must be longer than intervalMs (6000), or every summary goes stale before the next poll",
    ]);
  });

  it("reports a summary token variable that is not set", () => {
    const spec = `  regions:\n    - { name: eu-west, gatewayUrl: "http://a:1", summaryTokenEnv: EU_TOKEN }\n`;
    assert.deepEqual(errors(spec), [
      "director.yaml:7:67 spec.regions[0].summaryTokenEnv: environment variable EU_TOKEN is not set",
    ]);
    assert.ok(parse(spec, { EU_TOKEN: "x" }).ok);
  });

  it("reports the frame: kind, apiVersion, missing regions, out-of-range values, YAML syntax", () => {
    const r = parseDirectorConfig(
      "apiVersion: tokengate.dev/v1\nkind: RegionDirectr\nmetadata: { name: g }\nspec:\n  mode: push\n  hysteresis: { switchMargin: 2 }\n",
    );
    assert.deepEqual(r.ok ? [] : r.errors, [
      'director.yaml:1:13 apiVersion: must be one of "tokengate.dev/v1alpha1", got "tokengate.dev/v1"',
      'director.yaml:2:7 kind: must be one of "RegionDirector", got "RegionDirectr" (did you mean "RegionDirector"?)',
      'director.yaml:4:1 spec: missing required field "regions"',
      'director.yaml:5:9 spec.mode: must be one of "forward", "redirect", got "push"',
      "director.yaml:6:31 spec.hysteresis.switchMargin: must be a number ≥ 0 and ≤ 1, got a number (2)",
    ]);
    const bad = parseDirectorConfig("a: [1,", "d.yaml");
    assert.equal(bad.ok, false);
    assert.match(bad.ok ? "" : bad.errors[0]!, /^d\.yaml:\d+:\d+: YAML syntax/);
    const two = parseDirectorConfig(`${HEAD}${REGIONS}---\n${HEAD}${REGIONS}`, "d.yaml");
    assert.deepEqual(two.ok ? [] : two.errors, ["d.yaml: expected one RegionDirector document, found 2"]);
  });
});

function byPosition(a: string, b: string): number {
  const pos = (s: string) => s.split(" ")[0]!.split(":").slice(1).map(Number) as [number, number];
  const [la, ca] = pos(a);
  const [lb, cb] = pos(b);
  return la - lb || ca - cb;
}
