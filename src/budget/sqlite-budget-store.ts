// Tenant budgets counted in an embedded SQLite file (better-sqlite3): the day's ledger survives a restart.
// One gateway process owns the file (several replicas share a budget through Redis instead). Each
// admission is one immediate transaction — read the tenant's counters and slots, check them with the
// same rules as every store (refusalFor), write the reservation — and each settlement another.
// Reservations still open when the file is opened belonged to a process that ended without settling
// them: their requests are gone, so they are settled as spent (the most they can have cost) and their
// slots freed.

import Database from "better-sqlite3";
import type {
  Admission,
  AdmissionRequest,
  BudgetStore,
  Reservation,
  Settlement,
  TenantUsage,
} from "./budget-ledger.js";
import { refusalFor } from "./budget-ledger.js";
import type { BudgetConfig } from "./budget-types.js";
import { type BudgetDay, budgetDay } from "./time-window.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS usage (
  tenant TEXT NOT NULL,
  day TEXT NOT NULL,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, day)
);
CREATE TABLE IF NOT EXISTS reservations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant TEXT NOT NULL,
  day TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS reservations_tenant ON reservations (tenant, day);
`;

/** Days of usage kept in the file (older rows are dropped when a new day starts). */
const KEEP_DAYS = 31;

interface Counts {
  input_tokens: number;
  output_tokens: number;
  reserved_input: number;
  reserved_output: number;
  in_flight: number;
}

export class SqliteBudgetStore implements BudgetStore {
  readonly kind = "sqlite";
  readonly up = true;
  private readonly db: Database.Database;
  private day: BudgetDay | null = null;
  private readonly counts: Database.Statement<[{ tenant: string; day: string }]>;
  private readonly reserve: Database.Statement<[string, string, number, number, string]>;
  private readonly held: Database.Statement<[number]>;
  private readonly drop: Database.Statement<[number]>;
  private readonly spend: Database.Statement<[string, string, number, number]>;
  private readonly admitTx: Database.Transaction<
    (r: AdmissionRequest, input: number, output: number) => Admission
  >;
  private readonly settleTx: Database.Transaction<(id: number, actual: Settlement) => void>;

  constructor(
    private config: BudgetConfig,
    path: string,
  ) {
    this.db = new Database(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = NORMAL");
    this.db.exec(SCHEMA);
    this.counts = this.db.prepare(`
      SELECT
        COALESCE((SELECT input_tokens FROM usage WHERE tenant = @tenant AND day = @day), 0) AS input_tokens,
        COALESCE((SELECT output_tokens FROM usage WHERE tenant = @tenant AND day = @day), 0) AS output_tokens,
        COALESCE(SUM(CASE WHEN day = @day THEN input_tokens END), 0) AS reserved_input,
        COALESCE(SUM(CASE WHEN day = @day THEN output_tokens END), 0) AS reserved_output,
        COUNT(*) AS in_flight
      FROM reservations WHERE tenant = @tenant`);
    this.reserve = this.db.prepare(
      "INSERT INTO reservations (tenant, day, input_tokens, output_tokens, created_at) VALUES (?, ?, ?, ?, ?)",
    );
    this.held = this.db.prepare(
      "SELECT tenant, day, input_tokens, output_tokens FROM reservations WHERE id = ?",
    );
    this.drop = this.db.prepare("DELETE FROM reservations WHERE id = ?");
    this.spend = this.db.prepare(`
      INSERT INTO usage (tenant, day, input_tokens, output_tokens) VALUES (?, ?, ?, ?)
      ON CONFLICT (tenant, day) DO UPDATE SET
        input_tokens = input_tokens + excluded.input_tokens,
        output_tokens = output_tokens + excluded.output_tokens`);
    this.admitTx = this.db.transaction((r: AdmissionRequest, input: number, output: number): Admission => {
      const day = this.today(r.now);
      const c = this.read(r.tenant, day.key);
      const budget = this.config.tenants.get(r.tenant);
      const counters = {
        inputTokens: c.input_tokens,
        outputTokens: c.output_tokens,
        reservedInput: c.reserved_input,
        reservedOutput: c.reserved_output,
      };
      const refusal = budget
        ? refusalFor(budget, c.in_flight, counters, day, input, output, r.now, this.config.timeZone)
        : null;
      if (refusal) return { ok: false, refusal };
      const info = this.reserve.run(r.tenant, day.key, input, output, r.now.toISOString());
      const reservation: Reservation = Object.freeze({
        id: `sqlite-${info.lastInsertRowid}`,
        tenant: r.tenant,
        day: day.key,
        inputTokens: input,
        maxOutputTokens: output,
      });
      return { ok: true, reservation };
    });
    this.settleTx = this.db.transaction((id: number, actual: Settlement) => {
      const row = this.held.get(id) as
        | { tenant: string; day: string; input_tokens: number; output_tokens: number }
        | undefined;
      if (!row) return; // settled already (or never made here): nothing to do
      this.drop.run(id);
      this.spend.run(
        row.tenant,
        row.day,
        countOr(actual.inputTokens, row.input_tokens),
        countOr(actual.outputTokens, row.output_tokens),
      );
    });
    this.settleOrphans();
  }

  /** A reloaded config: the ledger stays; new limits apply to the next admission. */
  setConfig(config: BudgetConfig): void {
    this.config = config;
    this.day = null;
  }

  async admit(r: AdmissionRequest): Promise<Admission> {
    return this.admitTx.immediate(
      r,
      whole(r.inputTokens, "inputTokens"),
      whole(r.maxOutputTokens, "maxOutputTokens"),
    );
  }

  async settle(res: Reservation, actual: Settlement): Promise<void> {
    if (!res.id.startsWith("sqlite-")) return;
    this.settleTx.immediate(Number(res.id.slice("sqlite-".length)), actual);
  }

  async usage(tenant: string, now: Date): Promise<TenantUsage> {
    const day = this.today(now).key;
    const c = this.read(tenant, day);
    return {
      day,
      inputTokens: c.input_tokens,
      outputTokens: c.output_tokens,
      reservedInput: c.reserved_input,
      reservedOutput: c.reserved_output,
      inFlight: c.in_flight,
    };
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  private read(tenant: string, day: string): Counts {
    return this.counts.get({ tenant, day }) as Counts;
  }

  private today(now: Date): BudgetDay {
    const t = now.getTime();
    const d = this.day;
    if (d && t >= d.startMs && t < d.endMs) return d;
    const next = budgetDay(now, this.config.timeZone, this.config.dayStartsAtMinutes);
    if (d && next.key > d.key) {
      const oldest = budgetDay(
        new Date(next.startMs - KEEP_DAYS * 86_400_000),
        this.config.timeZone,
        this.config.dayStartsAtMinutes,
      ).key;
      this.db.prepare("DELETE FROM usage WHERE day < ?").run(oldest);
    }
    this.day = next;
    return next;
  }

  /** Reservations a previous process left open: spent as reserved, slots freed. */
  private settleOrphans(): void {
    const ids = this.db.prepare("SELECT id FROM reservations").all() as { id: number }[];
    const spendAll = this.db.transaction(() => {
      for (const { id } of ids) this.settleTx(id, { inputTokens: null, outputTokens: null });
    });
    spendAll.immediate();
  }
}

function whole(v: number, what: string): number {
  if (!Number.isFinite(v) || v < 0) throw new RangeError(`${what} must be a non-negative number, got ${v}`);
  return Math.ceil(v);
}

function countOr(v: number | null, reserved: number): number {
  return v === null || !Number.isFinite(v) || v < 0 ? reserved : Math.ceil(v);
}
