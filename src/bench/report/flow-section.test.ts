import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticResults } from "../../testing/synthetic-results.js";
import type { BatchFlowResult, RouterResult } from "../results.js";
import { flowSection, flowTargets } from "./flow-section.js";

function flow(tokPerS: number, lost: number, pause: BatchFlowResult["pause"]): BatchFlowResult {
  return {
    batch_sent: 87,
    batch_completed: 87 - lost,
    batch_lost: lost,
    batch_last_completion_s: 240,
    batch_throughput_by_phase: {
      "backlog-flood": { requests_per_s: 0.2, output_tokens_per_s: 400 },
      "batch-only": { requests_per_s: 0.25, output_tokens_per_s: tokPerS },
    },
    gateway_queue_p95_ms: pause ? { interactive: 2, batch: 90_000 } : {},
    pause,
  };
}

const PAUSE = {
  watched_pool: "summary-online",
  threshold_ms: 1000,
  window_s: 20,
  threshold_passed_s: 71.2,
  paused_at_s: [71.4],
  resumed_at_s: [95.1],
  effective_after_s: 0.2,
  batch_dispatched_while_paused: 0,
};

describe("flowSection", () => {
  const results = syntheticResults();
  const tokengate: RouterResult = { ...results.routers.tokengate!, flow: flow(430, 0, PAUSE) };
  const least: RouterResult = { ...results.routers["least-request"]!, flow: flow(450, 2, null) };

  it("judges issue 6's targets, batch throughput against least-request's in the no-live phase", () => {
    const t = flowTargets(tokengate, least, "interactive");
    assert.equal(t.batchLost, 0);
    assert.equal(t.pauseEffectiveS, 0.2);
    assert.ok(Math.abs(t.batchThroughputRatio! - 430 / 450) < 1e-9);
    assert.equal(flowTargets(least, least, "interactive").batchThroughputRatio, 1);
  });

  it("renders the targets, batch work per phase and the pause", () => {
    const md = flowSection(
      [
        ["tokengate", tokengate],
        ["least-request", least],
      ],
      "interactive",
    );
    assert.match(md, /^## Flow control \(issue 6\)/);
    assert.match(md, /\| Batch requests lost \| 0 \| 0 ✓ \| 2 ✗ \|/);
    assert.match(md, /\| Batch pause effective after \| ≤ 5 s \| 0\.20 s ✓ \| n\/a \|/);
    assert.match(
      md,
      /\| Batch throughput, batch-only phase, vs least-request \| ≥ 90% \| 96% ✓ \| 100% ✓ \|/,
    );
    assert.match(
      md,
      /\| tokengate \| summary-online \| TTFT P95 > 1000 ms over 20 s \| 71\.2 s \| 71\.4 s \| 95\.1 s \| 0\.20 s \| 0 \|/,
    );
    assert.match(md, /interactive 2 ms, batch 90\.0 s/);
  });

  it("is empty when no router has flow figures", () => {
    assert.equal(flowSection([["x", results.routers.tokengate!]], "interactive"), "");
  });
});
