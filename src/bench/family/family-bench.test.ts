// `tokengate bench --family`: a small family end to end in virtual time (every router, the verdict,
// family.md and family.json), and how `--real` picks its workloads.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import { runFamilyBench, spreadByLoad } from "./family-bench.js";
import { FAMILY_VIRTUAL_ROUTERS } from "./family-virtual.js";
import { generateFamily } from "./generate.js";

it("runs every router on each workload in virtual time and writes the verdict", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tg-family-"));
  try {
    const lines: string[] = [];
    const r = await runFamilyBench({
      n: 2,
      seed: 3,
      quick: true,
      real: 0,
      repeat: 1,
      outDir: dir,
      progress: (l) => lines.push(l),
    });
    assert.equal(r.virtual.results.length, 2);
    for (const w of r.virtual.results) {
      assert.deepEqual(Object.keys(w.routers), [...FAMILY_VIRTUAL_ROUTERS]);
      for (const f of Object.values(w.routers)) assert.ok(f.p50 > 0 && f.p50 <= f.p90 && f.p90 <= f.p99);
      // The gateway's TTFT estimate is scored where a router runs in it; nginx's have none.
      const e = w.routers.tokengate!.predictionP90;
      assert.ok(typeof e === "number" && e >= 0 && e < 1000, `prediction error P90 ${e}`);
      assert.equal(w.routers["least-request"]!.predictionP90, undefined);
    }
    assert.equal(r.virtual.verdict.workloads.length, 2);
    assert.equal(r.real, null);
    const md = readFileSync(join(dir, "family.md"), "utf8");
    assert.match(md, /^# Workload family: 2 workloads, seed 3 \(quick\), virtual time/);
    for (const name of r.virtual.results.map((w) => w.name)) assert.ok(md.includes(name));
    assert.match(md, /TTFT prediction error P90 ≤ 35% .*\| +\d of 2 \|/);
    const json = JSON.parse(readFileSync(join(dir, "family.json"), "utf8"));
    assert.equal(json.virtual.results.length, 2);
    assert.equal(lines.length, 2, "a progress line per workload");
    // The same seed gives the same figures: virtual time has no noise.
    const again = await runFamilyBench({
      n: 1,
      seed: 3,
      quick: true,
      real: 0,
      repeat: 1,
      outDir: dir,
      progress: () => {},
    });
    assert.deepEqual(again.virtual.results[0], r.virtual.results[0]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it("--real takes workloads spread over the family's range of load", () => {
  const family = generateFamily({ n: 9, seed: 1, quick: true });
  const loads = family.map((w) => w.params.load).sort((a, b) => a - b);
  const picked = spreadByLoad(family, 3).map((w) => w.params.load);
  assert.deepEqual(picked, [loads[0], loads[4], loads[8]]);
  assert.equal(spreadByLoad(family, 1)[0]!.params.load, loads[4]);
  assert.equal(spreadByLoad(family, 20).length, 9);
  assert.equal(spreadByLoad(family, 0).length, 0);
});
