import assert from "node:assert/strict";
import { test } from "node:test";
import { loadConfigTexts } from "../../config/index.js";
import { getProfile } from "../../sim/profiles.js";
import { formatTrace, parseTraceLines } from "../trace-formats/trace.js";
import { replicaNames } from "./fleet-group.js";
import { getScenario, SCENARIOS } from "./index.js";

const all = Object.values(SCENARIOS);
const plain = (x: unknown) => JSON.parse(JSON.stringify(x));

test("the seven shipped scenarios are found by name, and an unknown name lists them", () => {
  assert.deepEqual(Object.keys(SCENARIOS), [
    "support-incident",
    "shared-prefix",
    "multi-turn",
    "mixed-lengths",
    "live-surge",
    "multi-lora",
    "noisy-neighbor",
  ]);
  assert.equal(getScenario("multi-turn").name, "multi-turn");
  assert.throws(() => getScenario("nope"), /known: support-incident, shared-prefix/);
});

for (const s of all) {
  test(`${s.name}: the same seed gives the same trace, another seed another`, () => {
    const a = s.generate({ seed: 1, quick: true });
    assert.deepEqual(s.generate({ seed: 1, quick: true }), a);
    assert.notDeepEqual(s.generate({ seed: 2, quick: true }), a);
  });

  test(`${s.name}: arrivals are sorted, inside the run, with unique ids`, () => {
    for (const quick of [true, false]) {
      const trace = s.generate({ seed: 7, quick });
      const endMs = s.phases({ seed: 7, quick }).at(-1)!.endS * 1000;
      assert.ok(trace.length > 0);
      assert.ok(
        trace.every((r, i) => r.t_ms >= 0 && r.t_ms <= endMs && (i === 0 || r.t_ms >= trace[i - 1]!.t_ms)),
      );
      assert.equal(new Set(trace.map((r) => r.id)).size, trace.length);
    }
  });

  test(`${s.name}: quick is shorter and under a minute of arrivals; --duration overrides`, () => {
    const quickEnd = s.phases({ seed: 1, quick: true }).at(-1)!.endS;
    const fullEnd = s.phases({ seed: 1, quick: false }).at(-1)!.endS;
    assert.ok(quickEnd < 60 && quickEnd < fullEnd / 4, `quick ${quickEnd} s, full ${fullEnd} s`);
    assert.ok(fullEnd >= 45 && fullEnd <= 240, `full ${fullEnd} s`);
    // In requests a quarter of the time may hold a third: a burst scenario keeps its burst (noisy-neighbor).
    const quickCount = s.generate({ seed: 1, quick: true }).length;
    const fullCount = s.generate({ seed: 1, quick: false }).length;
    assert.ok(quickCount < fullCount / 3, `quick ${quickCount} requests, full ${fullCount}`);
    const phases = s.phases({ seed: 1, quick: false, durationS: 30 });
    assert.equal(phases.at(-1)!.endS, 30);
    assert.ok(s.generate({ seed: 1, quick: false, durationS: 30 }).every((r) => r.t_ms <= 30_000));
  });

  test(`${s.name}: phases tile the run`, () => {
    const phases = s.phases({ seed: 1, quick: false });
    assert.equal(phases[0]!.startS, 0);
    phases.forEach((p, i) => {
      assert.ok(p.endS > p.startS);
      if (i > 0) assert.equal(p.startS, phases[i - 1]!.endS);
    });
  });

  test(`${s.name}: a generated trace round-trips through the JSONL format`, () => {
    const trace = s.generate({ seed: 3, quick: true });
    assert.deepEqual(plain(parseTraceLines(formatTrace(trace))), plain(trace));
  });

  test(`${s.name}: every request fits the context window of the engines it is meant for`, () => {
    const trace = s.generate({ seed: 4, quick: false });
    for (const topo of s.topologies) {
      const widest = Math.max(
        ...topo.fleet.groups.map((g) => g.engine.maxModelLen ?? getProfile(g.profile).maxModelLen),
      );
      for (const r of trace) {
        // Prompt, the chat template's few tokens, and the reply.
        const total = (r.input_tokens ?? 0) + (r.prefix_tokens ?? 0) + 32 + r.max_tokens;
        assert.ok(total <= widest, `${topo.name} ${r.id}: ${total} > ${widest}`);
        // support-incident's split pools send live requests to the 8K online pool.
        if (s.name === "support-incident" && r.request_class === "interactive") assert.ok(total <= 8192);
      }
    }
  });

  for (const topo of s.topologies) {
    test(`${s.name}/${topo.name}: tokengate's config loads without errors or warnings`, () => {
      const endpoints = Object.fromEntries(
        topo.fleet.groups.map((g, gi) => [
          g.name,
          replicaNames(g).map((_, i) => `http://127.0.0.1:${9000 + gi * 10 + i}`),
        ]),
      );
      const res = loadConfigTexts(topo.gatewayConfig(endpoints));
      assert.ok(res.ok, res.ok ? "" : res.errors.map((e) => `${e.path}: ${e.message}`).join("\n"));
      assert.deepEqual(res.warnings, []);
      const gpus = topo.fleet.groups.reduce((n, g) => n + g.replicas * getProfile(g.profile).gpus, 0);
      assert.equal(topo.gpus, gpus);
      assert.equal(topo.gpus, s.topologies[0]!.gpus, "every topology of a scenario has the same GPUs");
      assert.ok(topo.routers.includes("tokengate"));
    });
  }
}
