// Pins the family verdict on hand-made figures: ratios to the best other router, the routing-matters
// rule, the burst targets, each router's worst case and mean rank.

import assert from "node:assert/strict";
import { it } from "node:test";
import { familyVerdict } from "./family-verdict.js";
import type { FamilyFigures } from "./family-virtual.js";

const fig = (
  p50: number,
  p90: number,
  p99: number,
  burst: [number, number] | null = null,
): FamilyFigures => ({
  p50,
  p90,
  p99,
  burstP90: burst?.[0] ?? null,
  othersDuringBurstP99: burst?.[1] ?? null,
});

it("judges tokengate against the best other router, least-request where routing matters, and the bursts", () => {
  const v = familyVerdict([
    {
      // Routing matters (P90s 100..300) and tokengate wins everything.
      name: "a",
      requests: 10,
      routers: {
        tokengate: fig(20, 100, 200, [300, 200]),
        "least-request": fig(25, 300, 600, [300, 400]),
        "dynamo-kv": fig(21, 110, 210, [280, 210]),
      },
    },
    {
      // The routers' P90s within 20%: least-request's P90 rule does not apply; P50 lost to dynamo-kv.
      name: "b",
      requests: 10,
      routers: {
        tokengate: fig(30, 100, 150),
        "least-request": fig(31, 110, 180),
        "dynamo-kv": fig(27, 105, 170),
      },
    },
  ]);
  const [a, b] = v.workloads;
  assert.deepEqual(a!.toBestOther, { p50: 20 / 21, p90: 100 / 110, p99: 200 / 210 });
  assert.equal(a!.bestOther.p50, "dynamo-kv");
  assert.equal(a!.toLeastRequestP90, 100 / 300);
  assert.equal(a!.burstToLeastRequest, 1);
  assert.equal(a!.othersToLeastRequest, 0.5);
  assert.equal(a!.met, true);
  assert.equal(b!.toLeastRequestP90, null, "P90s 100..110: routing does not matter here");
  assert.equal(b!.burstToLeastRequest, null);
  assert.equal(b!.met, false, "P50 30 against dynamo-kv's 27");
  assert.deepEqual(v.counts.bestOther.p50, { met: 1, of: 2 });
  assert.deepEqual(v.counts.matters, { met: 1, of: 1 });
  assert.deepEqual(v.counts.all, { met: 1, of: 2 });
  assert.deepEqual(v.worst["least-request"]!.p90, { ratio: 3, workload: "a" });
  assert.deepEqual(v.worst["dynamo-kv"]!.p50, { ratio: 1.05, workload: "a" });
  assert.deepEqual(v.meanRank.tokengate, { p50: 1.5, p90: 1, p99: 1 });
  assert.deepEqual(v.meanRank["least-request"], { p50: 3, p90: 3, p99: 3 });
});

it("a burst that costs the bursting tenant more than 1.2× least-request's fails the workload", () => {
  const v = familyVerdict([
    {
      name: "c",
      requests: 1,
      routers: { tokengate: fig(10, 50, 90, [130, 100]), "least-request": fig(12, 100, 200, [100, 300]) },
    },
  ]);
  assert.equal(v.workloads[0]!.burstToLeastRequest, 1.3);
  assert.equal(v.workloads[0]!.met, false);
  assert.deepEqual(v.counts.burst, { met: 0, of: 1 });
  assert.deepEqual(v.counts.others, { met: 1, of: 1 });
});
