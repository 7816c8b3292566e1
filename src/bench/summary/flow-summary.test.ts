import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { PauseWhen } from "../../config/route-types.js";
import type { ReplayRecord } from "../traffic/replay.js";
import { summarizeFlow } from "./flow-summary.js";

const START = Date.parse("2026-11-30T10:00:00.000Z");
const at = (s: number) => new Date(START + s * 1000).toISOString();

function rec(
  id: string,
  cls: string,
  sentS: number,
  o: { ttftMs?: number; e2eMs: number; tokens?: number; error?: string },
): ReplayRecord {
  return {
    req: {
      t_ms: sentS * 1000,
      id,
      tenant: "t",
      task: null,
      request_class: cls,
      max_tokens: 10,
      stream: cls !== "batch",
    },
    sentAtMs: sentS * 1000,
    result: {
      status: o.error ? 503 : 200,
      ttftMs: o.ttftMs ?? Number.NaN,
      e2eMs: o.e2eMs,
      contentFrames: 1,
      promptTokens: 1,
      completionTokens: o.tokens ?? 100,
      cachedTokens: 0,
      error: o.error ?? null,
      headers: {},
      trailers: {},
      text: null,
    },
  };
}

const line = (id: string, pool: string, queueMs: number, endpoint: string | null = "e0") => ({
  event: "inference.completed",
  trace_id: id,
  route_pool: pool,
  gateway_queue_ms: queueMs,
  endpoint,
});

const WHEN: PauseWhen = {
  pool: "online",
  ttftP95MsGt: 1000,
  windowSeconds: 10,
  resumeBelowMs: 800,
  resumeAfterSeconds: 5,
  minSamples: 5,
  retryAfterSeconds: 900,
};

describe("summarizeFlow", () => {
  it("counts batch sent, done and lost, and batch throughput per phase by completion time", () => {
    const records = [
      rec("b1", "batch", 1, { e2eMs: 4000, tokens: 1000 }),
      rec("b2", "batch", 2, { e2eMs: 10_000, tokens: 2000 }),
      rec("b3", "batch", 3, { e2eMs: 1, error: "HTTP 503" }),
      rec("l1", "interactive", 1, { ttftMs: 50, e2eMs: 500 }),
    ];
    const f = summarizeFlow({
      records,
      batchClass: "batch",
      phases: [
        { name: "flood", startS: 0, endS: 10 },
        { name: "batch-only", startS: 10, endS: 20 },
      ],
      log: [line("b1", "batch", 0), line("b2", "batch", 250), line("l1", "online", 3)],
      startedAtEpochMs: START,
      pauseWhen: null,
    });
    assert.equal(f.batch_sent, 3);
    assert.equal(f.batch_completed, 2);
    assert.equal(f.batch_lost, 1);
    assert.equal(f.batch_last_completion_s, 12);
    assert.deepEqual(f.batch_throughput_by_phase, {
      flood: { requests_per_s: 0.1, output_tokens_per_s: 100 },
      "batch-only": { requests_per_s: 0.1, output_tokens_per_s: 200 },
    });
    assert.equal(f.gateway_queue_p95_ms.batch, 250);
    assert.equal(f.gateway_queue_p95_ms.interactive, 3);
    assert.equal(f.pause, null);
  });

  it("times the pause: threshold passed as the clients saw it, the pause event, the last batch dispatch after it", () => {
    const records: ReplayRecord[] = [];
    const log: Record<string, unknown>[] = [];
    // Live first tokens: fast until 20 s, then slow (1.5 s TTFT) from 20 s on, one per 0.5 s.
    for (let i = 0; i < 60; i++) {
      const sent = i * 0.5;
      const ttft = sent >= 20 ? 1500 : 100;
      records.push(rec(`l${i}`, "interactive", sent, { ttftMs: ttft, e2eMs: ttft + 100 }));
      log.push(line(`l${i}`, "online", 0));
    }
    // Batch dispatches at 21 s and 22.5 s (after the threshold passes), at 30 s while paused (a leak),
    // and at 40 s after the resume; one refused in the queue (no endpoint).
    for (const [id, sent, wait, ep] of [
      ["b1", 20, 1000, "e0"],
      ["b2", 22, 500, "e0"],
      ["b3", 29, 1000, "e0"],
      ["b4", 30, 10_000, "e0"],
      ["b5", 25, 5000, null],
    ] as const) {
      records.push(rec(id, "batch", sent, { e2eMs: wait + 5000 }));
      log.push(line(id, "batch", wait, ep));
    }
    log.push({ ts: at(23), event: "queue.paused" }, { ts: at(35), event: "queue.resumed" });
    const f = summarizeFlow({
      records,
      batchClass: "batch",
      phases: [],
      log,
      startedAtEpochMs: START,
      pauseWhen: WHEN,
    });
    const p = f.pause!;
    // The first slow request (sent at 20 s) gets its first token at 21.5 s; one slow sample among the
    // 20 in the 10 s window is enough for the nearest-rank P95 to pass.
    assert.equal(p.threshold_passed_s, 21.5);
    assert.deepEqual(p.paused_at_s, [23]);
    assert.deepEqual(p.resumed_at_s, [35]);
    // Not 1.5 s (the pause event at 23 s): b3 still left at 30 s, so the pause only held from then on.
    assert.equal(p.effective_after_s, 8.5);
    assert.equal(p.batch_dispatched_while_paused, 1, "b3 left at 30 s while paused");
    assert.equal(p.threshold_ms, 1000);
  });

  it("reports a threshold never passed as null", () => {
    const records = [rec("l1", "interactive", 1, { ttftMs: 10, e2eMs: 20 })];
    const f = summarizeFlow({
      records,
      batchClass: "batch",
      phases: [],
      log: [line("l1", "online", 0)],
      startedAtEpochMs: START,
      pauseWhen: WHEN,
    });
    assert.equal(f.pause?.threshold_passed_s, null);
    assert.equal(f.pause?.effective_after_s, null);
    assert.deepEqual(f.pause?.paused_at_s, []);
    assert.equal(f.batch_sent, 0);
  });
});
