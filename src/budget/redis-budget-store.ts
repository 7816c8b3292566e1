// Tenant budgets shared by several gateway replicas through Redis (node-redis): each admission and each
// settlement is one server-side script (redis-scripts.ts), so replicas together never admit past a
// limit. A reservation's concurrency slot is a lease the replica renews while the request runs; a replica
// that dies stops renewing, and the next admission for that tenant frees its slots (their tokens counted
// as spent). The checks that need no shared state (single-input size, windows, a request bigger than a
// whole daily limit) run locally first, with the same rule as every store (refusalFor).
//
// Redis unreachable (a command fails or takes longer than `timeoutMs`): `unreachable: refuse` refuses
// budgeted tenants (BudgetStoreUnavailable → 503 budget_store_unavailable); `local` admits against a local
// share of each limit — the limit divided by the replicas seen in the last heartbeats. Either way the
// store says so (`up`, and the events budget.store-down / budget.store-up); settlements that could not be
// sent are sent again once Redis answers.

import { randomUUID } from "node:crypto";
import type { createClient } from "redis";
import { loadRedis } from "../redis/load-redis.js";
import {
  type Admission,
  type AdmissionRequest,
  type BudgetStore,
  BudgetStoreUnavailable,
  MemoryBudgetStore,
  type Reservation,
  refusalFor,
  type Settlement,
  type TenantUsage,
} from "./budget-ledger.js";
import type { BudgetConfig, TenantBudget } from "./budget-types.js";
import { ADMIT_SCRIPT, SETTLE_SCRIPT, tenantPrefix } from "./redis-scripts.js";
import { budgetDay } from "./time-window.js";

export interface RedisStoreOptions {
  readonly url: string;
  /** Key prefix; default `tg:b`. */
  readonly namespace: string;
  /** A slot's lease, renewed every third of it while its request runs. */
  readonly leaseMs: number;
  readonly unreachable: "refuse" | "local";
  /** A command slower than this counts as Redis unreachable. */
  readonly timeoutMs: number;
  readonly onEvent?: (event: string, fields: Record<string, unknown>) => void;
}

type Client = ReturnType<typeof createClient>;

const ZERO = { inputTokens: 0, outputTokens: 0, reservedInput: 0, reservedOutput: 0 };
/** Day counters live two days past their day (a late settlement still finds them). */
const DAY_TTL_S = 3 * 86_400;

export class RedisBudgetStore implements BudgetStore {
  readonly kind = "redis";
  private readonly client: Client;
  private readonly replicaId = randomUUID();
  private readonly shas = new Map<string, string>();
  /** Reservations of this replica in Redis, renewed until settled. */
  private readonly held = new Map<string, Reservation>();
  /** Settlements Redis did not take (it was down): sent again when it answers. */
  private readonly unsent: { res: Reservation; actual: Settlement }[] = [];
  private local: MemoryBudgetStore | null = null;
  private replicasSeen = 1;
  private renewTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Whether Redis answers; null until the first answer or failure. */
  up: boolean | null = null;

  constructor(
    private config: BudgetConfig,
    private readonly opts: RedisStoreOptions,
  ) {
    this.client = loadRedis().createClient({
      url: opts.url,
      disableOfflineQueue: true,
      socket: { connectTimeout: 1000, reconnectStrategy: (n) => Math.min(100 * (n + 1), 1000) },
    });
    this.client.on("error", () => this.markDown("error"));
    this.client.on("ready", () => void this.heartbeat());
    this.client.connect().catch(() => this.markDown("connect"));
    this.renewTimer = setInterval(() => void this.heartbeat(), Math.max(50, Math.floor(opts.leaseMs / 3)));
    this.renewTimer.unref();
  }

  setConfig(config: BudgetConfig): void {
    this.config = config;
    this.local?.setConfig(this.share(config));
  }

  async admit(r: AdmissionRequest): Promise<Admission> {
    if (this.closed) throw new Error("budget store is closed");
    const input = Math.ceil(r.inputTokens);
    const output = Math.ceil(r.maxOutputTokens);
    const budget = this.config.tenants.get(r.tenant) ?? null;
    const day = budgetDay(r.now, this.config.timeZone, this.config.dayStartsAtMinutes);
    if (budget) {
      const alone = refusalFor(budget, 0, ZERO, day, input, output, r.now, this.config.timeZone);
      if (alone) return { ok: false, refusal: alone };
    }
    if (!this.up) return this.admitLocally(r);
    const id = randomUUID();
    const p = tenantPrefix(this.opts.namespace, r.tenant);
    let reply: unknown;
    try {
      reply = await this.run(
        ADMIT_SCRIPT,
        [`${p}slots`, `${p}day:${day.key}`],
        [
          r.now.getTime(),
          this.opts.leaseMs,
          id,
          input,
          output,
          limit(budget?.concurrentRequests),
          limit(budget?.dailyInputTokens),
          limit(budget?.dailyOutputTokens),
          day.key,
          `${p}res:`,
          `${p}day:`,
          DAY_TTL_S,
        ],
      );
    } catch {
      this.markDown("admit");
      return this.admitLocally(r);
    }
    const v = (reply as (number | string)[]).map(Number);
    if (v[0] === 1) {
      const reservation: Reservation = Object.freeze({
        id: `redis-${id}`,
        tenant: r.tenant,
        day: day.key,
        inputTokens: input,
        maxOutputTokens: output,
      });
      this.held.set(reservation.id, reservation);
      return { ok: true, reservation };
    }
    const [, inFlight = 0, ci = 0, co = 0, ri = 0, ro = 0] = v;
    const counters = { inputTokens: ci, outputTokens: co, reservedInput: ri, reservedOutput: ro };
    const refusal = refusalFor(budget!, inFlight, counters, day, input, output, r.now, this.config.timeZone);
    return { ok: false, refusal: refusal ?? concurrencyRefusal(budget!, inFlight) };
  }

  async settle(res: Reservation, actual: Settlement): Promise<void> {
    if (res.id.startsWith("mem-")) return this.local?.settle(res, actual);
    if (!this.held.delete(res.id)) return;
    if (!(await this.sendSettlement(res, actual))) this.unsent.push({ res, actual });
  }

  async usage(tenant: string, now: Date): Promise<TenantUsage> {
    const day = budgetDay(now, this.config.timeZone, this.config.dayStartsAtMinutes).key;
    const p = tenantPrefix(this.opts.namespace, tenant);
    const [c, live] = await this.timed(
      Promise.all([
        this.client.hmGet(`${p}day:${day}`, ["in", "out", "rin", "rout"]),
        this.client.zCount(`${p}slots`, now.getTime(), "+inf"),
      ]),
    );
    const n = (x: unknown) => Number(x ?? 0);
    return {
      day,
      inputTokens: n(c[0]),
      outputTokens: n(c[1]),
      reservedInput: n(c[2]),
      reservedOutput: n(c[3]),
      inFlight: live,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
    try {
      if (this.up) await this.flushUnsent();
      await this.client.close();
    } catch {
      this.client.destroy();
    }
  }

  private async sendSettlement(res: Reservation, actual: Settlement): Promise<boolean> {
    const p = tenantPrefix(this.opts.namespace, res.tenant);
    const id = res.id.slice("redis-".length);
    const known = (x: number | null) => (x === null || !Number.isFinite(x) || x < 0 ? -1 : Math.ceil(x));
    try {
      await this.run(
        SETTLE_SCRIPT,
        [`${p}slots`, `${p}res:${id}`],
        [id, known(actual.inputTokens), known(actual.outputTokens), `${p}day:`],
      );
      return true;
    } catch {
      this.markDown("settle");
      return false;
    }
  }

  /** Renews this replica's leases and its heartbeat; counts the replicas seen; flushes settlements. */
  private async heartbeat(): Promise<void> {
    if (this.closed || !this.client.isReady) return;
    const now = Date.now();
    const every = Math.max(50, Math.floor(this.opts.leaseMs / 3));
    const replicas = `${this.opts.namespace}:replicas`;
    try {
      const m = this.client.multi();
      for (const r of this.held.values()) {
        const p = tenantPrefix(this.opts.namespace, r.tenant);
        m.zAdd(
          `${p}slots`,
          { score: now + this.opts.leaseMs, value: r.id.slice("redis-".length) },
          { XX: true },
        );
      }
      m.zAdd(replicas, { score: now, value: this.replicaId });
      m.zRemRangeByScore(replicas, "-inf", now - 3 * every);
      m.zCard(replicas);
      const out = await this.timed(m.exec());
      this.replicasSeen = Math.max(1, Number(out[out.length - 1] ?? 1));
      this.markUp();
      await this.flushUnsent();
    } catch {
      this.markDown("heartbeat");
    }
  }

  private async flushUnsent(): Promise<void> {
    while (this.unsent.length > 0) {
      const next = this.unsent[0]!;
      if (!(await this.sendSettlement(next.res, next.actual))) return;
      this.unsent.shift();
    }
  }

  private async admitLocally(r: AdmissionRequest): Promise<Admission> {
    if (this.opts.unreachable === "refuse") {
      throw new BudgetStoreUnavailable(
        "the budget store (Redis) is unreachable: budgeted requests are refused",
      );
    }
    this.local ??= new MemoryBudgetStore(this.share(this.config));
    return this.local.admit(r);
  }

  /** Each limit divided by the replicas last seen: together they stay near the limit while Redis is away. */
  private share(config: BudgetConfig): BudgetConfig {
    const n = this.replicasSeen;
    const part = (v: number | null) => (v === null ? null : Math.max(1, Math.floor(v / n)));
    const tenants = new Map<string, TenantBudget>();
    for (const [name, t] of config.tenants) {
      tenants.set(name, {
        ...t,
        dailyInputTokens: part(t.dailyInputTokens),
        dailyOutputTokens: part(t.dailyOutputTokens),
        concurrentRequests: part(t.concurrentRequests),
      });
    }
    return { ...config, tenants };
  }

  private markDown(why: string): void {
    if (this.up === false) return;
    this.up = false;
    this.opts.onEvent?.("budget.store-down", {
      store: "redis",
      why,
      mode: this.opts.unreachable,
      replicas_seen: this.replicasSeen,
    });
  }

  private markUp(): void {
    if (this.up === true) return;
    this.up = true;
    // Local shares end when Redis is back; what they admitted settles locally as its requests end.
    this.opts.onEvent?.("budget.store-up", { store: "redis", replicas_seen: this.replicasSeen });
  }

  /** Resolves once Redis has answered a heartbeat (true), or after `timeoutMs` (false). */
  async ready(timeoutMs: number): Promise<boolean> {
    for (const until = Date.now() + timeoutMs; Date.now() < until; ) {
      if (this.up === true) return true;
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.up === true;
  }

  /** EVALSHA, loading the script on first use or after a Redis restart (NOSCRIPT). */
  private async run(script: string, keys: string[], args: (string | number)[]): Promise<unknown> {
    const argv = [String(keys.length), ...keys, ...args.map(String)];
    let sha = this.shas.get(script);
    if (sha === undefined) {
      sha = String(await this.timed(this.client.scriptLoad(script)));
      this.shas.set(script, sha);
    }
    try {
      return await this.timed(this.client.sendCommand(["EVALSHA", sha, ...argv]));
    } catch (err) {
      if (!String((err as Error).message).includes("NOSCRIPT")) throw err;
      this.shas.delete(script);
      return this.timed(this.client.sendCommand(["EVAL", script, ...argv]));
    }
  }

  private timed<T>(p: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`redis: no answer within ${this.opts.timeoutMs} ms`)),
        this.opts.timeoutMs,
      );
    });
    return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
  }
}

function limit(v: number | null | undefined): number {
  return v === null || v === undefined ? -1 : v;
}

function concurrencyRefusal(b: TenantBudget, inFlight: number) {
  return {
    code: "concurrency_limit" as const,
    budget: "concurrentRequests" as const,
    used: inFlight,
    limit: b.concurrentRequests,
    retryAfterSeconds: 1,
    message: `tenant "${b.name}" is at its limits (shared by every gateway replica): retry shortly`,
  };
}
