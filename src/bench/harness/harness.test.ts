// The harness measures what it claims: TTFT at the first content byte, arrivals replayed on time and
// the same for the same seed, and a slowed engine visible in the results and the report.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { makeEngineConfig } from "../../sim/engine-config.js";
import type { FleetSpec } from "../../sim/fleet.js";
import { SimReplica } from "../../sim/replica.js";
import { renderReport } from "../report/markdown.js";
import { inferencePoolDoc, yamlDocuments } from "../scenarios/gateway-yaml.js";
import { getScenario } from "../scenarios/index.js";
import type { Scenario, Topology } from "../scenarios/scenario.js";
import { traceScenario } from "../scenarios/trace-replay.js";
import type { TraceRequest } from "../trace-formats/trace.js";
import { replay } from "../traffic/replay.js";
import { makeAgent, streamCompletion } from "../traffic/stream-client.js";
import { runScenario } from "./runner.js";

describe("benchmark harness", () => {
  it("takes TTFT at the first content byte, not at the headers or the role frame", async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n');
      setTimeout(() => {
        res.write('data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n');
        // The end comes long after the content, so a loaded machine's delays cannot blur the two.
        setTimeout(() => res.end("data: [DONE]\n\n"), 500);
      }, 150);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const r = await streamCompletion(url, { messages: [{ role: "user", content: "x" }] });
      assert.equal(r.error, null);
      assert.ok(r.ttftMs >= 145 && r.ttftMs < 600, `TTFT ${r.ttftMs}`);
      assert.ok(r.e2eMs >= 645, `e2e ${r.e2eMs}`);
      assert.equal(r.contentFrames, 1);
    } finally {
      server.close();
    }
  });

  it("generates the same arrivals for the same seed and replays them on time", async () => {
    const s = getScenario("mixed-lengths");
    const a = s.generate({ seed: 7, quick: true });
    const b = s.generate({ seed: 7, quick: true });
    const c = s.generate({ seed: 8, quick: true });
    assert.deepEqual(
      a.map((r) => r.t_ms),
      b.map((r) => r.t_ms),
    );
    assert.notDeepEqual(
      a.map((r) => r.t_ms),
      c.map((r) => r.t_ms),
    );
    const engine = new SimReplica({
      name: "e",
      port: 0,
      engine: makeEngineConfig("instant", "m", { maxModelLen: 32768 }),
    });
    await engine.start();
    const agent = makeAgent(256);
    try {
      const trace = a.slice(0, 60).map((r) => ({ ...r, max_tokens: 4 }));
      const records = await replay(trace, { url: engine.url, agent, model: "m" });
      assert.equal(records.length, 60);
      const lag = records.map((r) => r.sentAtMs - r.req.t_ms).sort((x, y) => x - y);
      assert.ok(lag[0]! >= -2, `nothing is sent early (earliest ${lag[0]} ms)`);
      // On time, not falling behind: a replay that waited on answers would lag more with every request.
      // The bound leaves room for a busy machine, whose timers alone can be tens of ms late; how close to
      // their time the sends are on a quiet one is a benchmark's question, not a unit test's.
      assert.ok(
        lag[Math.floor(lag.length * 0.9)]! < 250,
        `90% sent within 250 ms of their time: ${lag.slice(-5)}`,
      );
      assert.ok(records.every((r) => r.result.error === null));
    } finally {
      await agent.close();
      await engine.stop();
    }
  });

  it("shows a deliberately slowed engine in the results and the report", async () => {
    const fleet = (beta0Us: number): FleetSpec => ({
      name: "f",
      host: "127.0.0.1",
      seed: 1,
      groups: [
        {
          name: "engines",
          replicas: 1,
          port: 0,
          profile: "instant",
          model: "model",
          dialect: "vllm",
          engine: { beta0Us },
          outputLenDist: "max",
          streamInterval: 1,
          faults: {},
        },
      ],
    });
    const base = traceScenario("test", fleet(0)).topologies[0]!;
    const topo = (name: string, beta0Us: number): Topology => {
      const t = traceScenario("test", fleet(beta0Us)).topologies[0]!;
      return { ...base, ...t, name, routers: ["tokengate"] };
    };
    const trace: TraceRequest[] = Array.from({ length: 12 }, (_, i) => ({
      t_ms: i * 50,
      id: `q${i}`,
      tenant: "t",
      task: null,
      request_class: "interactive",
      input_tokens: 100,
      max_tokens: 6,
      stream: true,
    }));
    const scenario: Scenario = {
      name: "slowed",
      description: "one fast and one slowed engine",
      liveClass: "interactive",
      longClass: null,
      topologies: [topo("fast", 0), topo("slowed", 100_000)],
      generate: () => trace,
    };
    const results = await runScenario(scenario, { seed: 1, quick: true, progress: false });
    const fast = results.routers["tokengate@fast"]!;
    const slow = results.routers["tokengate@slowed"]!;
    assert.equal(fast.status, "ok", fast.reason);
    assert.equal(slow.status, "ok", slow.reason);
    const fastTtft = fast.classes.interactive!.ttft_ms.p50!;
    const slowTtft = slow.classes.interactive!.ttft_ms.p50!;
    assert.ok(slowTtft >= 100, `slowed TTFT p50 ${slowTtft} ms includes a 100 ms step`);
    assert.ok(fastTtft < slowTtft / 2, `fast ${fastTtft} ms vs slowed ${slowTtft} ms`);
    assert.ok(slow.classes.interactive!.e2e_ms.p50! >= 6 * 100, "six 100 ms steps at least");
    assert.equal(slow.acceptance!.route_log_completeness, 1, "every request has a complete route log line");
    const md = renderReport(results);
    assert.match(md, /tokengate@slowed|slowed/);
  });

  it("sends each request's own model and reports the adapter loads the engines counted", async () => {
    const fleet: FleetSpec = {
      name: "lora",
      host: "127.0.0.1",
      seed: 1,
      groups: [
        {
          name: "engines",
          replicas: 2,
          port: 0,
          profile: "instant",
          model: "base",
          dialect: "vllm",
          engine: { maxLoras: 1, loraModules: ["a", "b"] },
          outputLenDist: "max",
          streamInterval: 1,
          faults: {},
        },
      ],
    };
    const t = traceScenario("lora", fleet).topologies[0]!;
    const pool = (urls: string[]) =>
      yamlDocuments([
        inferencePoolDoc("engines", fleet.groups[0]!, { engines: urls }, { loraAdapters: ["a", "b"] }),
      ]);
    const topo: Topology = {
      ...t,
      routers: ["tokengate"],
      gatewayConfig: (endpoints) => ({
        ...t.gatewayConfig(endpoints),
        "pool.yaml": pool(endpoints.engines!),
      }),
    };
    const trace: TraceRequest[] = Array.from({ length: 8 }, (_, i) => ({
      t_ms: i * 100,
      id: `l${i}`,
      tenant: "t",
      model: i % 2 === 0 ? "a" : "b",
      task: null,
      request_class: "interactive",
      input_tokens: 50,
      max_tokens: 4,
      stream: true,
    }));
    const scenario: Scenario = {
      name: "lora",
      description: "two adapters, one slot per engine",
      liveClass: "interactive",
      longClass: null,
      topologies: [topo],
      generate: () => trace,
    };
    const r = (await runScenario(scenario, { seed: 1, quick: true, progress: false })).routers.tokengate!;
    assert.equal(r.status, "ok", r.reason);
    assert.equal(r.errors, 0);
    const loads = r.lora_loads!;
    // Each adapter is loaded at least once, wherever it went; the two counts of the engines agree.
    assert.ok(loads.total >= 2, `loads ${loads.total}`);
    assert.equal(loads.counter_total, loads.total);
    const perEndpoint = r.endpoints.map((e) => e.lora_loads);
    assert.deepEqual(perEndpoint, [loads.by_endpoint["engines-0"], loads.by_endpoint["engines-1"]]);
    assert.equal(
      perEndpoint.reduce((a, b) => a! + b!, 0),
      loads.total,
    );
    assert.deepEqual(
      Object.entries(r.by_model!).map(([m, x]) => [m, x.count, x.errors]),
      [
        ["a", 4, 0],
        ["b", 4, 0],
      ],
    );
  });
});
