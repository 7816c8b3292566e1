// Tenant budget accounting: admission reserves a request's estimated input, its max output and one
// concurrency slot; settlement frees the slot and replaces the reservation by what the engine reported.
// BudgetStore is the seam for shared stores (SQLite, Redis); MemoryBudgetStore serves one process.

import type { BudgetConfig, BudgetRefusal, TenantBudget } from "./budget-types.js";
import { type BudgetDay, budgetDay, formatWindow, insideWindows, secondsUntilOpen } from "./time-window.js";

export interface AdmissionRequest {
  readonly tenant: string;
  /** Estimated input tokens (the router's estimate; the engine's count comes at settlement). */
  readonly inputTokens: number;
  /** The most output the request may produce (its max_tokens after the pool's clamp). */
  readonly maxOutputTokens: number;
  readonly now: Date;
}

/** What an admitted request holds until it is settled. */
export interface Reservation {
  readonly id: string;
  readonly tenant: string;
  /** The budget day it was made on: its usage counts to that day, whenever it is settled. */
  readonly day: string;
  readonly inputTokens: number;
  readonly maxOutputTokens: number;
}

export type Admission =
  | { readonly ok: true; readonly reservation: Reservation }
  | { readonly ok: false; readonly refusal: BudgetRefusal };

/**
 * The engine's usage; null = unknown (no usage block, a cut-off stream), and then the reservation counts
 * as spent: the input estimate for input, the whole max output for output. Over-counting an unknown
 * response is the safe side of a budget.
 */
export interface Settlement {
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
}

/** A tenant's counters for the current budget day. */
export interface TenantUsage {
  readonly day: string;
  /** Settled usage. */
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Held by requests admitted this day and not yet settled. */
  readonly reservedInput: number;
  readonly reservedOutput: number;
  /** Requests admitted and not yet settled, whatever day they were admitted on. */
  readonly inFlight: number;
}

/** The store cannot answer and refuses rather than guess (Redis unreachable, `unreachable: refuse`). */
export class BudgetStoreUnavailable extends Error {}

export interface BudgetStore {
  /** Which store; `up`: whether it answers (false: Redis unreachable; null: not yet known). */
  readonly kind: "memory" | "sqlite" | "redis";
  readonly up: boolean | null;
  admit(r: AdmissionRequest): Promise<Admission>;
  /** Idempotent: settling a reservation again (or one this store never made) does nothing. */
  settle(res: Reservation, actual: Settlement): Promise<void>;
  usage(tenant: string, now: Date): Promise<TenantUsage>;
  /** A reloaded config: what was counted stays; new limits apply to the next admission. */
  setConfig(config: BudgetConfig): void;
  close(): Promise<void>;
}

interface DayCounters {
  readonly day: string;
  inputTokens: number;
  outputTokens: number;
  reservedInput: number;
  reservedOutput: number;
}

interface TenantState {
  inFlight: number;
  current: DayCounters;
  /** The day before `current`, kept for reservations made then and settled late. */
  previous: DayCounters | null;
}

const counters = (day: string): DayCounters => ({
  day,
  inputTokens: 0,
  outputTokens: 0,
  reservedInput: 0,
  reservedOutput: 0,
});

function count(v: number, what: string): number {
  if (!Number.isFinite(v) || v < 0) throw new RangeError(`${what} must be a non-negative number, got ${v}`);
  return Math.ceil(v);
}

/** Actual usage as counted: a missing, negative or non-finite number falls back to the reservation. */
function actualOr(v: number | null, reserved: number): number {
  return v === null || !Number.isFinite(v) || v < 0 ? reserved : Math.ceil(v);
}

/** In-process budget accounting; every operation is synchronous underneath, so admits never race. */
export class MemoryBudgetStore implements BudgetStore {
  readonly kind = "memory";
  readonly up = true;
  private readonly tenants = new Map<string, TenantState>();
  private readonly pending = new Map<string, Reservation>();
  private nextId = 1;
  private day: BudgetDay | null = null;
  /** The key of the day before `day`: counters of older days are dropped. */
  private previousDay = "";
  private closed = false;

  constructor(private config: BudgetConfig) {}

  /** A reloaded config: counters and reservations are kept; a new zone or day start takes effect now. */
  setConfig(config: BudgetConfig): void {
    this.config = config;
    this.day = null;
  }

  async admit(r: AdmissionRequest): Promise<Admission> {
    this.open();
    const input = count(r.inputTokens, "inputTokens");
    const output = count(r.maxOutputTokens, "maxOutputTokens");
    const day = this.today(r.now);
    const state = this.state(r.tenant, day.key);
    // A clock that went back past the kept days counts to the current one.
    const counts = this.countersFor(state, day.key) ?? state.current;
    const budget = this.config.tenants.get(r.tenant);
    const refusal = budget
      ? refusalFor(budget, state.inFlight, counts, day, input, output, r.now, this.config.timeZone)
      : null;
    if (refusal) return { ok: false, refusal };
    counts.reservedInput += input;
    counts.reservedOutput += output;
    state.inFlight++;
    const reservation: Reservation = Object.freeze({
      id: `mem-${this.nextId++}`,
      tenant: r.tenant,
      day: counts.day,
      inputTokens: input,
      maxOutputTokens: output,
    });
    this.pending.set(reservation.id, reservation);
    return { ok: true, reservation };
  }

  async settle(res: Reservation, actual: Settlement): Promise<void> {
    this.settleNow(res, actual);
  }

  /**
   * Settles at once; returns what was counted (null: settled already, or never made here). The SQLite
   * store writes that to its file.
   */
  settleNow(res: Reservation, actual: Settlement): { inputTokens: number; outputTokens: number } | null {
    const held = this.pending.get(res.id);
    if (!held) return null;
    this.pending.delete(res.id);
    const spent = {
      inputTokens: actualOr(actual.inputTokens, held.inputTokens),
      outputTokens: actualOr(actual.outputTokens, held.maxOutputTokens),
    };
    const state = this.tenants.get(held.tenant);
    if (!state) return spent;
    state.inFlight = Math.max(0, state.inFlight - 1);
    const counts = this.countersFor(state, held.day);
    if (!counts) return spent; // made on a day already dropped: only the slot is left to free
    counts.reservedInput = Math.max(0, counts.reservedInput - held.inputTokens);
    counts.reservedOutput = Math.max(0, counts.reservedOutput - held.maxOutputTokens);
    counts.inputTokens += spent.inputTokens;
    counts.outputTokens += spent.outputTokens;
    return spent;
  }

  /** Counts usage already spent on `day` (the SQLite store loads its file's counters at open). */
  seed(tenant: string, day: string, inputTokens: number, outputTokens: number, now: Date): void {
    const today = this.today(now);
    const state = this.state(tenant, today.key);
    const counts = this.countersFor(state, day);
    if (counts) {
      counts.inputTokens += inputTokens;
      counts.outputTokens += outputTokens;
    } else if (day === this.previousDay) {
      state.previous = { ...counters(day), inputTokens, outputTokens };
    }
  }

  async usage(tenant: string, now: Date): Promise<TenantUsage> {
    this.open();
    const day = this.today(now).key;
    const state = this.tenants.get(tenant);
    const c = (state && this.countersFor(state, day)) ?? counters(day);
    const { inputTokens, outputTokens, reservedInput, reservedOutput } = c;
    return { day, inputTokens, outputTokens, reservedInput, reservedOutput, inFlight: state?.inFlight ?? 0 };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.tenants.clear();
    this.pending.clear();
  }

  private open(): void {
    if (this.closed) throw new Error("budget store is closed");
  }

  /** The budget day at `now`, cached until it ends; a new day drops tenants idle since before yesterday. */
  private today(now: Date): BudgetDay {
    const t = now.getTime();
    const d = this.day;
    if (d && t >= d.startMs && t < d.endMs) return d;
    const { timeZone, dayStartsAtMinutes } = this.config;
    const next = budgetDay(now, timeZone, dayStartsAtMinutes);
    this.previousDay = budgetDay(new Date(next.startMs - 1), timeZone, dayStartsAtMinutes).key;
    if (d && next.key > d.key) {
      for (const [name, s] of this.tenants) {
        if (s.inFlight === 0 && s.current.day < this.previousDay) this.tenants.delete(name);
      }
    }
    this.day = next;
    return next;
  }

  private state(tenant: string, day: string): TenantState {
    let s = this.tenants.get(tenant);
    if (!s) {
      s = { inFlight: 0, current: counters(day), previous: null };
      this.tenants.set(tenant, s);
    } else if (s.current.day < day) {
      s.previous = s.current.day === this.previousDay ? s.current : null;
      s.current = counters(day);
    }
    return s;
  }

  /** The counters of `day`, if still kept (the current day and the one before). */
  private countersFor(s: TenantState, day: string): DayCounters | undefined {
    if (s.current.day === day) return s.current;
    return s.previous?.day === day ? s.previous : undefined;
  }
}

/**
 * Why `b` refuses a request of `input` estimated tokens and `output` max tokens, given the tenant's
 * requests in flight and its counters for `day`; null when it is admitted. Checked in this order:
 * input_too_large, outside_allowed_window, concurrency_limit, the daily budgets. Every store uses it.
 */
export function refusalFor(
  b: TenantBudget,
  inFlight: number,
  c: Readonly<Omit<DayCounters, "day">>,
  day: BudgetDay,
  input: number,
  output: number,
  now: Date,
  tz: string,
): BudgetRefusal | null {
  const who = `tenant "${b.name}"`;
  if (b.maxSingleInputTokens !== null && input > b.maxSingleInputTokens) {
    return {
      code: "input_too_large",
      budget: "maxSingleInputTokens",
      used: input,
      limit: b.maxSingleInputTokens,
      retryAfterSeconds: null,
      message: `the request's ${input} input tokens are above ${who}'s maxSingleInputTokens of ${b.maxSingleInputTokens}: shorten or split the input`,
    };
  }
  if (!insideWindows(b.allowedWindows, now, tz)) {
    const wait = secondsUntilOpen(b.allowedWindows, now, tz);
    const windows = b.allowedWindows.map(formatWindow).join(", ");
    return {
      code: "outside_allowed_window",
      budget: "allowedWindows",
      used: null,
      limit: null,
      retryAfterSeconds: wait,
      message: `${who} may send requests only during ${windows} (${tz}): retry when the next window opens in ${wait} s`,
    };
  }
  if (b.concurrentRequests !== null && inFlight >= b.concurrentRequests) {
    return {
      code: "concurrency_limit",
      budget: "concurrentRequests",
      used: inFlight,
      limit: b.concurrentRequests,
      retryAfterSeconds: 1,
      message: `${who} has ${inFlight} requests in flight, its concurrentRequests limit: retry when one finishes`,
    };
  }
  const untilNextDay = Math.max(1, Math.ceil((day.endMs - now.getTime()) / 1000));
  const daily = (
    budget: "dailyInputTokens" | "dailyOutputTokens",
    limit: number | null,
    spent: number,
    reserved: number,
    wanted: number,
    lower: string,
  ): BudgetRefusal | null => {
    if (limit === null || spent + reserved + wanted <= limit) return null;
    const used = spent + reserved;
    // Alone too big: waiting never helps. Blocked by reservations only: they often settle below their
    // estimate, so try again soon. Otherwise the budget day has to turn over.
    const retryAfterSeconds = wanted > limit ? null : spent + wanted <= limit ? 1 : untilNextDay;
    const advice =
      retryAfterSeconds === null
        ? `this request alone needs ${wanted}: ${lower}`
        : retryAfterSeconds === 1
          ? `this request needs ${wanted}: retry when requests in flight finish, or ${lower}`
          : `this request needs ${wanted}: retry when the budget day ${day.key} ends in ${untilNextDay} s, or ${lower}`;
    return {
      code: "budget_exceeded",
      budget,
      used,
      limit,
      retryAfterSeconds,
      message: `${who} has used ${used} of its ${budget} ${limit} on ${day.key} (${reserved} reserved by requests in flight); ${advice}`,
    };
  };
  return (
    daily("dailyInputTokens", b.dailyInputTokens, c.inputTokens, c.reservedInput, input, "send less input") ??
    daily(
      "dailyOutputTokens",
      b.dailyOutputTokens,
      c.outputTokens,
      c.reservedOutput,
      output,
      "ask for fewer output tokens (max_tokens)",
    )
  );
}
