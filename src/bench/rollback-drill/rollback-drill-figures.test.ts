import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type DrillAct, type DrillRequest, drillFigures, drillMarkdown } from "./rollback-drill-figures.js";

function req(startedAt: number, configVersion: string, ok = true, pool = "online"): DrillRequest {
  return {
    startedAt,
    ok,
    failure: ok ? null : "HTTP 502",
    configVersion,
    pool,
    endpoint: "e",
    modelVersion: null,
  };
}

describe("rollback drill figures", () => {
  it("times each act from its command to the last request that did not follow, and splits the failures", () => {
    const acts: DrillAct[] = [
      {
        name: "bad",
        command: "apply r2",
        at: 100,
        commandMs: 5,
        follows: (r) => r.configVersion === "r2",
        badVersion: "r2",
      },
      {
        name: "rollback",
        command: "rollback r1",
        at: 200,
        commandMs: 8,
        follows: (r) => r.configVersion === "r1",
      },
      { name: "legacy", command: "apply r3", at: 300, commandMs: 4, follows: (r) => r.pool === "legacy" },
    ];
    const requests = [
      req(50, "r1"),
      req(90, "r1", false), // before any act: the baseline's
      req(102, "r1"), // sent during the command, before the swap
      req(110, "r2", false),
      req(150, "r2", false),
      req(201, "r2", false), // sent after the rollback command, still under the bad version
      req(230, "r1"),
      req(250, "r1", false), // under the good version: the act's failure
      req(320, "r3", true, "legacy"),
    ];
    const f = drillFigures(requests, acts, 400);
    assert.deepEqual(f.baseline, { requests: 2, failed: 1 });
    assert.deepEqual(
      f.acts.map((a) => [
        a.name,
        a.effectiveMs,
        a.requests,
        a.following,
        a.failedByBadVersion,
        a.failedByAct,
      ]),
      [
        ["bad", 2, 3, 2, 2, 0],
        ["rollback", 1, 3, 2, 1, 1],
        ["legacy", 0, 1, 1, 0, 0],
      ],
    );
    assert.deepEqual(f.acts[1]!.failures, ["HTTP 502"]);
    assert.equal(f.targets.met, true);
    assert.equal(f.targets.noFailedRequestByAnAct, false);
    assert.equal(f.drillMs, 204);
    assert.match(drillMarkdown(f, "setup"), /\| rollback \| `rollback r1` \| 8 \| 1 \| 2 \/ 3 \| 1 \| 1 \|/);
  });
});
