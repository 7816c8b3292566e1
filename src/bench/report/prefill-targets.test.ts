import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticNoisyNeighbor } from "../../testing/synthetic-noisy-neighbor.js";
import { syntheticResults } from "../../testing/synthetic-results.js";
import { renderReport } from "./markdown.js";
import { times } from "./prefill-targets.js";

/** The cells of every table row of `md` whose first cell starts with `label`. */
function rows(md: string, label: string): string[][] {
  return md
    .split("\n")
    .filter((l) => l.startsWith(`| ${label}`))
    .map((l) => l.slice(2, -2).split(" | "));
}

const section = (md: string) => {
  const from = md.indexOf("## Issue 13 targets");
  assert.ok(from >= 0, "the section is there");
  return md.slice(from, md.indexOf("\n## ", from + 1));
};

describe("report: issue 13 targets", () => {
  const md = section(renderReport(syntheticNoisyNeighbor()));

  it("judges tokengate's TTFT P90 and P99 against least-request's, computed from the run", () => {
    assert.deepEqual(rows(md, "TTFT P90, all requests"), [
      [
        "TTFT P90, all requests",
        "≤ 0.7× least-request",
        "tokengate (4-replicas)",
        "200 ms",
        "400 ms",
        "0.50×",
        "met",
      ],
    ]);
    assert.deepEqual(rows(md, "TTFT P99, all requests")[0]!.slice(3), [
      "1600 ms",
      "2000 ms",
      "0.80×",
      "not met",
    ]);
  });

  it("judges short prompts' P99 against 0.5×", () => {
    assert.deepEqual(rows(md, "TTFT P99, short prompts (< 1,024 tokens)")[0]!.slice(1), [
      "≤ 0.5× least-request",
      "tokengate (4-replicas)",
      "400 ms",
      "1000 ms",
      "0.40×",
      "met",
    ]);
  });

  it("compares each router's quiet tenants during the burst with the rest of the run", () => {
    assert.match(md, /every tenant but `noisy`/);
    assert.deepEqual(rows(md, "tokengate (4-replicas)").at(-1), [
      "tokengate (4-replicas)",
      "60 / 140",
      "600 ms",
      "400 ms",
      "1.50×",
      "met",
      "200 ms",
      "3.00×",
      "not met",
    ]);
    assert.deepEqual(rows(md, "least-request (4-replicas)").at(-1)!.slice(4, 6), ["4.00×", "not met"]);
  });

  it("says why there is no ratio when least-request did not run", () => {
    const r = syntheticNoisyNeighbor();
    delete r.routers["least-request"];
    assert.match(section(renderReport(r)), /least-request did not run: the ratios need it\./);
  });

  it("writes n/a, not a verdict, where a figure is missing", () => {
    const r = syntheticNoisyNeighbor();
    delete r.routers.tokengate!.by_input_size;
    const short = rows(section(renderReport(r)), "TTFT P99, short prompts")[0]!;
    assert.deepEqual(short.slice(3), ["n/a", "1000 ms", "n/a", "n/a"]);
  });

  it("shows the ratios alone for a scenario without a burst (mixed-lengths)", () => {
    const r = syntheticNoisyNeighbor();
    for (const x of Object.values(r.routers)) delete x.burst_isolation;
    const out = section(renderReport(r));
    assert.match(out, /\| TTFT P90, all requests \|/);
    assert.doesNotMatch(out, /One tenant's burst/);
  });

  it("is left out of scenarios that declare neither target", () => {
    assert.doesNotMatch(renderReport(syntheticResults()), /Issue 13 targets/);
  });
});

describe("report: ratios beside a bound", () => {
  it("shows two digits, and more where two would round onto the bound", () => {
    assert.equal(times(0.6234, 0.7), "0.62×");
    assert.equal(times(0.7015, 0.7), "0.702×");
    assert.equal(times(0.5016, 0.5), "0.502×");
    assert.equal(times(0.6996, 0.7), "0.6996×");
    assert.equal(times(0.7, 0.7), "0.70×");
    assert.equal(times(1.996, 2), "1.996×");
    assert.equal(times(1.96, 2), "1.96×");
    assert.equal(times(2.004, 2), "2.004×");
    assert.equal(times(null, 0.7), "n/a");
  });
});
