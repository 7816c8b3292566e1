import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { BudgetConfig } from "./budget-types.js";
import { SqliteBudgetStore } from "./sqlite-budget-store.js";

const CONFIG: BudgetConfig = {
  timeZone: "UTC",
  dayStartsAtMinutes: 0,
  tenants: new Map([
    [
      "t",
      {
        name: "t",
        dailyInputTokens: 1000,
        dailyOutputTokens: null,
        concurrentRequests: 2,
        maxSingleInputTokens: null,
        allowedWindows: [],
      },
    ],
  ]),
};
// Now, not a fixed date: a store loads the current and the previous budget day of its file at open.
const NOON = new Date();

describe("SQLite budget store", () => {
  const dir = mkdtempSync(join(tmpdir(), "tokengate-budget-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps the day's ledger across a restart, and settles what a dead process left open as spent", async () => {
    const file = join(dir, "budgets.db");
    const first = new SqliteBudgetStore(CONFIG, file);
    const a = await first.admit({ tenant: "t", inputTokens: 300, maxOutputTokens: 50, now: NOON });
    assert.ok(a.ok);
    await first.settle(a.reservation, { inputTokens: 280, outputTokens: 20 });
    // Open when the process ends: its request died with it.
    const open = await first.admit({ tenant: "t", inputTokens: 400, maxOutputTokens: 50, now: NOON });
    assert.ok(open.ok);
    assert.equal((await first.usage("t", NOON)).inFlight, 1);
    await first.close();

    const second = new SqliteBudgetStore(CONFIG, file);
    const u = await second.usage("t", NOON);
    assert.deepEqual(
      [u.inputTokens, u.outputTokens, u.reservedInput, u.inFlight],
      [680, 70, 0, 0],
      "settled usage kept; the orphan counted as reserved and its slot freed",
    );
    const refused = await second.admit({ tenant: "t", inputTokens: 400, maxOutputTokens: 1, now: NOON });
    assert.ok(!refused.ok);
    assert.equal(refused.refusal.code, "budget_exceeded");
    assert.equal(refused.refusal.used, 680);
    // The late settlement of the orphan's reservation (it was settled at open) does nothing.
    await second.settle(open.reservation, { inputTokens: 1, outputTokens: 1 });
    assert.equal((await second.usage("t", NOON)).inputTokens, 680);
    await second.close();
  });
});
