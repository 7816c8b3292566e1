import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticResults } from "../../testing/synthetic-results.js";
import { checkXml, type XmlElement } from "../../testing/xml-check.js";
import { MAX_POINTS_PER_LINE } from "./downsample.js";
import { kvUsageChart, queueDepthChart, ttftChart } from "./svg.js";

/** Checks what every chart file must be; returns its elements for further checks. */
function standaloneSvg(svg: string): XmlElement[] {
  const { problems, elements } = checkXml(svg);
  assert.deepEqual(problems, [], "well-formed XML");
  const root = elements[0]!;
  assert.equal(root.name, "svg");
  assert.equal(root.attrs.xmlns, "http://www.w3.org/2000/svg");
  assert.equal(root.attrs.version, "1.1");
  assert.match(root.attrs.viewBox ?? "", /^0 0 \d+ \d+$/);
  assert.equal(root.attrs.viewBox, `0 0 ${root.attrs.width} ${root.attrs.height}`);
  assert.match(root.attrs["font-family"] ?? "", /sans-serif/);
  assert.equal(elements[1]?.name, "title");
  assert.ok(
    elements.some(
      (e) => e.name === "rect" && e.attrs.fill === "#ffffff" && e.attrs.width === root.attrs.width,
    ),
    "a white background",
  );
  assert.ok(!/(href|url\((?!#))/.test(svg), "no external resources");
  for (const p of elements.filter((e) => e.name === "path")) {
    assert.match(
      p.attrs.d ?? "",
      /^M[-\d.]+ [-\d.]+(?:[LHV][-\d. ]+)*$/,
      "path data is only commands and numbers",
    );
  }
  return elements;
}

function lines(elements: XmlElement[]): XmlElement[] {
  return elements.filter((e) => e.name === "path" && e.attrs.class === "series");
}

function vertices(d: string): number {
  return (d.match(/[MLHV]/g) ?? []).length;
}

describe("the XML check used here", () => {
  it("finds unbalanced tags, stray ampersands, bad attributes and a second root", () => {
    assert.deepEqual(checkXml(`<svg a="1"><g></g></svg>`).problems, []);
    for (const bad of [
      `<svg><g></svg>`,
      `<svg>a & b</svg>`,
      `<svg a=1/>`,
      `<svg a="1" a="2"/>`,
      `<a/><b/>`,
      `<svg>`,
    ]) {
      assert.notDeepEqual(checkXml(bad).problems, [], bad);
    }
  });
});

describe("ttftChart", () => {
  const svg = ttftChart(syntheticResults());
  const elements = standaloneSvg(svg);

  it("draws one line per router × class, colour per router, dash per class", () => {
    const drawn = lines(elements);
    assert.equal(drawn.length, 2 * 3);
    assert.equal(new Set(drawn.map((p) => p.attrs.stroke)).size, 2);
    assert.equal(new Set(drawn.map((p) => p.attrs["stroke-dasharray"] ?? "solid")).size, 3);
  });

  it("has a title, axis titles, a legend counting failures, and the log ticks", () => {
    for (const text of [
      "Time to first token — support-incident",
      "Time to first token (log scale)",
      "Requests with TTFT ≤ x",
      "tokengate (split-pools)",
      "least-request (original-4-pods)",
      "9 failed",
    ]) {
      assert.ok(svg.includes(text), text);
    }
    for (const tick of ["10 ms", "100 ms", "1 s", "10 s", "100 s"])
      assert.ok(svg.includes(`>${tick}</text>`), tick);
    assert.ok(svg.includes(">0%</text>") && svg.includes(">100%</text>"));
  });

  it("leaves skipped routers out", () => {
    assert.ok(!svg.includes("round-robin"));
  });

  it("stays small however many requests were sent", () => {
    const big = ttftChart(syntheticResults(50));
    const drawn = lines(standaloneSvg(big));
    assert.equal(drawn.length, 6);
    for (const p of drawn)
      assert.ok(vertices(p.attrs.d!) <= MAX_POINTS_PER_LINE, `${vertices(p.attrs.d!)} vertices`);
    assert.ok(big.length < 100_000, `${big.length} bytes`);
  });

  it("escapes text taken from the results", () => {
    const r = syntheticResults();
    r.scenario = `<script>&"'`;
    const out = ttftChart(r);
    standaloneSvg(out);
    assert.ok(out.includes("&lt;script&gt;&amp;&quot;&apos;"));
  });
});

describe("queueDepthChart and kvUsageChart", () => {
  it("draw one line per endpoint with a legend naming endpoint and group", () => {
    const r = syntheticResults();
    const queue = queueDepthChart(r, "tokengate");
    assert.equal(lines(standaloneSvg(queue)).length, 5);
    assert.ok(queue.includes("long-0 (summary-long)"));
    assert.ok(queue.includes("Requests waiting in the engine"));
    assert.ok(queue.includes("Time since the run started (s)"));
    const kv = kvUsageChart(r, "least-request");
    assert.equal(lines(standaloneSvg(kv)).length, 4);
    assert.ok(kv.includes(">100%</text>"));
  });

  it("keep every line inside the plot's clip and bounded in points", () => {
    const svg = queueDepthChart(syntheticResults(50), "least-request");
    assert.ok(svg.includes(`<g clip-path="url(#plot-area)"`));
    for (const p of lines(standaloneSvg(svg))) assert.ok(vertices(p.attrs.d!) <= MAX_POINTS_PER_LINE);
    assert.ok(svg.length < 100_000, `${svg.length} bytes`);
  });

  it("say so when a router has no samples or does not exist", () => {
    const r = syntheticResults();
    const empty = queueDepthChart(r, "round-robin");
    assert.equal(lines(standaloneSvg(empty)).length, 0);
    assert.ok(empty.includes("No samples were recorded for this router"));
    assert.ok(standaloneSvg(kvUsageChart(r, "nope")).length > 0);
  });
});
