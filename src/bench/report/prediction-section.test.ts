import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SYNTHETIC_PREDICTION, syntheticNoisyNeighbor } from "../../testing/synthetic-noisy-neighbor.js";
import { renderReport } from "./markdown.js";

function row(md: string, label: string): string[] {
  const from = md.indexOf("## TTFT prediction error");
  assert.ok(from >= 0, "the section is there");
  const line = md
    .slice(from)
    .split("\n")
    .find((l) => l.startsWith(`| ${label} |`));
  assert.ok(line, label);
  return line.slice(2, -2).split(" | ").slice(1);
}

describe("report: TTFT prediction error", () => {
  it("shows count, error P50 / P90 (P50 judged against 25%), |Δ| and the error after the queue", () => {
    const md = renderReport(syntheticNoisyNeighbor());
    assert.deepEqual(row(md, "tokengate (4-replicas)"), [
      "2,398",
      "18.4% ✓",
      "61.2%",
      "13 ms",
      "240 ms",
      "15.1% / 48.9%",
    ]);
    assert.deepEqual(row(md, "least-request (4-replicas)"), [
      "n/a (no request log)",
      "n/a",
      "n/a",
      "n/a",
      "n/a",
      "n/a",
    ]);
  });

  it("writes n/a while the gateway logs no prediction", () => {
    const r = syntheticNoisyNeighbor();
    const none = { p50: null, p90: null };
    r.routers.tokengate!.prediction_error = {
      count: 0,
      relative_pct: none,
      absolute_ms: none,
      after_queue: { relative_pct: none, absolute_ms: none },
    };
    const md = renderReport(r);
    assert.deepEqual(row(md, "tokengate (4-replicas)"), ["0", "n/a", "n/a", "n/a", "n/a", "n/a"]);
    assert.match(md, /A router with 0 lines logged no `predicted_ttft_ms`\./);
  });

  it("marks a P50 of 25% or more as missing the target", () => {
    const r = syntheticNoisyNeighbor();
    r.routers.tokengate!.prediction_error = {
      ...SYNTHETIC_PREDICTION,
      relative_pct: { p50: 25, p90: 80 },
    };
    assert.equal(row(renderReport(r), "tokengate (4-replicas)")[1], "25.0% ✗");
  });
});
