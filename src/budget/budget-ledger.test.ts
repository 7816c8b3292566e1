import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type Admission, type BudgetStore, MemoryBudgetStore, type Reservation } from "./budget-ledger.js";
import type { BudgetConfig, BudgetRefusal, TenantBudget } from "./budget-types.js";
import { SqliteBudgetStore } from "./sqlite-budget-store.js";
import { parseTimeWindow } from "./time-window.js";

function tenant(name: string, t: Partial<TenantBudget> = {}): TenantBudget {
  return {
    name,
    dailyInputTokens: null,
    dailyOutputTokens: null,
    concurrentRequests: null,
    maxSingleInputTokens: null,
    allowedWindows: [],
    ...t,
  };
}

type Kind = "memory" | "sqlite";

/** Every store keeps the same contract; the tests run against each (SQLite in a file of its own, in memory). */
function storeOf(kind: Kind) {
  return (tenants: TenantBudget[], timeZone = "UTC", dayStartsAtMinutes = 0): BudgetStore => {
    const config: BudgetConfig = {
      timeZone,
      dayStartsAtMinutes,
      tenants: new Map(tenants.map((t) => [t.name, t])),
    };
    return kind === "memory" ? new MemoryBudgetStore(config) : new SqliteBudgetStore(config, ":memory:");
  };
}

const NOON = new Date("2026-12-01T12:00:00Z");

function admitted(a: Admission): Reservation {
  assert.ok(a.ok, a.ok ? "" : a.refusal.message);
  return a.reservation;
}

function refused(a: Admission): BudgetRefusal {
  assert.ok(!a.ok, "expected a refusal");
  return a.refusal;
}

const req = (tenantName: string, inputTokens: number, maxOutputTokens = 100, now = NOON) => ({
  tenant: tenantName,
  inputTokens,
  maxOutputTokens,
  now,
});

for (const name of ["memory", "sqlite"] as const) {
  const store = storeOf(name);
  describe(`${name} budget store: admission`, () => {
    it("refuses input above maxSingleInputTokens; waiting does not help", async () => {
      const s = store([tenant("t", { maxSingleInputTokens: 1000 })]);
      admitted(await s.admit(req("t", 1000)));
      const r = refused(await s.admit(req("t", 1001)));
      assert.deepEqual(
        { ...r, message: undefined },
        {
          code: "input_too_large",
          budget: "maxSingleInputTokens",
          used: 1001,
          limit: 1000,
          retryAfterSeconds: null,
          message: undefined,
        },
      );
      assert.match(
        r.message,
        /1001 input tokens are above tenant "t"'s maxSingleInputTokens of 1000: shorten/,
      );
      assert.equal((await s.usage("t", NOON)).inFlight, 1, "a refusal reserves nothing");
    });

    it("refuses outside the allowed windows, with the wait until the next one", async () => {
      const night = parseTimeWindow("20:00-08:30");
      assert.ok(night.ok);
      const s = store([tenant("t", { allowedWindows: [night.window] })], "Asia/Shanghai");
      // 12:00 in Shanghai: the window opens in 8 hours.
      const r = refused(await s.admit(req("t", 10, 100, new Date("2026-12-01T04:00:00Z"))));
      assert.equal(r.code, "outside_allowed_window");
      assert.equal(r.budget, "allowedWindows");
      assert.equal(r.used, null);
      assert.equal(r.limit, null);
      assert.equal(r.retryAfterSeconds, 8 * 3600);
      assert.match(
        r.message,
        /only during 20:00-08:30 \(Asia\/Shanghai\): retry when the next window opens in 28800 s/,
      );
      admitted(await s.admit(req("t", 10, 100, new Date("2026-12-01T12:00:00Z")))); // 20:00 local
    });

    it("checks input size, then the window, then concurrency, then the daily budgets", async () => {
      const closed = parseTimeWindow("00:00-01:00");
      assert.ok(closed.ok);
      const all = {
        maxSingleInputTokens: 10,
        allowedWindows: [closed.window],
        concurrentRequests: 1,
        dailyInputTokens: 5,
      };
      const s = store([tenant("a", all), tenant("b", { ...all, allowedWindows: [] })]);
      assert.equal(refused(await s.admit(req("a", 11))).code, "input_too_large");
      assert.equal(refused(await s.admit(req("a", 6))).code, "outside_allowed_window");
      admitted(await s.admit(req("b", 5)));
      assert.equal(refused(await s.admit(req("b", 6))).code, "concurrency_limit");
    });

    it("limits requests in flight and frees a slot on settle", async () => {
      const s = store([tenant("t", { concurrentRequests: 2 })]);
      const a = admitted(await s.admit(req("t", 1)));
      admitted(await s.admit(req("t", 1)));
      const r = refused(await s.admit(req("t", 1)));
      assert.deepEqual(
        [r.code, r.budget, r.used, r.limit, r.retryAfterSeconds],
        ["concurrency_limit", "concurrentRequests", 2, 2, 1],
      );
      assert.match(r.message, /2 requests in flight, its concurrentRequests limit: retry when one finishes/);
      await s.settle(a, { inputTokens: 1, outputTokens: 1 });
      admitted(await s.admit(req("t", 1)));
    });

    it("reserves input and max output against the daily budgets", async () => {
      const s = store([tenant("t", { dailyInputTokens: 1000, dailyOutputTokens: 1000 })]);
      const first = admitted(await s.admit(req("t", 600, 100)));
      // Blocked only by a reservation, which may settle lower: retry soon.
      let r = refused(await s.admit(req("t", 500, 100)));
      assert.deepEqual(
        [r.code, r.budget, r.used, r.limit, r.retryAfterSeconds],
        ["budget_exceeded", "dailyInputTokens", 600, 1000, 1],
      );
      assert.match(
        r.message,
        /has used 600 of its dailyInputTokens 1000 on 2026-12-01 \(600 reserved by requests in flight\)/,
      );
      await s.settle(first, { inputTokens: 300, outputTokens: 50 });
      assert.deepEqual(await s.usage("t", NOON), {
        day: "2026-12-01",
        inputTokens: 300,
        outputTokens: 50,
        reservedInput: 0,
        reservedOutput: 0,
        inFlight: 0,
      });
      await s.settle(admitted(await s.admit(req("t", 500, 100))), { inputTokens: 600, outputTokens: 10 });
      // Spent 900: only the next budget day helps (12 hours away).
      r = refused(await s.admit(req("t", 200)));
      assert.equal(r.used, 900);
      assert.equal(r.retryAfterSeconds, 12 * 3600);
      assert.match(r.message, /retry when the budget day 2026-12-01 ends in 43200 s, or send less input/);
      // More than the whole budget: never.
      assert.equal(refused(await s.admit(req("t", 1001))).retryAfterSeconds, null);
    });

    it("refuses output above the daily output budget, suggesting a lower max_tokens", async () => {
      const s = store([tenant("t", { dailyOutputTokens: 1000 })]);
      const a = admitted(await s.admit(req("t", 1, 800)));
      const r = refused(await s.admit(req("t", 1, 300)));
      assert.deepEqual([r.budget, r.used, r.limit], ["dailyOutputTokens", 800, 1000]);
      assert.match(r.message, /ask for fewer output tokens \(max_tokens\)/);
      // Unknown usage counts the whole reservation.
      await s.settle(a, { inputTokens: null, outputTokens: null });
      const u = await s.usage("t", NOON);
      assert.deepEqual([u.inputTokens, u.outputTokens, u.reservedOutput], [1, 800, 0]);
      admitted(await s.admit(req("t", 1, 200)));
    });

    it("admits a tenant without a budget, and still counts it", async () => {
      const s = store([]);
      const a = admitted(await s.admit(req("guest", 1e9, 1e6)));
      assert.equal((await s.usage("guest", NOON)).reservedInput, 1e9);
      await s.settle(a, { inputTokens: 5, outputTokens: 7 });
      const u = await s.usage("guest", NOON);
      assert.deepEqual([u.inputTokens, u.outputTokens, u.inFlight], [5, 7, 0]);
    });

    it("admits exactly the concurrency limit out of 50 simultaneous requests", async () => {
      const s = store([tenant("t", { concurrentRequests: 10 })]);
      const all = await Promise.all(Array.from({ length: 50 }, () => s.admit(req("t", 1))));
      assert.equal(all.filter((a) => a.ok).length, 10);
      assert.ok(all.filter((a) => !a.ok).every((a) => !a.ok && a.refusal.code === "concurrency_limit"));
      assert.equal((await s.usage("t", NOON)).inFlight, 10);
    });
  });

  describe(`${name} budget store: settlement`, () => {
    it("replaces the estimate by the actual usage, once however often it is settled", async () => {
      const s = store([tenant("t", { concurrentRequests: 5 })]);
      const a = admitted(await s.admit(req("t", 1000, 500)));
      admitted(await s.admit(req("t", 10, 10)));
      await Promise.all([
        s.settle(a, { inputTokens: 1200, outputTokens: 42 }),
        s.settle(a, { inputTokens: 1200, outputTokens: 42 }),
      ]);
      await s.settle(a, { inputTokens: null, outputTokens: null });
      assert.deepEqual(await s.usage("t", NOON), {
        day: "2026-12-01",
        inputTokens: 1200,
        outputTokens: 42,
        reservedInput: 10,
        reservedOutput: 10,
        inFlight: 1,
      });
      // A reservation this store never made is ignored.
      await s.settle({ ...a, id: "elsewhere-1" }, { inputTokens: 1, outputTokens: 1 });
      assert.equal((await s.usage("t", NOON)).inFlight, 1);
    });

    it("counts a reservation to the day it was made, and starts the next day fresh", async () => {
      const s = store([tenant("t", { dailyInputTokens: 1000 })], "Asia/Shanghai", 6 * 60);
      const lateDay1 = new Date("2026-12-01T21:59:00Z"); // 12-02 05:59 local: still budget day 12-01
      const day2 = new Date("2026-12-01T22:01:00Z");
      const a = admitted(await s.admit(req("t", 900, 1, lateDay1)));
      assert.equal(a.day, "2026-12-01");
      const r = refused(await s.admit(req("t", 200, 1, lateDay1)));
      assert.equal(r.retryAfterSeconds, 1, "the reservation may settle lower");
      await s.settle(a, { inputTokens: 950, outputTokens: 1 });
      assert.equal(refused(await s.admit(req("t", 200, 1, lateDay1))).retryAfterSeconds, 60);
      const b = admitted(await s.admit(req("t", 1000, 1, day2)));
      assert.equal(b.day, "2026-12-02");
      const u2 = await s.usage("t", day2);
      assert.deepEqual([u2.day, u2.inputTokens, u2.reservedInput, u2.inFlight], ["2026-12-02", 0, 1000, 1]);
      await s.settle(b, { inputTokens: 10, outputTokens: 1 });
      // The previous day's counters are kept.
      const u1 = await s.usage("t", lateDay1);
      assert.deepEqual([u1.day, u1.inputTokens], ["2026-12-01", 950]);
      assert.equal((await s.usage("t", day2)).inputTokens, 10);
    });

    it("settles a reservation from the previous day into that day, and frees its slot", async () => {
      const s = store([tenant("t", { concurrentRequests: 1, dailyInputTokens: 100 })]);
      const day1 = new Date("2026-12-01T23:59:00Z");
      const day2 = new Date("2026-12-02T00:01:00Z");
      const a = admitted(await s.admit(req("t", 60, 1, day1)));
      assert.equal(refused(await s.admit(req("t", 1, 1, day2))).code, "concurrency_limit");
      assert.deepEqual((await s.usage("t", day2)).reservedInput, 0, "yesterday's reservation is not today's");
      await s.settle(a, { inputTokens: 70, outputTokens: 1 });
      assert.equal((await s.usage("t", day2)).inputTokens, 0);
      admitted(await s.admit(req("t", 100, 1, day2)));
      assert.equal((await s.usage("t", day1)).inputTokens, 70);
    });

    it("keeps no counters of idle tenants past a day change", async () => {
      const s = store([]);
      // The SQLite store decides in a memory ledger of its own: its counters are that ledger's.
      const counters = name === "memory" ? (s as any) : (s as any).ledger;
      for (let i = 0; i < 100; i++) {
        await s.settle(admitted(await s.admit(req(`t${i}`, 1))), { inputTokens: 1, outputTokens: 1 });
      }
      const held = admitted(await s.admit(req("busy", 1)));
      assert.equal(counters.tenants.size, 101);
      await s.usage("busy", new Date("2026-12-02T12:00:00Z"));
      assert.equal(counters.tenants.size, 101, "yesterday's counters are kept");
      await s.usage("busy", new Date("2026-12-03T12:00:00Z"));
      assert.equal(counters.tenants.size, 1, "only the tenant with a request in flight is kept");
      await s.settle(held, { inputTokens: 2, outputTokens: 2 });
      assert.equal(counters.pending.size, 0);
      assert.equal((await s.usage("busy", new Date("2026-12-03T12:00:00Z"))).inFlight, 0);
    });

    it("refuses work after close", async () => {
      const s = store([]);
      await s.close();
      await assert.rejects(s.admit(req("t", 1)), /closed|not open/);
    });
  });
}
