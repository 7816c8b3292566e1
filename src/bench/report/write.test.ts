import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { syntheticResults } from "../../testing/synthetic-results.js";
import { fileSafe, resultsJson, writeReport } from "./write.js";

describe("writeReport", () => {
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it("writes results.json, report.md and the charts, and returns their paths", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tokengate-report-"));
    dirs.push(dir);
    const out = join(dir, "support-incident");
    const results = syntheticResults();
    const files = await writeReport(results, out);
    const names = [
      "results.json",
      "report.md",
      "ttft-cdf.svg",
      "queue-tokengate.svg",
      "kv-tokengate.svg",
      "queue-least-request.svg",
      "kv-least-request.svg",
    ];
    assert.deepEqual(
      files,
      names.map((n) => join(out, n)),
      "no charts for the skipped router",
    );
    assert.deepEqual((await readdir(out)).sort(), [...names].sort());
    const json = JSON.parse(await readFile(join(out, "results.json"), "utf8"));
    assert.deepEqual(json, JSON.parse(JSON.stringify(results)), "every figure, samples included");
    const md = await readFile(join(out, "report.md"), "utf8");
    for (const n of names.filter((n) => n.endsWith(".svg")))
      assert.ok(md.includes(`](${n})`), `report links ${n}`);
  });

  it("leaves the samples out of results.json when they would make it too large, and says so", () => {
    const results = syntheticResults();
    const { text, samplesOmitted } = resultsJson(results, 100_000);
    assert.equal(samplesOmitted, true);
    const json = JSON.parse(text);
    assert.equal(json.routers.tokengate.samples, undefined);
    assert.deepEqual(json.routers.tokengate.acceptance, results.routers.tokengate!.acceptance);
    assert.ok(results.routers.tokengate!.samples!.length > 0, "the caller's results are not changed");
    assert.equal(resultsJson(results).samplesOmitted, false);
  });

  it("names chart files safely", () => {
    assert.equal(fileSafe("tokengate/split pools"), "tokengate-split-pools");
  });
});
