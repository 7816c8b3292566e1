import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticNoisyNeighbor } from "../../testing/synthetic-noisy-neighbor.js";
import { type BenchResults, type RouterResult, roundRouter } from "../results.js";
import { renderReport } from "./markdown.js";
import { median } from "./rounds-section.js";

/** The cells of the table row whose first cell is `label`, in the section after `heading`. */
function row(md: string, heading: string, label: string): string[] {
  const from = md.indexOf(heading);
  assert.ok(from >= 0, `${heading} is there`);
  const line = md
    .slice(from)
    .split("\n")
    .find((l) => l.startsWith(`| ${label} |`));
  assert.ok(line, `a ${label} row`);
  return line.slice(2, -2).split(" | ");
}

/** tokengate's overall TTFT P99 set to `p99` (least-request's stays 2000 ms). */
function withP99(r: RouterResult, p99: number): RouterResult {
  const overall = r.overall!;
  return roundRouter({ ...r, overall: { ...overall, ttft_ms: { ...overall.ttft_ms, p99 } } });
}

function repeated(p99s: number[]): BenchResults {
  const base = syntheticNoisyNeighbor();
  return {
    ...base,
    rounds: p99s.map((p99, i) => ({
      round: i + 1,
      order: i % 2 === 0 ? ["tokengate", "least-request"] : ["least-request", "tokengate"],
      routers: {
        tokengate: withP99(base.routers.tokengate!, p99),
        "least-request": roundRouter(base.routers["least-request"]!),
      },
    })),
  };
}

describe("report: repeated rounds", () => {
  it("takes the median of the finite values", () => {
    assert.equal(median([3, null, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2.5);
    assert.equal(median([null, Number.NaN]), null);
  });

  it("judges the median round's ratio and counts the rounds that met it alone", () => {
    // Against least-request's 2000 ms: 0.80×, 0.60×, 0.65× → median 0.65×, met; two rounds met.
    const md = renderReport(repeated([1600, 1200, 1300]));
    assert.deepEqual(row(md, "### tokengate: the targets over the rounds", "TTFT P99, all requests"), [
      "TTFT P99, all requests",
      "≤ 0.7× least-request",
      "1600 ms / 2000 ms (0.80×)",
      "1200 ms / 2000 ms (0.60×)",
      "1300 ms / 2000 ms (0.65×)",
      "0.65×",
      "met",
      "2 of 3",
    ]);
    assert.match(md, /round 2: least-request, tokengate/);
    // The burst and the prediction error are judged over the rounds too.
    const quiet = row(md, "### tokengate", "Quiet tenants' P99 during the burst / without it");
    assert.deepEqual(quiet.slice(-3), ["1.50×", "met", "3 of 3"]);
    assert.deepEqual(row(md, "### tokengate", "TTFT prediction error P50").slice(-3).slice(1), [
      "met",
      "3 of 3",
    ]);
  });

  it("misses the target when the median round misses it, whatever the best round did", () => {
    const md = renderReport(repeated([1200, 1500, 1600]));
    assert.deepEqual(row(md, "### tokengate", "TTFT P99, all requests").slice(-3), [
      "0.75×",
      "not met",
      "1 of 3",
    ]);
  });

  it("lists every router's TTFT per round, and says nothing for a single round", () => {
    const md = renderReport(repeated([1600, 1200]));
    assert.deepEqual(row(md, "## Repeated rounds", "tokengate").slice(1), [
      "TTFT P50",
      "100 ms",
      "100 ms",
      "100 ms",
    ]);
    assert.doesNotMatch(renderReport(syntheticNoisyNeighbor()), /Repeated rounds/);
  });
});
