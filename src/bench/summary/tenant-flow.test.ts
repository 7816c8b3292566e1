// Pins the per-tenant flow figures: the hop against the engine's own TTFT, the gateway queue and the
// hop without it from the gateway's log, engines idle while held (a batch pause's holds left out).

import assert from "node:assert/strict";
import { it } from "node:test";
import type { ReplayRecord } from "../traffic/replay.js";
import { tenantFlow } from "./tenant-flow.js";

function rec(id: string, tenant: string, ttftMs: number, error: string | null = null): ReplayRecord {
  return {
    req: { t_ms: 0, id, tenant, task: null, request_class: "interactive", max_tokens: 10, stream: true },
    sentAtMs: 0,
    result: {
      status: error ? 503 : 200,
      ttftMs,
      e2eMs: ttftMs + 50,
      contentFrames: 1,
      promptTokens: 1,
      completionTokens: 10,
      cachedTokens: 0,
      error,
      headers: {},
      trailers: {},
      text: null,
    },
  };
}

const line = (id: string, queueMs: number, idleMs: number | null, reason: string | null = "saturated") => ({
  event: "inference.completed",
  trace_id: id,
  gateway_queue_ms: queueMs,
  gateway_queue_reason: reason,
  held_while_idle_ms: idleMs,
});

it("splits each tenant's hop into the gateway queue and the rest, and sums engines idle while held", () => {
  const records = [rec("a1", "a", 300), rec("a2", "a", 120), rec("b1", "b", 90), rec("b2", "b", 80, "boom")];
  const engine = new Map([
    ["a1", 100],
    ["a2", 100],
    ["b1", 60],
  ]);
  const log = [line("a1", 150, 30), line("a2", 0, null, null), line("b1", 5, 400, "paused")];
  const f = tenantFlow(records, (r) => engine.get(r.req.id) ?? Number.NaN, log);
  assert.deepEqual(Object.keys(f), ["a", "b"]);
  assert.equal(f.a!.count, 2);
  assert.equal(f.a!.hop_ms.p99, 200, "a1: 300 − 100");
  assert.equal(f.a!.hop_ms.p50, 20, "a2: 120 − 100");
  assert.equal(f.a!.gateway_queue_ms!.p99, 150);
  assert.equal(f.a!.hop_after_queue_ms!.p99, 50, "a1's hop less its 150 ms in the queue");
  assert.equal(f.a!.held_while_idle_ms_total, 30);
  assert.equal(f.a!.held_while_idle_requests, 1);
  assert.equal(f.b!.count, 1, "the failed request is left out");
  assert.equal(f.b!.held_while_idle_ms_total, 0, "a batch pause's hold is not the queue's idling");
});

it("without a gateway log (nginx) only the hop", () => {
  const f = tenantFlow([rec("x", "t", 50)], () => 40, null);
  assert.equal(f.t!.hop_ms.p50, 10);
  assert.equal(f.t!.gateway_queue_ms, null);
  assert.equal(f.t!.hop_after_queue_ms, null);
  assert.equal(f.t!.held_while_idle_ms_total, null);
});
