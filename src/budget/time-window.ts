// Local wall-clock arithmetic for budgets: "HH:MM-HH:MM" windows, whether an instant is inside them, how
// long until one opens, and the budget day an instant belongs to. Every zone conversion goes through
// Intl.DateTimeFormat, so daylight-saving jumps are the zone's own.

import type { TimeWindow } from "./budget-types.js";

const MINUTE_MS = 60_000;
const DAY_MINUTES = 1440;
const DAY_MS = DAY_MINUTES * MINUTE_MS;
const CLOCK = /^(\d{2}):(\d{2})$/;

export const WINDOW_HINT = 'write "HH:MM-HH:MM"';

/** "08:30" → 510; null unless two-digit hours and minutes; "24:00" only when `allow24`. */
export function parseClock(text: string, allow24 = false): number | null {
  const m = CLOCK.exec(text);
  if (!m) return null;
  const h = Number(m[1]);
  const min = Number(m[2]);
  if (min > 59) return null;
  if (h < 24) return h * 60 + min;
  return allow24 && h === 24 && min === 0 ? DAY_MINUTES : null;
}

export type WindowParse = { ok: true; window: TimeWindow } | { ok: false; reason: string };

/** Parses "20:00-08:30" (crosses midnight) or "00:00-24:00" (all day); start == end is an error. */
export function parseTimeWindow(text: string): WindowParse {
  const parts = text.split("-");
  const start = parts.length === 2 ? parseClock(parts[0]!.trim()) : null;
  const end = parts.length === 2 ? parseClock(parts[1]!.trim(), true) : null;
  if (start === null || end === null) {
    return { ok: false, reason: `${JSON.stringify(text)} is not a window: ${WINDOW_HINT}` };
  }
  if (start === end) {
    return {
      ok: false,
      reason: `${JSON.stringify(text)} starts and ends at the same time: write "00:00-24:00" for all day`,
    };
  }
  return { ok: true, window: Object.freeze({ startMinutes: start, endMinutes: end }) };
}

/** 510 → "08:30". */
export function formatClock(minutes: number): string {
  const h = Math.floor(minutes / 60);
  return `${String(h).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;
}

export function formatWindow(w: TimeWindow): string {
  return `${formatClock(w.startMinutes)}-${formatClock(w.endMinutes)}`;
}

/** Throws RangeError unless `timeZone` is a zone Intl knows (IANA names, "UTC"). */
export function checkTimeZone(timeZone: string): void {
  new Intl.DateTimeFormat(undefined, { timeZone });
}

export function isTimeZone(timeZone: string): boolean {
  try {
    checkTimeZone(timeZone);
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    // Only validated zones get here, but a long-lived process may see many reloads.
    if (formatters.size >= 64) formatters.clear();
    formatters.set(timeZone, f);
  }
  return f;
}

/** The zone's wall clock at `ms`, as milliseconds since the epoch of that wall time read as UTC. */
function wallMs(ms: number, timeZone: string): number {
  const p: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(ms)) {
    if (part.type !== "literal") p[part.type] = Number(part.value);
  }
  const wholeSecond = Math.floor(ms / 1000) * 1000;
  const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
  return wall + (ms - wholeSecond);
}

/** Minutes since local midnight (0..1439) on the zone's wall clock. */
export function localMinutes(date: Date, timeZone: string): number {
  const wall = wallMs(date.getTime(), timeZone);
  return Math.floor((((wall % DAY_MS) + DAY_MS) % DAY_MS) / MINUTE_MS);
}

function inWindow(w: TimeWindow, minutes: number): boolean {
  return w.startMinutes < w.endMinutes
    ? minutes >= w.startMinutes && minutes < w.endMinutes
    : minutes >= w.startMinutes || minutes < w.endMinutes;
}

/** Whether `date` falls in one of the windows; an empty list always allows. */
export function insideWindows(windows: readonly TimeWindow[], date: Date, timeZone: string): boolean {
  if (windows.length === 0) return true;
  const m = localMinutes(date, timeZone);
  return windows.some((w) => inWindow(w, m));
}

/** A stretch of time in which the zone's UTC offset is constant. */
interface Segment {
  readonly from: number;
  readonly to: number;
  readonly offset: number;
}

const SCAN_STEP_MS = 6 * 3600_000;

/** [from, to) cut at each offset change (two changes less than 6 h apart would be missed; no zone has them). */
function segments(from: number, to: number, timeZone: string): Segment[] {
  const offsetAt = (t: number) => wallMs(t, timeZone) - t;
  const out: Segment[] = [];
  let start = from;
  let offset = offsetAt(from);
  for (let t = from; t < to; ) {
    const next = Math.min(t + SCAN_STEP_MS, to);
    if (offsetAt(next) !== offset) {
      // Zones change offset on a whole second: search seconds, so `hi` is the change itself.
      let lo = Math.floor(t / 1000);
      let hi = Math.ceil(next / 1000);
      while (hi - lo > 1) {
        const mid = lo + Math.floor((hi - lo) / 2);
        if (offsetAt(mid * 1000) === offset) lo = mid;
        else hi = mid;
      }
      hi *= 1000;
      out.push({ from: start, to: hi, offset });
      start = hi;
      offset = offsetAt(hi);
    }
    t = next;
  }
  out.push({ from: start, to, offset });
  return out;
}

/** The first instant whose wall clock reads `wall` or later: a time skipped by a DST jump maps to the jump. */
function instantOfWall(wall: number, timeZone: string): number {
  // UTC offsets lie within -12 h..+14 h, so the instant is within 15 h of the wall time read as UTC.
  for (const s of segments(wall - 15 * 3600_000, wall + 15 * 3600_000, timeZone)) {
    const t = wall - s.offset;
    if (t < s.from) return s.from;
    if (t < s.to) return t;
  }
  return wall;
}

/**
 * Seconds until one of the windows next opens (rounded up); 0 when `date` is inside one or the list is
 * empty. DST-correct: a window whose start the clock skips opens at the jump.
 */
export function secondsUntilOpen(windows: readonly TimeWindow[], date: Date, timeZone: string): number {
  if (insideWindows(windows, date, timeZone)) return 0;
  const now = date.getTime();
  for (const s of segments(now, now + 3 * DAY_MS, timeZone)) {
    const at = Math.max(s.from, now);
    const ofDay = ((((at + s.offset) % DAY_MS) + DAY_MS) % DAY_MS) / MINUTE_MS;
    if (windows.some((w) => inWindow(w, Math.floor(ofDay)))) return Math.ceil((at - now) / 1000);
    let wait = Number.POSITIVE_INFINITY;
    for (const w of windows) wait = Math.min(wait, (w.startMinutes - ofDay + DAY_MINUTES) % DAY_MINUTES);
    const opens = at + wait * MINUTE_MS;
    if (opens < s.to) return Math.ceil((opens - now) / 1000);
  }
  return Math.ceil(DAY_MS / 1000);
}

/** The budget day an instant falls in: its name and its bounds, [startMs, endMs). */
export interface BudgetDay {
  /** The local date the day starts on, e.g. "2026-12-01". */
  readonly key: string;
  readonly startMs: number;
  readonly endMs: number;
}

function isoDate(wall: number): string {
  return new Date(wall).toISOString().slice(0, 10);
}

/** Midnight (as wall ms) of the local date the wall time `wall` falls on. */
function wallMidnight(wall: number): number {
  return Math.floor(wall / DAY_MS) * DAY_MS;
}

/**
 * The budget day `date` is in: days start at `dayStartsAtMinutes` local time, at the first instant the
 * wall clock reads it (so a repeated hour at a DST change never makes a day start twice).
 */
export function budgetDay(date: Date, timeZone: string, dayStartsAtMinutes: number): BudgetDay {
  const now = date.getTime();
  const shift = dayStartsAtMinutes * MINUTE_MS;
  let midnight = wallMidnight(wallMs(now, timeZone) - shift);
  let startMs = instantOfWall(midnight + shift, timeZone);
  let endMs = instantOfWall(midnight + DAY_MS + shift, timeZone);
  // In a repeated hour the wall clock reads an earlier day than the one that already started.
  while (now >= endMs) {
    midnight += DAY_MS;
    startMs = endMs;
    endMs = instantOfWall(midnight + DAY_MS + shift, timeZone);
  }
  return { key: isoDate(midnight), startMs, endMs };
}

/** The budget day's name, e.g. "2026-12-01" (a day that starts at dayStartsAt local time). */
export function dayKey(date: Date, timeZone: string, dayStartsAtMinutes: number): string {
  return budgetDay(date, timeZone, dayStartsAtMinutes).key;
}

/** Seconds (rounded up, at least 1) until the next budget day starts. */
export function secondsUntilNextDay(date: Date, timeZone: string, dayStartsAtMinutes: number): number {
  const day = budgetDay(date, timeZone, dayStartsAtMinutes);
  return Math.max(1, Math.ceil((day.endMs - date.getTime()) / 1000));
}
