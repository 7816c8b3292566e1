import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TimeWindow } from "./budget-types.js";
import {
  budgetDay,
  checkTimeZone,
  dayKey,
  formatWindow,
  insideWindows,
  isTimeZone,
  localMinutes,
  parseClock,
  parseTimeWindow,
  secondsUntilNextDay,
  secondsUntilOpen,
} from "./time-window.js";

const at = (iso: string) => new Date(iso);
const NY = "America/New_York";
const SH = "Asia/Shanghai";

function win(text: string): TimeWindow {
  const p = parseTimeWindow(text);
  assert.ok(p.ok, p.ok ? "" : p.reason);
  return p.window;
}

describe("parseTimeWindow", () => {
  it("reads windows, including ones crossing midnight and all day", () => {
    assert.deepEqual(win("20:00-08:30"), { startMinutes: 1200, endMinutes: 510 });
    assert.deepEqual(win("00:00-24:00"), { startMinutes: 0, endMinutes: 1440 });
    assert.deepEqual(win("09:15-17:45"), { startMinutes: 555, endMinutes: 1065 });
    assert.equal(formatWindow(win("20:00-08:30")), "20:00-08:30");
    assert.ok(Object.isFrozen(win("01:00-02:00")));
  });

  it("refuses malformed windows with the fix in the message", () => {
    for (const bad of ["20:00-8:30", "20:00", "24:00-08:00", "10:60-11:00", "25:00-26:00", "a-b", "1-2-3"]) {
      const p = parseTimeWindow(bad);
      assert.ok(!p.ok, bad);
      assert.equal(p.reason, `${JSON.stringify(bad)} is not a window: write "HH:MM-HH:MM"`);
    }
    for (const same of ["10:00-10:00", "00:00-00:00"]) {
      const p = parseTimeWindow(same);
      assert.ok(!p.ok);
      assert.match(p.reason, /starts and ends at the same time: write "00:00-24:00" for all day/);
    }
  });

  it("reads clock times; 24:00 only as an end", () => {
    assert.equal(parseClock("00:00"), 0);
    assert.equal(parseClock("23:59"), 1439);
    assert.equal(parseClock("24:00"), null);
    assert.equal(parseClock("24:00", true), 1440);
    assert.equal(parseClock("24:01", true), null);
    assert.equal(parseClock("7:00"), null);
  });
});

describe("time zones", () => {
  it("validates names with Intl", () => {
    assert.throws(() => checkTimeZone("Mars/Olympus_Mons"), RangeError);
    assert.equal(isTimeZone("Asia/Shanghai"), true);
    assert.equal(isTimeZone("UTC"), true);
    assert.equal(isTimeZone("Asia/Shangai"), false);
  });

  it("reads the zone's wall clock, DST included", () => {
    assert.equal(localMinutes(at("2026-12-01T00:00:00Z"), SH), 8 * 60);
    assert.equal(localMinutes(at("2026-12-01T16:30:59Z"), SH), 30);
    assert.equal(localMinutes(at("2026-12-01T00:00:00Z"), "UTC"), 0);
    // 2026-03-08: 02:00 EST jumps to 03:00 EDT at 07:00Z.
    assert.equal(localMinutes(at("2026-03-08T06:59:00Z"), NY), 60 + 59);
    assert.equal(localMinutes(at("2026-03-08T07:00:00Z"), NY), 3 * 60);
    // 2026-11-01: 02:00 EDT falls back to 01:00 EST at 06:00Z; 01:xx happens twice.
    assert.equal(localMinutes(at("2026-11-01T05:30:00Z"), NY), 90);
    assert.equal(localMinutes(at("2026-11-01T06:30:00Z"), NY), 90);
    assert.equal(localMinutes(at("2026-11-01T07:00:00Z"), NY), 120);
  });
});

describe("insideWindows", () => {
  const night = [win("20:00-08:30")];

  it("handles a window crossing midnight, start inclusive and end exclusive", () => {
    assert.equal(insideWindows(night, at("2026-12-01T12:00:00Z"), SH), true); // 20:00
    assert.equal(insideWindows(night, at("2026-12-01T16:00:00Z"), SH), true); // 00:00
    assert.equal(insideWindows(night, at("2026-12-02T00:29:59Z"), SH), true); // 08:29:59
    assert.equal(insideWindows(night, at("2026-12-02T00:30:00Z"), SH), false); // 08:30
    assert.equal(insideWindows(night, at("2026-12-01T11:59:59Z"), SH), false); // 19:59:59
  });

  it("allows always with no windows or all day, and any of several windows", () => {
    assert.equal(insideWindows([], at("2026-12-01T03:00:00Z"), SH), true);
    assert.equal(insideWindows([win("00:00-24:00")], at("2026-12-01T15:59:59Z"), SH), true);
    const two = [win("01:00-02:00"), win("13:00-14:00")];
    assert.equal(insideWindows(two, at("2026-12-01T13:30:00Z"), "UTC"), true);
    assert.equal(insideWindows(two, at("2026-12-01T12:30:00Z"), "UTC"), false);
  });
});

describe("secondsUntilOpen", () => {
  it("is 0 inside and the wait to the nearest opening outside", () => {
    const night = [win("20:00-08:30")];
    assert.equal(secondsUntilOpen(night, at("2026-12-01T13:00:00Z"), SH), 0);
    assert.equal(secondsUntilOpen(night, at("2026-12-02T00:30:00Z"), SH), 11.5 * 3600);
    assert.equal(secondsUntilOpen(night, at("2026-12-01T11:59:30Z"), SH), 30);
    assert.equal(secondsUntilOpen(night, at("2026-12-01T11:59:29.5Z"), SH), 31);
    const two = [win("13:00-14:00"), win("01:00-02:00")];
    assert.equal(secondsUntilOpen(two, at("2026-12-01T12:00:00Z"), "UTC"), 3600);
    assert.equal(secondsUntilOpen(two, at("2026-12-01T23:00:00Z"), "UTC"), 2 * 3600);
    assert.equal(secondsUntilOpen([], at("2026-12-01T23:00:00Z"), "UTC"), 0);
  });

  it("counts real seconds across the spring-forward jump", () => {
    const office = [win("09:00-17:00")];
    // 00:00 EST → 09:00 EDT is 8 real hours.
    assert.equal(secondsUntilOpen(office, at("2026-03-08T05:00:00Z"), NY), 8 * 3600);
    // A window starting inside the skipped hour opens at the jump (03:00 EDT).
    assert.equal(secondsUntilOpen([win("02:30-04:00")], at("2026-03-08T06:00:00Z"), NY), 3600);
    // A window entirely inside the skipped hour does not open that day.
    const skipped = [win("02:10-02:50")];
    assert.equal(secondsUntilOpen(skipped, at("2026-03-08T06:00:00Z"), NY), 24 * 3600 + 10 * 60);
  });

  it("counts real seconds across the fall-back repeat", () => {
    // 00:00 EDT → 09:00 EST is 10 real hours.
    assert.equal(secondsUntilOpen([win("09:00-17:00")], at("2026-11-01T04:00:00Z"), NY), 10 * 3600);
    // 01:45 EDT is outside 00:30-01:30; the clock falls back into it at 06:00Z (01:00 EST).
    assert.equal(secondsUntilOpen([win("00:30-01:30")], at("2026-11-01T05:45:00Z"), NY), 15 * 60);
  });
});

describe("budget days", () => {
  it("names the day by its local start date", () => {
    assert.equal(dayKey(at("2026-12-01T23:59:59Z"), "UTC", 0), "2026-12-01");
    assert.equal(dayKey(at("2026-11-30T15:59:59Z"), SH, 0), "2026-11-30");
    assert.equal(dayKey(at("2026-11-30T16:00:00Z"), SH, 0), "2026-12-01");
    assert.equal(secondsUntilNextDay(at("2026-11-30T15:00:00Z"), SH, 0), 3600);
  });

  it("starts days at dayStartsAt", () => {
    const six = 6 * 60;
    assert.equal(dayKey(at("2026-12-01T21:59:59Z"), SH, six), "2026-12-01"); // 12-02 05:59:59 local
    assert.equal(dayKey(at("2026-12-01T22:00:00Z"), SH, six), "2026-12-02");
    assert.equal(secondsUntilNextDay(at("2026-12-01T21:00:00Z"), SH, six), 3600);
    assert.equal(secondsUntilNextDay(at("2026-12-01T21:59:59.2Z"), SH, six), 1);
    const d = budgetDay(at("2026-12-02T03:00:00Z"), SH, six);
    assert.deepEqual(d, {
      key: "2026-12-02",
      startMs: Date.parse("2026-12-01T22:00:00Z"),
      endMs: Date.parse("2026-12-02T22:00:00Z"),
    });
  });

  it("has 23- and 25-hour days at DST changes", () => {
    assert.equal(secondsUntilNextDay(at("2026-03-08T05:00:00Z"), NY, 0), 23 * 3600);
    assert.equal(secondsUntilNextDay(at("2026-11-01T04:00:00Z"), NY, 0), 25 * 3600);
    assert.equal(dayKey(at("2026-03-09T03:59:59Z"), NY, 0), "2026-03-08");
    assert.equal(dayKey(at("2026-03-09T04:00:00Z"), NY, 0), "2026-03-09");
  });

  it("starts a day skipped by spring-forward at the jump", () => {
    const start = 2 * 60 + 30;
    assert.equal(dayKey(at("2026-03-08T06:59:59Z"), NY, start), "2026-03-07");
    assert.equal(dayKey(at("2026-03-08T07:00:00Z"), NY, start), "2026-03-08");
    assert.equal(secondsUntilNextDay(at("2026-03-08T06:00:00Z"), NY, start), 3600);
  });

  it("starts a day in the repeated hour once, at its first occurrence", () => {
    const start = 90; // 01:30 happens at 05:30Z (EDT) and again at 06:30Z (EST)
    assert.equal(dayKey(at("2026-11-01T05:29:59Z"), NY, start), "2026-10-31");
    assert.equal(dayKey(at("2026-11-01T05:30:00Z"), NY, start), "2026-11-01");
    // 01:15 EST reads earlier than 01:30, but the day already started.
    assert.equal(dayKey(at("2026-11-01T06:15:00Z"), NY, start), "2026-11-01");
    const d = budgetDay(at("2026-11-01T06:15:00Z"), NY, start);
    assert.equal(d.startMs, Date.parse("2026-11-01T05:30:00Z"));
    assert.equal(d.endMs, Date.parse("2026-11-02T06:30:00Z"));
  });
});
