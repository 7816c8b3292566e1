import assert from "node:assert/strict";
import { test } from "node:test";
import { BURST, BURST_TENANT, QUIET, QUIET_TENANTS, noisyNeighbor as s } from "./noisy-neighbor.js";
import { phaseAt } from "./shipped.js";

const full = s.generate({ seed: 5, quick: false });
const phases = s.phases({ seed: 5, quick: false });
const [before, burst, after] = phases;
const span = (p: typeof burst) => p!.endS - p!.startS;
const inPhase = (p: typeof burst) => full.filter((r) => phaseAt(phases, r.t_ms) === p);

test("the quiet tenants, the burst in the middle, and the quiet tenants again: 120 s in all", () => {
  assert.deepEqual(
    phases.map((p) => [p.name, p.startS, p.endS]),
    [
      ["before", 0, 50],
      ["burst", 50, 70],
      ["after", 70, 120],
    ],
  );
  assert.deepEqual(s.burst, { tenant: BURST_TENANT, phase: "burst" });
  assert.equal(s.prefillTargets, true);
  const quick = s.phases({ seed: 5, quick: true });
  assert.ok(quick.at(-1)!.endS <= 30 && span(quick[1]) >= 10, "quick: under 30 s, a burst of 10 s or more");
});

test("the burst tenant sends only during the burst, long prompts at its rate", () => {
  const noisy = full.filter((r) => r.tenant === BURST_TENANT);
  assert.ok(noisy.every((r) => phaseAt(phases, r.t_ms) === burst));
  assert.ok(Math.abs(noisy.length / span(burst) - BURST.rate) < 4, `${noisy.length} burst requests`);
  assert.ok(noisy.every((r) => r.input_tokens! >= 5000 && r.input_tokens! <= 7000));
  assert.ok(noisy.every((r) => r.max_tokens >= BURST.output.min && r.max_tokens <= BURST.output.max));
});

test("each steady tenant sends throughout, mixed lengths around a median of ~600 tokens", () => {
  for (const tenant of QUIET_TENANTS) {
    const mine = full.filter((r) => r.tenant === tenant);
    for (const p of [before, burst, after]) {
      const n = inPhase(p).filter((r) => r.tenant === tenant).length;
      const expected = QUIET.ratePerTenant * span(p);
      assert.ok(Math.abs(n - expected) < 4 * Math.sqrt(expected), `${tenant} ${p!.name}: ${n}`);
    }
    const input = mine.map((r) => r.input_tokens!).sort((a, b) => a - b);
    const median = input[Math.floor(input.length / 2)]!;
    assert.ok(Math.abs(median - 600) < 100, `${tenant}: median ${median}`);
    assert.ok(input.at(-1)! <= 16_000 && input.at(-1)! > 4000, `${tenant}: longest ${input.at(-1)}`);
  }
});

test("every request is interactive and streamed, with no shared prefix", () => {
  assert.ok(full.every((r) => r.request_class === "interactive" && r.stream));
  assert.ok(full.every((r) => r.prefix_group === undefined && r.prefix_tokens === undefined));
  assert.deepEqual([...new Set(full.map((r) => r.tenant))].sort(), [BURST_TENANT, ...QUIET_TENANTS].sort());
});

test("tokengate, least-request and round-robin on one pool of 4 × a100-llama8b", () => {
  assert.equal(s.topologies.length, 1);
  const t = s.topologies[0]!;
  assert.deepEqual(t.routers, ["tokengate", "least-request", "round-robin"]);
  assert.deepEqual(
    t.fleet.groups.map((g) => [g.replicas, g.profile]),
    [[4, "a100-llama8b"]],
  );
  const config = t.gatewayConfig({ engines: ["http://127.0.0.1:1", "http://127.0.0.1:2"] });
  assert.match(config["gateway.yaml"]!, /trustedUpstreams/, "the harness may name tenants");
});
