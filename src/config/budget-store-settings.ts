// GatewayConfig `budgets`: where tenant budgets (InferenceBudget) are counted — `memory` (default, one
// process), `sqlite` (a ledger file that survives a restart) or `redis` (shared by every replica).

import type { IssueList } from "./errors.js";
import { ENV_NAME, type FieldReader } from "./fields.js";

export interface BudgetStoreSettings {
  readonly store: "memory" | "sqlite" | "redis";
  /** The SQLite file (`sqlite`); relative paths are from where the gateway runs. */
  readonly path: string | null;
  readonly redis: {
    /** `redis://host:6379`, from `url` or the variable `urlEnv` names. */
    readonly url: string | null;
    /** Key prefix; default `tg:b`. */
    readonly namespace: string;
    /** A concurrency slot's lease, renewed while its request runs; default 30000. */
    readonly leaseMs: number;
    /** A command slower than this counts as Redis unreachable; default 250. */
    readonly timeoutMs: number;
    /** Redis unreachable: `refuse` budgeted requests (default) or admit against a `local` share. */
    readonly unreachable: "refuse" | "local";
  };
}

export const DEFAULT_BUDGET_STORE: BudgetStoreSettings = Object.freeze({
  store: "memory",
  path: null,
  redis: Object.freeze({
    url: null,
    namespace: "tg:b",
    leaseMs: 30_000,
    timeoutMs: 250,
    unreachable: "refuse",
  }),
});

/** `GatewayConfig.spec.budgets`, defaults filled in. */
export function parseBudgetStore(
  spec: FieldReader,
  issues: IssueList,
  env: Readonly<Record<string, string | undefined>>,
): BudgetStoreSettings {
  const d = DEFAULT_BUDGET_STORE;
  const bs = spec.map("budgets");
  if (!bs) return d;
  const store = (bs.string("store", { oneOf: ["memory", "sqlite", "redis"] }) ?? d.store) as
    | "memory"
    | "sqlite"
    | "redis";
  const path = bs.string("path") ?? null;
  const r = bs.map("redis");
  const literal = r?.string("url") ?? null;
  const urlEnv =
    r?.string("urlEnv", { pattern: ENV_NAME, patternHint: "an environment variable name" }) ?? null;
  const fromEnv = urlEnv === null ? null : (env[urlEnv] ?? null);
  const redis = {
    url: literal ?? (fromEnv === "" ? null : fromEnv),
    namespace:
      r?.string("namespace", {
        pattern: /^[A-Za-z0-9:_-]{1,64}$/,
        patternHint: "letters, digits, ':', '_' and '-'",
      }) ?? d.redis.namespace,
    leaseMs: r?.int("leaseMs", { min: 1000, max: 3_600_000 }) ?? d.redis.leaseMs,
    timeoutMs: r?.int("timeoutMs", { min: 10, max: 60_000 }) ?? d.redis.timeoutMs,
    unreachable: (r?.string("unreachable", { oneOf: ["refuse", "local"] }) ?? d.redis.unreachable) as
      | "refuse"
      | "local",
  };
  r?.done();
  bs.done();
  if (store === "sqlite" && path === null) {
    issues.error(
      bs.path,
      'store "sqlite" needs a "path" (the ledger file, e.g. /var/lib/tokengate/budgets.db)',
    );
  }
  if (store === "redis" && redis.url === null) {
    issues.error(
      r?.path ?? bs.path,
      urlEnv !== null
        ? `store "redis": the variable ${urlEnv} (redis.urlEnv) is not set`
        : 'store "redis" needs redis.url (e.g. "redis://redis:6379") or redis.urlEnv',
    );
  }
  if (literal !== null && urlEnv !== null) issues.error(r!.path, 'set one of "url" and "urlEnv"');
  return { store, path, redis };
}
