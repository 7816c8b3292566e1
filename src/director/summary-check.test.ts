import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { summaryOf } from "../testing/fake-region.js";
import { checkSummary } from "./summary-check.js";

describe("checkSummary", () => {
  it("takes a well-formed summary, extra fields and a null TTFT included", () => {
    const s = { ...summaryOf("eu", ["m"], 0.5), publishedBy: "a newer gateway" };
    const r = checkSummary(s);
    assert.ok(r.ok);
    assert.equal(r.summary.region, "eu");
    assert.equal(r.summary.window.ttftP95Ms, null);
  });

  it("names the first field that is wrong, with its path", () => {
    const good = summaryOf("eu", ["m"], 0.5);
    const cases: [unknown, string][] = [
      [null, "summary"],
      [{ ...good, region: "" }, "region"],
      [{ ...good, computedAt: "now" }, "computedAt"],
      [{ ...good, draining: "no" }, "draining"],
      [
        { ...good, models: [{ alias: "m", versions: [{ version: "v" }], ready: true }] },
        "models[0].versions[0].ready",
      ],
      [{ ...good, pools: [{ ...good.pools[0], headroom: 1.5 }] }, "pools[0].headroom"],
      [{ ...good, headroomByModel: { m: Number.NaN } }, "headroomByModel.m"],
      [{ ...good, window: { ...good.window, errorRate: -0.1 } }, "window.errorRate"],
      [{ ...good, window: { ...good.window, ttftP95Ms: "fast" } }, "window.ttftP95Ms"],
    ];
    for (const [value, field] of cases) {
      const r = checkSummary(value);
      assert.ok(!r.ok, field);
      assert.equal(r.field, field);
    }
  });
});
