// Validates InferenceBudget documents (seed 004's tenant budgets) and merges them into one BudgetConfig.
//
//   spec:
//     timeZone: Asia/Shanghai      # windows and the day's start are in this zone; default UTC
//     dayStartsAt: "00:00"         # local time the daily counters reset
//     tenants:
//       - { name: support-basic, dailyInputTokens: 120000000, dailyOutputTokens: 18000000,
//           concurrentRequests: 80, maxSingleInputTokens: 12000, allowedWindows: ["20:00-08:30"] }

import { deepFreeze } from "../config/deep-freeze.js";
import type { Envelope } from "../config/envelope.js";
import { didYouMean, type IssueList, type PathSegment } from "../config/errors.js";
import { FieldReader } from "../config/fields.js";
import type { BudgetConfig, BudgetDocument, TenantBudget, TimeWindow } from "./budget-types.js";
import { formatClock, isTimeZone, parseClock, parseTimeWindow } from "./time-window.js";

export const DEFAULT_TIME_ZONE = "UTC";

/** Tenant names arrive in a request header and become metric labels: keep them short and plain. */
const TENANT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const TENANT_HINT = "use letters, digits, '.', '_', ':' and '-', starting with a letter or digit";

const LIMITS = [
  "dailyInputTokens",
  "dailyOutputTokens",
  "concurrentRequests",
  "maxSingleInputTokens",
] as const;

/** A validated document plus where each tenant sits in spec.tenants, for errors found when merging. */
export interface ParsedBudget extends BudgetDocument {
  readonly tenantIndex: ReadonlyMap<string, number>;
}

export function parseInferenceBudget(env: Envelope, issues: IssueList): ParsedBudget | undefined {
  const spec = env.spec;
  if (!spec) return undefined;
  const timeZone = parseTimeZone(spec, issues);
  const dayStart = spec.string("dayStartsAt");
  const dayStartsAtMinutes =
    dayStart === undefined ? (spec.has("dayStartsAt") ? null : 0) : parseClock(dayStart);
  if (dayStart !== undefined && dayStartsAtMinutes === null) {
    issues.error(
      spec.at("dayStartsAt"),
      `${JSON.stringify(dayStart)} is not a time of day: write "HH:MM" from "00:00" to "23:59"`,
    );
  }
  const tenants: TenantBudget[] = [];
  const tenantIndex = new Map<string, number>();
  const items = spec.list("tenants", { required: true }) ?? [];
  if (spec.has("tenants") && items.length === 0) {
    issues.warn(spec.at("tenants"), "lists no tenants: this document limits nobody");
  }
  items.forEach((item, i) => {
    const path = spec.at("tenants", i);
    const { name, tenant } = parseTenant(item, path, issues);
    if (name === undefined) return;
    const first = tenantIndex.get(name);
    if (first !== undefined) {
      issues.error([...path, "name"], `tenant "${name}" is already listed at spec.tenants[${first}]`);
      return;
    }
    tenantIndex.set(name, i);
    if (tenant) tenants.push(tenant);
  });
  spec.done();
  if (timeZone === undefined || dayStartsAtMinutes === null) return undefined;
  return deepFreeze({ name: env.name, timeZone, dayStartsAtMinutes, tenants, tenantIndex });
}

function parseTimeZone(spec: FieldReader, issues: IssueList): string | undefined {
  const tz = spec.string("timeZone");
  if (tz === undefined) return spec.has("timeZone") ? undefined : DEFAULT_TIME_ZONE;
  if (isTimeZone(tz)) return tz;
  const known = [...Intl.supportedValuesOf("timeZone"), "UTC"];
  issues.error(
    spec.at("timeZone"),
    `${JSON.stringify(tz)} is not an IANA time zone (e.g. "Asia/Shanghai", "UTC")${didYouMean(tz, known)}`,
  );
  return undefined;
}

function parseTenant(
  value: unknown,
  path: PathSegment[],
  issues: IssueList,
): { name?: string; tenant?: TenantBudget } {
  const f = FieldReader.of(value, path, issues);
  if (!f) return {};
  const name = f.string("name", { required: true, pattern: TENANT_PATTERN, patternHint: TENANT_HINT });
  // null = absent (unlimited), undefined = invalid (reported).
  const limits = LIMITS.map((key) => f.int(key, { min: 1 }) ?? (f.has(key) ? undefined : null));
  const windows = parseWindows(f, issues);
  f.done();
  const [dailyInputTokens, dailyOutputTokens, concurrentRequests, maxSingleInputTokens] = limits;
  if (maxSingleInputTokens != null && dailyInputTokens != null && maxSingleInputTokens > dailyInputTokens) {
    issues.warn(
      f.at("maxSingleInputTokens"),
      `is above dailyInputTokens (${dailyInputTokens}): a request that large is refused by the daily budget anyway`,
    );
  }
  if (name === undefined || windows === undefined || limits.includes(undefined)) return { name };
  const tenant: TenantBudget = {
    name,
    dailyInputTokens: dailyInputTokens ?? null,
    dailyOutputTokens: dailyOutputTokens ?? null,
    concurrentRequests: concurrentRequests ?? null,
    maxSingleInputTokens: maxSingleInputTokens ?? null,
    allowedWindows: windows,
  };
  return { name, tenant };
}

/** `allowedWindows: ["20:00-08:30", "12:00-13:00"]`; absent = always allowed. */
function parseWindows(f: FieldReader, issues: IssueList): TimeWindow[] | undefined {
  if (!f.has("allowedWindows")) {
    f.raw("allowedWindows");
    return [];
  }
  const single = typeof f.raw("allowedWindows") === "string";
  const list = f.stringList("allowedWindows", { allowSingle: true });
  if (list === undefined) return undefined;
  const out: TimeWindow[] = [];
  list.forEach((text, i) => {
    const parsed = parseTimeWindow(text);
    if (parsed.ok) out.push(parsed.window);
    else issues.error(single ? f.at("allowedWindows") : f.at("allowedWindows", i), parsed.reason);
  });
  return out.length === list.length ? out : undefined;
}

/** A parsed document with where it came from, for messages that name two documents. */
export interface PlacedBudget {
  readonly budget: ParsedBudget;
  /** The document's issues: an error found when merging is recorded on the later document. */
  readonly issues: IssueList;
  /** e.g. "budgets.yaml:12", added to messages naming this document; omitted when unknown. */
  readonly where?: string;
}

function docName(p: PlacedBudget): string {
  return `InferenceBudget "${p.budget.name}"${p.where ? ` (${p.where})` : ""}`;
}

/**
 * One BudgetConfig from every document: a tenant may be budgeted by one document only, and all documents
 * must give the same timeZone and dayStartsAt (defaults included), since they share one budget day.
 * Conflicts are errors on the later document; the first document's values are kept.
 */
export function mergeBudgets(placed: readonly PlacedBudget[]): BudgetConfig {
  const first = placed[0];
  const tenants = new Map<string, TenantBudget>();
  const owner = new Map<string, PlacedBudget>();
  for (const p of placed) {
    const b = p.budget;
    if (first && p !== first) {
      const f = first.budget;
      if (b.timeZone !== f.timeZone) {
        p.issues.error(
          ["spec", "timeZone"],
          `timeZone ${JSON.stringify(b.timeZone)} differs from ${docName(first)}'s ${JSON.stringify(f.timeZone)}: budget documents share one day, give every one the same timeZone`,
        );
      }
      if (b.dayStartsAtMinutes !== f.dayStartsAtMinutes) {
        p.issues.error(
          ["spec", "dayStartsAt"],
          `dayStartsAt "${formatClock(b.dayStartsAtMinutes)}" differs from ${docName(first)}'s "${formatClock(f.dayStartsAtMinutes)}": give every budget document the same dayStartsAt`,
        );
      }
    }
    for (const [name, index] of b.tenantIndex) {
      const prev = owner.get(name);
      if (prev) {
        p.issues.error(
          ["spec", "tenants", index, "name"],
          `tenant "${name}" is already budgeted by ${docName(prev)}: a tenant may appear in one InferenceBudget only`,
        );
        continue;
      }
      owner.set(name, p);
    }
    for (const t of b.tenants) if (owner.get(t.name) === p) tenants.set(t.name, t);
  }
  return deepFreeze({
    timeZone: first?.budget.timeZone ?? DEFAULT_TIME_ZONE,
    dayStartsAtMinutes: first?.budget.dayStartsAtMinutes ?? 0,
    tenants,
  });
}
