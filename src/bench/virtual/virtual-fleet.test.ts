import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { makeEngineConfig } from "../../sim/engine-config.js";
import { getScenario } from "../scenarios/index.js";
import type { TraceRequest } from "../trace-formats/trace.js";
import { runVirtual } from "./virtual-fleet.js";
import { leastRequest, predictedTtft, type QueueOrder, roundRobin } from "./virtual-policies.js";
import { renderVirtual, virtualRows } from "./virtual-report.js";

const h100 = makeEngineConfig("h100-llama8b", "m");
const req = (id: string, t: number, tokens: number, extra: Partial<TraceRequest> = {}): TraceRequest => ({
  t_ms: t,
  id,
  tenant: "t",
  task: null,
  request_class: "interactive",
  input_tokens: tokens,
  max_tokens: 4,
  stream: true,
  ...extra,
});

describe("the virtual fleet", () => {
  it("a request alone: the API server, then one prefill step, then a step a token", () => {
    const [r] = runVirtual([req("a", 0, 1000)], h100, 1, roundRobin());
    const api = h100.apiServerUs / 1000;
    const prefill = (h100.beta0Us + h100.beta1Us * 1000) / 1000;
    assert.ok(Math.abs(r!.firstTokenMs - (api + prefill)) < 1e-9, `first token at ${r!.firstTokenMs}`);
    const decode = (h100.beta0Us + h100.beta2Us) / 1000;
    assert.ok(Math.abs(r!.endMs - (api + prefill + 3 * decode)) < 1e-9, `end at ${r!.endMs}`);
  });

  it("every request finishes, after its arrival and its first token", () => {
    const trace = Array.from({ length: 200 }, (_, i) => req(`r${i}`, i * 5, 100 + ((i * 997) % 9000)));
    for (const policy of [roundRobin(), leastRequest(), predictedTtft()]) {
      const out = runVirtual(trace, h100, 4, policy);
      assert.equal(out.length, 200);
      for (const r of out) {
        assert.ok(
          r.dispatchedMs >= r.trace.t_ms && r.firstTokenMs > r.dispatchedMs && r.endMs >= r.firstTokenMs,
        );
      }
    }
  });

  it("a shared system prompt is found in the prefix cache the second time", () => {
    const shared = { prefix_group: "g", prefix_tokens: 4000 };
    const [a, b] = runVirtual([req("a", 0, 200, shared), req("b", 500, 200, shared)], h100, 1, roundRobin());
    assert.ok(b!.firstTokenMs - 500 < (a!.firstTokenMs - 0) / 2, "the second prefill is far shorter");
  });

  it("the ideal policy sends a short prompt past a long prefill; least-request counts requests", () => {
    const view = (index: number, inflight: number, pendingPrefillTokens: number, decoding: number) => ({
      index,
      cfg: h100,
      inflight,
      pendingPrefillTokens,
      decoding,
      inApiServer: 0,
      waitingRequests: 0,
      runningRequests: inflight,
      kvUsage: 0,
    });
    // Engine 0 prefills one 16k-token prompt; engine 1 decodes three short replies.
    const engines = [view(0, 1, 16_000, 0), view(1, 3, 0, 3)];
    const short = {
      trace: req("x", 0, 300),
      promptTokens: 300,
      dispatchedMs: 0,
      firstTokenMs: 0,
      endMs: 0,
      engine: -1,
    };
    assert.equal(leastRequest().pick(short, engines), 0);
    assert.equal(predictedTtft().pick(short, engines), 1);
  });

  it("a gateway queue in shortest-first order sends the short prompt ahead of the long ones", () => {
    const trace = [
      req("busy", 0, 16_000),
      req("long-1", 1, 12_000, { tenant: "x" }),
      req("long-2", 2, 12_000, { tenant: "x" }),
      req("short", 3, 200, { tenant: "y" }),
    ];
    const first = (order: QueueOrder) =>
      Object.fromEntries(
        runVirtual(trace, h100, 1, predictedTtft({ boundMs: 50, order })).map((r) => [
          r.trace.id,
          r.firstTokenMs,
        ]),
      );
    const sjf = first("shortest-first");
    assert.ok(sjf.short! < sjf["long-1"]! && sjf["long-1"]! < sjf["long-2"]!, JSON.stringify(sjf));
    const fifo = first("fifo");
    assert.ok(fifo["long-1"]! < fifo.short!, JSON.stringify(fifo));
  });

  it("reports a scenario's policies with ratios to least-request, and the quiet tenants for a burst", () => {
    const s = getScenario("noisy-neighbor");
    const rows = virtualRows(s, { seed: 1, quick: true });
    assert.deepEqual(rows.map((r) => r.policy).slice(0, 3), [
      "round-robin",
      "least-request",
      "ideal prefill-aware",
    ]);
    assert.ok(rows.every((r) => r.quiet !== null && r.ttftMs.p99 >= r.ttftMs.p90));
    const md = renderVirtual(s, rows, 1);
    assert.match(md, /\| least-request \| \d+ ms \(1\.00×\)/);
  });
});
