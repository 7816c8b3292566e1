// Tenant budgets with a ledger in an embedded SQLite file (node:sqlite): the day's use survives a
// restart. One gateway process owns the file (replicas share a budget through Redis instead), so the
// decisions are made in memory, by the same ledger as the memory store, and the file follows: every
// reservation made and every settlement is queued and written in one transaction every `flushMs`
// (50 ms) and at close. A crash loses at most the last interval's changes.
//
// At open, the file's counters of the current and the previous budget day are loaded, and reservations
// still open — a process ended without settling them, their requests are gone — are settled as spent
// (the most they can have cost).

import { SqliteFile } from "../sqlite/sqlite-file.js";
import {
  type Admission,
  type AdmissionRequest,
  type BudgetStore,
  MemoryBudgetStore,
  type Reservation,
  type Settlement,
  type TenantUsage,
} from "./budget-ledger.js";
import type { BudgetConfig } from "./budget-types.js";
import { budgetDay } from "./time-window.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS usage (
  tenant TEXT NOT NULL,
  day TEXT NOT NULL,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, day)
);
CREATE TABLE IF NOT EXISTS reservations (
  rid TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  day TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  created_at TEXT NOT NULL
);
`;

/** Days of usage kept in the file. */
const KEEP_DAYS = 31;

type Op =
  | { readonly kind: "reserve"; readonly r: Reservation; readonly at: string }
  | { readonly kind: "settle"; readonly r: Reservation; readonly input: number; readonly output: number };

export class SqliteBudgetStore implements BudgetStore {
  readonly kind = "sqlite";
  readonly up = true;
  private readonly db: SqliteFile;
  private readonly ledger: MemoryBudgetStore;
  private ops: Op[] = [];
  /** Writes queued ops; called inside a transaction. */
  private readonly write: (ops: readonly Op[]) => void;
  private readonly timer: NodeJS.Timeout;
  private lastPrune = "";

  constructor(
    private config: BudgetConfig,
    path: string,
    flushMs = 50,
  ) {
    this.db = SqliteFile.open(path, { synchronous: "NORMAL" });
    this.db.exec(SCHEMA);
    const reserve = this.db.prepare(
      "INSERT OR IGNORE INTO reservations (rid, tenant, day, input_tokens, output_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    );
    const drop = this.db.prepare("DELETE FROM reservations WHERE rid = ?");
    const spend = this.db.prepare(`
      INSERT INTO usage (tenant, day, input_tokens, output_tokens) VALUES (?, ?, ?, ?)
      ON CONFLICT (tenant, day) DO UPDATE SET
        input_tokens = input_tokens + excluded.input_tokens,
        output_tokens = output_tokens + excluded.output_tokens`);
    this.write = (ops) => {
      // A reservation made and settled in the same interval never needs its row; settlements of one
      // tenant and day add up to one row update. A short request then costs the file almost nothing.
      const settledNow = new Set<string>();
      const reservedNow = new Set<string>();
      for (const op of ops) (op.kind === "settle" ? settledNow : reservedNow).add(op.r.id);
      const spent = new Map<string, { tenant: string; day: string; input: number; output: number }>();
      for (const op of ops) {
        const r = op.r;
        if (op.kind === "reserve") {
          if (!settledNow.has(r.id))
            reserve.run(r.id, r.tenant, r.day, r.inputTokens, r.maxOutputTokens, op.at);
          continue;
        }
        if (!reservedNow.has(r.id)) drop.run(r.id);
        const key = `${r.tenant}\u0000${r.day}`;
        const sum = spent.get(key) ?? { tenant: r.tenant, day: r.day, input: 0, output: 0 };
        sum.input += op.input;
        sum.output += op.output;
        spent.set(key, sum);
      }
      for (const x of spent.values()) spend.run(x.tenant, x.day, x.input, x.output);
    };
    this.ledger = new MemoryBudgetStore(config);
    this.load(new Date());
    this.timer = setInterval(() => this.flush(), flushMs);
    this.timer.unref();
  }

  setConfig(config: BudgetConfig): void {
    this.config = config;
    this.ledger.setConfig(config);
  }

  async admit(r: AdmissionRequest): Promise<Admission> {
    const a = await this.ledger.admit(r);
    if (a.ok) this.ops.push({ kind: "reserve", r: a.reservation, at: r.now.toISOString() });
    return a;
  }

  async settle(res: Reservation, actual: Settlement): Promise<void> {
    const spent = this.ledger.settleNow(res, actual);
    if (spent)
      this.ops.push({ kind: "settle", r: res, input: spent.inputTokens, output: spent.outputTokens });
  }

  usage(tenant: string, now: Date): Promise<TenantUsage> {
    return this.ledger.usage(tenant, now);
  }

  /** Writes what is queued, in one transaction. */
  flush(): void {
    if (this.ops.length === 0 || !this.db.isOpen) return;
    const ops = this.ops;
    this.ops = [];
    this.db.transaction(() => this.write(ops));
    this.prune();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    if (!this.db.isOpen) return;
    this.flush();
    this.db.close();
    await this.ledger.close();
  }

  /** The file's counters into the ledger; reservations left open settled as spent. */
  private load(now: Date): void {
    const open = this.db
      .prepare("SELECT rid, tenant, day, input_tokens, output_tokens FROM reservations")
      .all() as {
      rid: string;
      tenant: string;
      day: string;
      input_tokens: number;
      output_tokens: number;
    }[];
    const spend = this.db.prepare(`
      INSERT INTO usage (tenant, day, input_tokens, output_tokens) VALUES (?, ?, ?, ?)
      ON CONFLICT (tenant, day) DO UPDATE SET
        input_tokens = input_tokens + excluded.input_tokens,
        output_tokens = output_tokens + excluded.output_tokens`);
    this.db.transaction(() => {
      for (const r of open) spend.run(r.tenant, r.day, r.input_tokens, r.output_tokens);
      this.db.prepare("DELETE FROM reservations").run();
    });
    const { timeZone, dayStartsAtMinutes } = this.config;
    const today = budgetDay(now, timeZone, dayStartsAtMinutes);
    const yesterday = budgetDay(new Date(today.startMs - 1), timeZone, dayStartsAtMinutes);
    const rows = this.db
      .prepare("SELECT tenant, day, input_tokens, output_tokens FROM usage WHERE day IN (?, ?) ORDER BY day")
      .all(yesterday.key, today.key) as {
      tenant: string;
      day: string;
      input_tokens: number;
      output_tokens: number;
    }[];
    for (const r of rows) this.ledger.seed(r.tenant, r.day, r.input_tokens, r.output_tokens, now);
  }

  /** Once a day: usage older than KEEP_DAYS leaves the file. */
  private prune(): void {
    const now = new Date();
    const { timeZone, dayStartsAtMinutes } = this.config;
    const today = budgetDay(now, timeZone, dayStartsAtMinutes);
    if (today.key === this.lastPrune) return;
    this.lastPrune = today.key;
    const oldest = budgetDay(
      new Date(today.startMs - KEEP_DAYS * 86_400_000),
      timeZone,
      dayStartsAtMinutes,
    ).key;
    this.db.prepare("DELETE FROM usage WHERE day < ?").run(oldest);
  }
}
