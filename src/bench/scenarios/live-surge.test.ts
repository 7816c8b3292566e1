import assert from "node:assert/strict";
import { test } from "node:test";
import { liveSurge as s } from "./live-surge.js";
import { phaseAt } from "./shipped.js";

const full = s.generate({ seed: 3, quick: false });
const phases = s.phases({ seed: 3, quick: false });

test("batch alone, then a surge of long live summaries, then usual live traffic; batch throughout", () => {
  assert.deepEqual(
    phases.map((p) => p.name),
    ["batch-only", "live-surge", "recovery"],
  );
  const [batchOnly, surge, recovery] = phases;
  const live = full.filter((r) => r.request_class === "interactive");
  assert.ok(
    !live.some((r) => phaseAt(phases, r.t_ms) === batchOnly),
    "no live traffic while batch runs alone",
  );
  const inSurge = live.filter((r) => phaseAt(phases, r.t_ms) === surge);
  const after = live.filter((r) => phaseAt(phases, r.t_ms) === recovery);
  const rate = (n: number, p: typeof surge) => n / (p!.endS - p!.startS);
  assert.ok(Math.abs(rate(inSurge.length, surge) - 34) < 4, `${inSurge.length} surge requests`);
  assert.ok(Math.abs(rate(after.length, recovery) - 8) < 1.5, `${after.length} after the surge`);
  assert.ok(inSurge.every((r) => r.max_tokens === 200 && r.stream && (r.input_tokens ?? 0) >= 3800));
  const batch = full.filter((r) => r.request_class === "batch");
  for (const p of phases)
    assert.ok(
      batch.some((r) => phaseAt(phases, r.t_ms) === p),
      `batch in ${p.name}`,
    );
  assert.ok(batch.every((r) => !r.stream && r.max_tokens === 1800 && r.tenant === "quality-job"));
});

test("the same seed gives the same trace; quick is short", () => {
  assert.deepEqual(s.generate({ seed: 3, quick: false }), full);
  const quick = s.generate({ seed: 3, quick: true });
  assert.ok(quick.at(-1)!.t_ms < 30_000);
  assert.ok(quick.filter((r) => r.request_class === "batch").every((r) => r.max_tokens === 150));
});
