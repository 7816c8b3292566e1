// Validates an InferenceRoute document (seed 004's shape) into a RouteConfig, including every reference
// inside it: default pools, rule targets, pause pools, token ranges, and InferencePool documents.

import { parseStickyBy, parseTargets } from "./alias-targets.js";
import { type Envelope, NAME_HINT, NAME_PATTERN } from "./envelope.js";
import { didYouMean, type IssueList, type PathSegment } from "./errors.js";
import { FieldReader } from "./fields.js";
import { parseLegacy, parseRollout } from "./rollout-config.js";
import {
  type GlobalMode,
  type ModelAlias,
  type OutputTokensPolicy,
  type QueuePolicy,
  ROUTE_VERSION_ANNOTATION,
  type RouteConfig,
  type RoutePool,
  type RouteRule,
} from "./route-types.js";
import { parseConditions } from "./rule-conditions.js";

/** Model aliases look like upstream model ids (`meta-llama/Llama-3.1-8B`, `summary-default`). */
const ALIAS_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;
/** Rule names become the `reason` metric label, so keep them short and plain. */
const RULE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * @param poolDocs names of the InferencePool documents, or null to skip that cross-document check.
 */
export function parseInferenceRoute(
  env: Envelope,
  poolDocs: ReadonlySet<string> | null,
  issues: IssueList,
  poolAdapters: ReadonlyMap<string, ReadonlySet<string>> | null = null,
): RouteConfig | undefined {
  const version = env.annotations[ROUTE_VERSION_ANNOTATION];
  if (version === undefined) {
    issues.error(
      ["metadata"],
      `missing annotation "${ROUTE_VERSION_ANNOTATION}" (the config version that logs show and rollbacks name, e.g. "support-summary-2026-06-15-r3")`,
    );
  }
  const spec = env.spec;
  if (!spec) return undefined;
  const modes: readonly GlobalMode[] = ["rules", "legacy_passthrough"];
  const globalMode = (spec.string("globalMode", { oneOf: modes }) ?? "rules") as GlobalMode;
  const knownTasks = spec.stringList("knownTasks") ?? [];
  const declared = new Set<string>();
  const aliases = parseAliases(spec, poolDocs, declared, issues, poolAdapters);
  const rules = parseRules(spec, aliases, declared, issues);
  const legacy = parseLegacy(spec, issues);
  const rollout = parseRollout(spec, declared, legacy !== null || spec.has("legacy"), issues);
  spec.done();
  if (version === undefined || aliases.size === 0) return undefined;
  const tasks = new Set(knownTasks);
  for (const r of rules) for (const t of r.when.taskIn ?? []) tasks.add(t);
  return { name: env.name, version, globalMode, aliases, rules, knownTasks: tasks, legacy, rollout };
}

/** Fills `declared` with every pool name under any alias, even from entries with other errors. */
function parseAliases(
  spec: FieldReader,
  poolDocs: ReadonlySet<string> | null,
  declared: Set<string>,
  issues: IssueList,
  poolAdapters: ReadonlyMap<string, ReadonlySet<string>> | null,
) {
  const aliases = new Map<string, ModelAlias>();
  const map = spec.map("modelAliases", true);
  if (!map) return aliases;
  const entries = Object.entries(map.value);
  if (entries.length === 0) issues.error(map.path, "must declare at least one model alias");
  for (const [name, value] of entries) {
    const path = map.at(name);
    if (!ALIAS_PATTERN.test(name)) {
      issues.error(
        path,
        `alias ${JSON.stringify(name)} is not valid: use letters, digits, '.', '_', ':', '/', '-'`,
        "key",
      );
    }
    const alias = parseAlias(name, value, path, poolDocs, declared, issues, poolAdapters);
    if (alias) aliases.set(name, alias);
  }
  return aliases;
}

function parseAlias(
  name: string,
  value: unknown,
  path: PathSegment[],
  poolDocs: ReadonlySet<string> | null,
  declared: Set<string>,
  issues: IssueList,
  poolAdapters: ReadonlyMap<string, ReadonlySet<string>> | null,
): ModelAlias | undefined {
  const f = FieldReader.of(value, path, issues);
  if (!f) return undefined;
  const defaultPool = f.string("defaultPool", { required: true });
  const defaultVersion = f.string("defaultVersion") ?? null;
  const rollbackFrom = f.string("rollbackFrom") ?? null;
  const pools: RoutePool[] = [];
  const names: string[] = [];
  (f.list("pools", { required: true, nonEmpty: true }) ?? []).forEach((item, i) => {
    const { name, pool } = parseRoutePool(item, f.at("pools", i), poolDocs, issues);
    if (name === undefined) return;
    if (names.includes(name)) {
      issues.error(f.at("pools", i, "name"), `pool "${name}" is listed twice under this alias`);
      return;
    }
    names.push(name);
    declared.add(name);
    if (pool) pools.push(pool);
  });
  const listed = parseTargets(f, defaultVersion, names, poolAdapters, issues);
  // Model-alias rollback (seed 004): a target naming `rollbackFrom` is served at `defaultVersion`
  // instead, its weight and stickiness kept; pools and rules are untouched.
  const targets =
    rollbackFrom === null || defaultVersion === null
      ? listed
      : listed.map((t) =>
          t.modelVersion === rollbackFrom
            ? { ...t, modelVersion: defaultVersion, rolledBackFrom: rollbackFrom }
            : t,
        );
  const stickyBy = parseStickyBy(f);
  f.done();
  if (defaultPool !== undefined && names.length > 0 && !names.includes(defaultPool)) {
    issues.error(
      f.at("defaultPool"),
      `pool "${defaultPool}" is not one of this alias's pools (${names.join(", ")})${didYouMean(defaultPool, names)}`,
    );
  }
  if (defaultVersion !== null && defaultVersion === rollbackFrom) {
    issues.error(f.at("rollbackFrom"), "must differ from defaultVersion");
  }
  if (rollbackFrom !== null && defaultVersion === null) {
    issues.error(f.at("rollbackFrom"), "needs defaultVersion: the version the alias rolls back to");
  }
  warnCoverageGaps(pools, f.at("pools"), issues);
  if (defaultPool === undefined || pools.length === 0) return undefined;
  return { name, defaultPool, pools, defaultVersion, rollbackFrom, targets, stickyBy };
}

function parseRoutePool(
  value: unknown,
  path: PathSegment[],
  poolDocs: ReadonlySet<string> | null,
  issues: IssueList,
): { name?: string; pool?: RoutePool } {
  const f = FieldReader.of(value, path, issues);
  if (!f) return {};
  const name = f.string("name", { required: true, pattern: NAME_PATTERN, patternHint: NAME_HINT });
  const service = f.string("service") ?? null;
  const minInputTokens = f.int("minInputTokens", { min: 0 }) ?? 0;
  const maxInputTokens = f.int("maxInputTokens", { required: true, min: 1 });
  const maxOutputTokens = f.int("maxOutputTokens", { required: true, min: 1 });
  const maxQueueMs = f.int("maxQueueMs", { min: 1 }) ?? 30_000;
  const priority = f.int("priority", { min: 0, max: 1_000_000 }) ?? 0;
  const priorityByClass = parsePriorityByClass(f);
  const policies: readonly OutputTokensPolicy[] = ["clamp", "reject"];
  const outputTokensPolicy = (f.string("outputTokensPolicy", { oneOf: policies }) ??
    "clamp") as OutputTokensPolicy;
  f.done();
  if (maxInputTokens !== undefined && minInputTokens > maxInputTokens) {
    issues.error(
      f.at("minInputTokens"),
      `minInputTokens (${minInputTokens}) is greater than maxInputTokens (${maxInputTokens})`,
    );
  }
  if (name !== undefined && poolDocs !== null && !poolDocs.has(name)) {
    issues.error(f.at("name"), `pool "${name}" has no InferencePool document${didYouMean(name, poolDocs)}`);
  }
  if (name === undefined || maxInputTokens === undefined || maxOutputTokens === undefined) return { name };
  const pool: RoutePool = {
    name,
    service,
    minInputTokens,
    maxInputTokens,
    maxOutputTokens,
    maxQueueMs,
    priority,
    priorityByClass,
    outputTokensPolicy,
  };
  return { name, pool };
}

/** `priorityByClass: { batch: 5, interactive: 120 }` — a request class's band in this pool's queue. */
function parsePriorityByClass(f: FieldReader): Map<string, number> {
  const out = new Map<string, number>();
  const m = f.map("priorityByClass");
  if (!m) return out;
  for (const cls of Object.keys(m.value)) {
    const v = m.int(cls, { min: 0, max: 1_000_000 });
    if (v !== undefined) out.set(cls, v);
  }
  return out;
}

/** A gap between pools' input ranges means some sizes are always refused — legal, but rarely meant. */
function warnCoverageGaps(pools: readonly RoutePool[], path: PathSegment[], issues: IssueList): void {
  const sorted = [...pools].sort((a, b) => a.minInputTokens - b.minInputTokens);
  let covered = 0;
  for (const p of sorted) {
    if (p.minInputTokens > covered + 1) {
      issues.warn(
        path,
        `no pool takes inputs of ${covered + 1}..${p.minInputTokens - 1} tokens; they will be refused`,
      );
    }
    covered = Math.max(covered, p.maxInputTokens);
  }
}

function parseRules(
  spec: FieldReader,
  aliases: ReadonlyMap<string, ModelAlias>,
  declared: ReadonlySet<string>,
  issues: IssueList,
): RouteRule[] {
  const items = spec.list("rules") ?? [];
  const rules: RouteRule[] = [];
  const seen = new Set<string>();
  items.forEach((item, i) => {
    const rule = parseRule(item, spec.at("rules", i), declared, issues);
    if (!rule) return;
    if (seen.has(rule.name)) {
      issues.error(spec.at("rules", i, "name"), `duplicate rule name "${rule.name}"`);
      return;
    }
    seen.add(rule.name);
    warnUnreachable(rule, i, items.length, aliases, spec.at("rules", i), issues);
    rules.push(rule);
  });
  return rules;
}

function parseRule(
  value: unknown,
  path: PathSegment[],
  declared: ReadonlySet<string>,
  issues: IssueList,
): RouteRule | undefined {
  const f = FieldReader.of(value, path, issues);
  if (!f) return undefined;
  const name = f.string("name", {
    required: true,
    pattern: RULE_PATTERN,
    patternHint: "letters, digits, '.', '_' and '-', at most 64 characters",
  });
  const when = parseConditions(f.map("when"), issues);
  const routeTo = f.string("routeTo", { required: true });
  if (routeTo !== undefined && declared.size > 0 && !declared.has(routeTo)) {
    issues.error(
      f.at("routeTo"),
      `pool "${routeTo}" is not declared under any model alias${didYouMean(routeTo, declared)}`,
    );
  }
  const queuePolicy = parseQueuePolicy(f, declared, issues);
  f.done();
  if (name === undefined || routeTo === undefined) return undefined;
  return { name, when, routeTo, queuePolicy };
}

function parseQueuePolicy(
  rule: FieldReader,
  declared: ReadonlySet<string>,
  issues: IssueList,
): QueuePolicy | null {
  const f = rule.map("queuePolicy");
  if (!f) return null;
  const p = f.map("pauseWhen");
  const fallbackOptions = f.stringList("fallbackOptions") ?? ["retry_later"];
  f.done();
  if (!p) return { pauseWhen: null, fallbackOptions };
  const pool = p.string("pool", { required: true });
  const ttftP95MsGt = p.int("ttftP95MsGt", { required: true, min: 1 });
  const windowSeconds = p.int("windowSeconds", { min: 1, max: 86_400 }) ?? 60;
  const resumeBelowMs = p.int("resumeBelowMs", { min: 1 });
  const resumeAfterSeconds = p.int("resumeAfterSeconds", { min: 0, max: 86_400 }) ?? 10;
  const minSamples = p.int("minSamples", { min: 1, max: 100_000 }) ?? 20;
  const retryAfterSeconds = p.int("retryAfterSeconds", { min: 1, max: 86_400 }) ?? windowSeconds;
  p.done();
  if (pool !== undefined && declared.size > 0 && !declared.has(pool)) {
    issues.error(
      p.at("pool"),
      `pool "${pool}" is not declared under any model alias${didYouMean(pool, declared)}`,
    );
  }
  if (ttftP95MsGt !== undefined && resumeBelowMs !== undefined && resumeBelowMs > ttftP95MsGt) {
    issues.error(
      p.at("resumeBelowMs"),
      `resumeBelowMs (${resumeBelowMs}) must not be above ttftP95MsGt (${ttftP95MsGt}): the pause would flap`,
    );
  }
  if (pool === undefined || ttftP95MsGt === undefined) return { pauseWhen: null, fallbackOptions };
  return {
    pauseWhen: {
      pool,
      ttftP95MsGt,
      windowSeconds,
      resumeBelowMs: resumeBelowMs ?? Math.max(1, Math.floor(ttftP95MsGt * 0.8)),
      resumeAfterSeconds,
      minSamples,
      retryAfterSeconds,
    },
    fallbackOptions,
  };
}

function warnUnreachable(
  rule: RouteRule,
  index: number,
  count: number,
  aliases: ReadonlyMap<string, ModelAlias>,
  path: PathSegment[],
  issues: IssueList,
): void {
  const w = rule.when;
  const catchAll = !w.taskIn && !w.requestClass && w.inputTokensLte === null && w.inputTokensGt === null;
  if (catchAll && index < count - 1) {
    issues.warn(
      path,
      `rule "${rule.name}" has no conditions, so the rules after it are only reached by oversize inputs`,
    );
  }
  const lo = (w.inputTokensGt ?? -1) + 1;
  const hi = w.inputTokensLte ?? Number.POSITIVE_INFINITY;
  const targets = [...aliases.values()].flatMap((a) => a.pools.filter((p) => p.name === rule.routeTo));
  if (targets.length > 0 && targets.every((p) => p.maxInputTokens < lo || p.minInputTokens > hi)) {
    const p = targets[0]!;
    issues.warn(
      [...path, "when"],
      `rule "${rule.name}" can never match: pool "${p.name}" takes ${p.minInputTokens}..${p.maxInputTokens} input tokens`,
    );
  }
}
