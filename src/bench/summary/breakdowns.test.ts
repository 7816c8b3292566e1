import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { replayRecord as rec } from "../../testing/replay-records.js";
import type { ScenarioPhase } from "../scenarios/shipped.js";
import { breakdownByPhase, byInputSize, byTenant, inputSizeBucket, inputTokensOf } from "./breakdowns.js";
import { burstIsolation } from "./burst-isolation.js";

const PHASES: ScenarioPhase[] = [
  { name: "before", startS: 0, endS: 10 },
  { name: "burst", startS: 10, endS: 20 },
  { name: "after", startS: 20, endS: 30 },
];

describe("per-tenant and per-input-size breakdowns", () => {
  it("buckets inputs at 1,024, 4,096 and 8,192 tokens", () => {
    const keys = [0, 1023, 1024, 4095, 4096, 8191, 8192, 50_000].map((n) => inputSizeBucket(n).key);
    assert.deepEqual(keys, [
      "<1024",
      "<1024",
      "1024-4095",
      "1024-4095",
      "4096-8191",
      "4096-8191",
      ">=8192",
      ">=8192",
    ]);
  });

  it("counts a trace's text in the simulator's tokens when it gives no input_tokens", () => {
    assert.equal(inputTokensOf(rec({ inputTokens: 700 }).req), 700);
    const n = inputTokensOf(rec({ inputText: "hello there, how are you today?" }).req);
    assert.ok(n > 3 && n < 20, `${n} tokens`);
  });

  it("gives count, errors and quantiles of the successful requests per tenant, tenants by name", () => {
    const records = [
      rec({ tenant: "b", ttftMs: 100 }),
      rec({ tenant: "a", ttftMs: 10 }),
      rec({ tenant: "a", ttftMs: 30 }),
      rec({ tenant: "a", error: "HTTP 503" }),
    ];
    const t = byTenant(records);
    assert.deepEqual(Object.keys(t), ["a", "b"]);
    assert.equal(t.a!.count, 3);
    assert.equal(t.a!.errors, 1);
    assert.equal(t.a!.ttft_ms.p50, 10);
    assert.equal(t.a!.ttft_ms.p99, 30);
    assert.equal(t.a!.e2e_ms.p90, 120);
    assert.equal(t.b!.ttft_ms.p90, 100);
  });

  it("lists the input-size buckets in size order and leaves empty ones out", () => {
    const records = [rec({ inputTokens: 9000 }), rec({ inputTokens: 300 }), rec({ inputTokens: 5000 })];
    assert.deepEqual(Object.keys(byInputSize(records)), ["<1024", "4096-8191", ">=8192"]);
  });

  it("splits by arrival phase for runs of several phases, and not for one", () => {
    const records = [
      rec({ atS: 1, tenant: "q" }),
      rec({ atS: 12, tenant: "noisy", inputTokens: 6000 }),
      rec({ atS: 12, tenant: "q" }),
      rec({ atS: 30, tenant: "q" }),
    ];
    const by = breakdownByPhase(records, PHASES)!;
    assert.deepEqual(Object.keys(by), ["before", "burst", "after"]);
    assert.deepEqual(Object.keys(by.burst!.by_tenant), ["noisy", "q"]);
    assert.deepEqual(Object.keys(by.burst!.by_input_size), ["<1024", "4096-8191"]);
    assert.equal(by.after!.by_tenant.q!.count, 1, "an arrival at the very end counts in the last phase");
    assert.equal(breakdownByPhase(records, [{ name: "steady", startS: 0, endS: 30 }]), null);
  });
});

describe("burst isolation", () => {
  it("compares the other tenants' TTFT P99 during the burst phase with the rest of the run", () => {
    const records = [
      ...[1, 2, 3].map((s) => rec({ atS: s, tenant: "q1", ttftMs: 100 })),
      ...[11, 12].map((s) => rec({ atS: s, tenant: "q2", ttftMs: 300 })),
      rec({ atS: 13, tenant: "noisy", ttftMs: 5000 }),
      ...[21, 22].map((s) => rec({ atS: s, tenant: "q1", ttftMs: 200 })),
    ];
    const b = burstIsolation(records, PHASES, { tenant: "noisy", phase: "burst" })!;
    assert.equal(b.quiet_during.count, 2);
    assert.equal(b.quiet_during.ttft_ms.p99, 300);
    assert.equal(b.quiet_without.count, 5);
    assert.equal(b.quiet_without.ttft_ms.p99, 200);
    assert.equal(b.p99_ratio, 1.5);
    assert.equal(b.quiet_before.count, 3);
    assert.equal(b.p99_ratio_before, 3, "before the burst alone: 300 against 100 ms");
  });

  it("is null without the phase, and has no ratio without requests on one side", () => {
    assert.equal(burstIsolation([], PHASES, { tenant: "n", phase: "storm" }), null);
    const b = burstIsolation([rec({ atS: 1, tenant: "q" })], PHASES, { tenant: "n", phase: "burst" })!;
    assert.equal(b.quiet_during.count, 0);
    assert.equal(b.p99_ratio, null);
  });
});
