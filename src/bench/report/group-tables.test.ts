import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticNoisyNeighbor } from "../../testing/synthetic-noisy-neighbor.js";
import { renderReport } from "./markdown.js";

const part = (md: string, heading: string) => {
  const from = md.indexOf(`### ${heading}\n`);
  assert.ok(from >= 0, heading);
  return md.slice(from, md.indexOf("\n### ", from + 1));
};
const cells = (line: string) => line.slice(2, -2).split(" | ");

describe("report: latency per tenant and input size", () => {
  const md = renderReport(syntheticNoisyNeighbor());

  it("has a row per tenant and router, the routers of a tenant together", () => {
    const lines = part(md, "Per tenant")
      .split("\n")
      .filter((l) => l.startsWith("| `"));
    assert.deepEqual(
      lines.map((l) => cells(l).slice(0, 2).join(" @ ")),
      ["quiet-1", "quiet-2", "noisy"].flatMap((t) =>
        ["tokengate", "least-request", "round-robin"].map((r) => `\`${t}\` @ ${r} (4-replicas)`),
      ),
    );
    assert.deepEqual(cells(lines[6]!), [
      "`noisy`",
      "tokengate (4-replicas)",
      "40",
      "1",
      "400 ms",
      "800 ms",
      "1600 ms",
      "4000 ms",
    ]);
  });

  it("names the input-size buckets and keeps them in size order", () => {
    const lines = part(md, "Per input size")
      .split("\n")
      .filter((l) => /^\| [<≥\d]/.test(l));
    assert.deepEqual([...new Set(lines.map((l) => cells(l)[0]))], ["< 1,024", "1,024–4,095", "4,096–8,191"]);
  });

  it("repeats both tables per phase, in phase order", () => {
    const headings = [...md.matchAll(/^### Phase `(\w+)`: per (tenant|input size)$/gm)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
    assert.deepEqual(headings, [
      "before tenant",
      "before input size",
      "burst tenant",
      "burst input size",
      "after tenant",
      "after input size",
    ]);
    assert.match(
      part(md, "Phase `burst`: per tenant"),
      /\| `noisy` \| tokengate \(4-replicas\) \| 8 \| 1 \|/,
    );
  });

  it("says so in a sentence when every request had one tenant", () => {
    const r = syntheticNoisyNeighbor();
    for (const x of Object.values(r.routers)) {
      x.by_tenant = { bench: x.by_tenant!["quiet-1"]! };
      delete x.by_phase;
    }
    const out = renderReport(r);
    assert.match(part(out, "Per tenant"), /Every request was tenant `bench`\./);
    assert.doesNotMatch(out, /### Phase/);
  });
});
