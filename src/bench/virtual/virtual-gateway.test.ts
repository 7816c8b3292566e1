import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseEndpointPickerConfig } from "../../picker/config/endpoint-picker-config.js";
import { makeEngineConfig } from "../../sim/engine-config.js";
import type { TraceRequest } from "../trace-formats/trace.js";
import { runVirtual, type VirtualRequest } from "./virtual-fleet.js";
import { virtualGateway } from "./virtual-gateway.js";

const h100 = makeEngineConfig("h100-llama8b", "m", {});
const conf = (spec: object) => {
  const p = parseEndpointPickerConfig(spec);
  assert.ok(p.ok);
  return p.config;
};

function trace(
  n: number,
  every: number,
  over: (i: number) => Partial<TraceRequest> = () => ({}),
): TraceRequest[] {
  return Array.from({ length: n }, (_, i) => ({
    t_ms: i * every,
    id: `r${i}`,
    tenant: "t",
    task: null,
    request_class: "interactive",
    input_tokens: 400,
    max_tokens: 8,
    stream: true,
    ...over(i),
  }));
}

describe("a router's picker in virtual time", () => {
  it("runs every request through tokengate's picker, learns the engines' speed, and predicts its TTFTs", () => {
    const predictions = new Map<VirtualRequest, number>();
    const reqs = runVirtual(
      trace(200, 20),
      h100,
      3,
      virtualGateway("tokengate", conf({}), h100, 3, { predictions }),
    );
    assert.ok(
      reqs.every((r) => r.engine >= 0 && Number.isFinite(r.firstTokenMs) && Number.isFinite(r.endMs)),
    );
    assert.equal(new Set(reqs.map((r) => r.engine)).size, 3, "every engine used");
    // The fit learns from the first tokens: the last requests' predictions are close.
    const late = reqs
      .slice(100)
      .map((r) => Math.abs(predictions.get(r)! - (r.firstTokenMs - r.dispatchedMs)));
    late.sort((a, b) => a - b);
    assert.ok(late[Math.floor(late.length / 2)]! < 10, `median |predicted − actual| ${late[50]} ms`);
  });

  it("keeps a shared prefix on the engine that holds it, and a peer's algorithm runs the same way", () => {
    // Two groups of requests sharing a 4,000-token system prompt each.
    const shared = trace(60, 50, (i) => ({ prefix_group: `g${i % 2}`, prefix_tokens: 4000 }));
    const reqs = runVirtual(shared, h100, 4, virtualGateway("tokengate", conf({}), h100, 4));
    for (const g of [0, 1]) {
      const engines = new Set(
        reqs
          .filter((r) => r.trace.prefix_group === `g${g}`)
          .slice(5)
          .map((r) => r.engine),
      );
      assert.equal(engines.size, 1, `group g${g} stays on one engine: ${[...engines]}`);
    }
    for (const algorithm of ["llm-d", "sglang-cache-aware", "dynamo-kv", "aibrix-prefix-cache"]) {
      const peer = runVirtual(shared, h100, 4, virtualGateway(algorithm, conf({ algorithm }), h100, 4));
      assert.ok(
        peer.every((r) => Number.isFinite(r.endMs)),
        `${algorithm}: every request finished`,
      );
    }
  });
});
