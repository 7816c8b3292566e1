import assert from "node:assert/strict";
import { test } from "node:test";
import { stringify } from "yaml";
import { loadConfigTexts } from "../../config/loader.js";
import { routeRequest } from "../../route/route-request.js";
import { makeEngineConfig } from "../../sim/engine-config.js";
import { parseFleet } from "../../sim/fleet.js";
import { fleetDocument } from "../harness/runner.js";
import { zipf } from "../workload/distributions.js";
import { replicaNames } from "./fleet-group.js";
import { ADAPTERS, ALIAS, LORA_LOAD_MS, MAX_LORAS, multiLora as s, ZIPF_S } from "./multi-lora.js";

const topo = s.topologies[0]!;
const full = s.generate({ seed: 11, quick: false });

test("the same seed gives the same adapters, lengths and arrivals; another seed another trace", () => {
  assert.deepEqual(s.generate({ seed: 11, quick: false }), full);
  const other = s.generate({ seed: 12, quick: false });
  assert.notDeepEqual(
    other.slice(0, 200).map((r) => r.model),
    full.slice(0, 200).map((r) => r.model),
  );
});

test("every request names one of the 8 adapters, with Zipf popularity (adapter-0 the most asked for)", () => {
  assert.ok(full.every((r) => r.model !== undefined && ADAPTERS.includes(r.model)));
  const p = zipf(ADAPTERS.length, ZIPF_S).probabilities;
  const n = full.length;
  ADAPTERS.forEach((a, k) => {
    const count = full.filter((r) => r.model === a).length;
    const expected = p[k]! * n;
    // Four standard deviations of a binomial count: a wrong exponent or order is far outside.
    const sd = Math.sqrt(expected * (1 - p[k]!));
    assert.ok(
      Math.abs(count - expected) < 4 * sd,
      `${a}: ${count} requests for an expected ${expected.toFixed(0)}`,
    );
  });
  const share0 = full.filter((r) => r.model === "adapter-0").length / n;
  assert.ok(share0 > 0.34 && share0 < 0.4, `adapter-0 share ${share0}`);
});

test("prompts are short to medium, outputs 100–200 tokens, and no request shares a prefix", () => {
  const input = full.map((r) => r.input_tokens!).sort((a, b) => a - b);
  assert.ok(input[0]! >= 200 && input.at(-1)! <= 2048, `inputs ${input[0]}..${input.at(-1)}`);
  const median = input[Math.floor(input.length / 2)]!;
  assert.ok(Math.abs(median - 700) < 50, `median ${median}`);
  assert.ok(full.every((r) => r.max_tokens >= 100 && r.max_tokens <= 200));
  assert.ok(full.every((r) => r.prefix_group === undefined && r.prefix_tokens === undefined));
  assert.ok(full.every((r) => r.request_class === "interactive" && r.stream));
});

test("the fleet is 4 replicas with --max-loras 2 and the 8 adapters registered, and the sim accepts it", () => {
  const parsed = parseFleet(JSON.parse(JSON.stringify(fleetDocument(topo.fleet))));
  assert.equal(parsed.groups.length, 1);
  const g = parsed.groups[0]!;
  assert.equal(g.replicas, 4);
  const cfg = makeEngineConfig(g.profile, g.model, g.engine);
  assert.equal(cfg.maxLoras, MAX_LORAS);
  assert.deepEqual(cfg.loraModules, ADAPTERS);
  assert.equal(cfg.loraLoadMs, LORA_LOAD_MS);
  assert.equal(cfg.enableLora, true);
  assert.deepEqual(topo.routers, ["tokengate", "least-request"]);
  // As the runner writes it for `tokengate sim --fleet`.
  assert.match(stringify(fleetDocument(topo.fleet)), /maxLoras: 2/);
});

test("tokengate's config loads, declares the adapters on the pool, and routes each adapter to it", () => {
  const group = topo.fleet.groups[0]!;
  const endpoints = { [group.name]: replicaNames(group).map((_, i) => `http://127.0.0.1:${9100 + i}`) };
  const res = loadConfigTexts(topo.gatewayConfig(endpoints));
  assert.ok(res.ok, res.ok ? "" : res.errors.map((e) => `${e.path}: ${e.message}`).join("\n"));
  assert.deepEqual(res.warnings, []);
  const pool = res.config.pools.get(group.name)!;
  assert.deepEqual(
    pool.loraAdapters.map((a) => a.name),
    ADAPTERS,
  );
  assert.deepEqual([...res.config.route.aliases.keys()], [ALIAS]);
  for (const adapter of ADAPTERS) {
    const d = routeRequest(res.config, {
      modelAlias: adapter,
      task: "lora_completion",
      requestClass: "interactive",
      inputTokens: 2048,
      maxTokens: 200,
    });
    assert.ok(d.ok, `${adapter}: ${"message" in d ? d.message : ""}`);
    assert.equal(d.pool, group.name);
    assert.equal(d.upstreamModel, adapter);
    assert.equal(d.target.adapter, adapter);
  }
});
