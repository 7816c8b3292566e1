// Routing: model alias + task + class + input tokens → the pool that serves the request, and why.
// Pure: reads only the config and the profile, so `route explain` shows exactly what the gateway does.
import type { GatewayConfigSet } from "../config/config-set.js";
import type { ModelAlias, RoutePool, RouteRule } from "../config/route-types.js";
import type { MaxTokensSource, RouteDecision, RouteProfile, RouteRejection } from "./route-decision.js";
import { checkConditions, fitsPool, poolRange } from "./rule-match.js";

export interface RouteOptions {
  /** Build `explain` (every rule checked, and why); default true. The request path passes false. */
  readonly explain?: boolean;
}

/** The `explain` of a decision made without one. */
const NOT_EXPLAINED: readonly string[] = Object.freeze([]);

/**
 * Rules in order, first match wins; a rule applies only to aliases that list its pool, and only when the
 * pool's input range takes the request. No match → the alias's default pool, or the first pool (in
 * declared order) whose range fits. Too large for every pool → `context_length_exceeded`; never truncation.
 * @example
 * routeRequest(config, { modelAlias: "summary-default", task: "live_ticket_summary", requestClass: null,
 *   inputTokens: 2864, maxTokens: 420 }) // { ok: true, pool: "summary-online", reason: "rule=live-summary-short", … }
 */
export function routeRequest(
  config: GatewayConfigSet,
  profile: RouteProfile,
  opts: RouteOptions = {},
): RouteDecision | RouteRejection {
  const route = config.route;
  // The request path does not read the explanation: building it cost ~0.9 KB of strings per request.
  const explain: string[] | null = opts.explain === false ? null : [];
  const alias = route.aliases.get(profile.modelAlias);
  if (!alias) {
    const known = [...route.aliases.keys()];
    explain?.push(`model "${profile.modelAlias}" is not a model alias (known: ${known.join(", ")})`);
    return reject(
      "model_not_found",
      404,
      "model",
      `The model "${profile.modelAlias}" does not exist; available models: ${known.join(", ")}.`,
      null,
      known,
      explain,
    );
  }
  explain?.push(
    `alias ${alias.name}: default pool ${alias.defaultPool}; pools ${alias.pools.map((p) => `${p.name} (${poolRange(p)})`).join(", ")}`,
  );
  explain?.push(
    `request: task ${profile.task ?? "(none)"}, class ${profile.requestClass ?? "(none)"}, input ${profile.inputTokens} tokens, max_tokens ${profile.maxTokens ?? "(none)"}`,
  );

  let chosen: { pool: RoutePool; rule: RouteRule | null; reason: string; label: string } | null = null;
  let candidates = alias.pools;
  if (route.globalMode === "legacy_passthrough") {
    explain?.push("globalMode legacy_passthrough (route rollback): rules skipped, default pool used");
    const pool = poolOf(alias, alias.defaultPool);
    candidates = [pool];
    if (profile.inputTokens <= pool.maxInputTokens) {
      chosen = { pool, rule: null, reason: "legacy_passthrough", label: "legacy_passthrough" };
    }
  } else {
    chosen = matchRules(route.rules, alias, profile, explain) ?? defaultPool(alias, profile, explain);
  }
  if (!chosen) return tooLarge(alias, candidates, profile, explain);

  const { pool } = chosen;
  const upstream = config.pools.get(pool.name);
  // The loader guarantees every routed pool has an InferencePool; this only guards hand-built configs.
  if (!upstream) throw new Error(`pool ${pool.name} has no InferencePool`);
  const out = outputTokens(pool, profile.maxTokens, explain);
  if ("code" in out) return out;
  const task = profile.task;
  return {
    ok: true,
    modelAlias: alias.name,
    pool: pool.name,
    poolConfig: pool,
    upstreamModel: upstream.model,
    modelVersion: upstream.modelVersion,
    configVersion: config.version,
    rule: chosen.rule?.name ?? null,
    reason: out.clamped
      ? `${chosen.reason},max_tokens_clamped=${profile.maxTokens}->${out.maxTokens}`
      : chosen.reason,
    reasonLabel: chosen.label,
    maxTokens: out.maxTokens,
    maxTokensRequested: profile.maxTokens,
    maxTokensClamped: out.clamped,
    maxTokensSource: out.source,
    taskKnown: task !== null && route.knownTasks.has(task),
    priority:
      (profile.requestClass !== null ? pool.priorityByClass.get(profile.requestClass) : undefined) ??
      pool.priority,
    maxQueueMs: pool.maxQueueMs,
    queuePolicy: chosen.rule?.queuePolicy ?? null,
    explain: explain ?? NOT_EXPLAINED,
  };
}

function matchRules(
  rules: readonly RouteRule[],
  alias: ModelAlias,
  p: RouteProfile,
  explain: string[] | null,
) {
  for (const rule of rules) {
    const pool = alias.pools.find((x) => x.name === rule.routeTo);
    if (!pool) {
      explain?.push(`rule ${rule.name}: skipped, pool ${rule.routeTo} is not a pool of alias ${alias.name}`);
      continue;
    }
    const check = checkConditions(rule, p, explain !== null);
    if (!check.holds) {
      explain?.push(`rule ${rule.name}: no match, ${check.why}`);
      continue;
    }
    if (!fitsPool(pool, p.inputTokens)) {
      explain?.push(
        `rule ${rule.name}: conditions hold (${check.facts}) but pool ${pool.name} takes ${poolRange(pool)} input tokens, not ${p.inputTokens}; next rule`,
      );
      continue;
    }
    explain?.push(`rule ${rule.name}: match (${check.facts}) → pool ${pool.name}`);
    return { pool, rule, reason: `rule=${rule.name}`, label: rule.name };
  }
  if (rules.length > 0) explain?.push("no rule matched");
  return null;
}

function defaultPool(alias: ModelAlias, p: RouteProfile, explain: string[] | null) {
  const pool = poolOf(alias, alias.defaultPool);
  if (fitsPool(pool, p.inputTokens)) {
    explain?.push(`default pool ${pool.name}`);
    return { pool, rule: null, reason: "default", label: "default" };
  }
  const fallback = alias.pools.find((x) => fitsPool(x, p.inputTokens));
  if (!fallback) {
    explain?.push(
      `default pool ${pool.name} takes ${poolRange(pool)} input tokens and no other pool fits ${p.inputTokens}`,
    );
    return null;
  }
  explain?.push(
    `default pool ${pool.name} takes ${poolRange(pool)} input tokens, not ${p.inputTokens}; first pool that fits: ${fallback.name}`,
  );
  return { pool: fallback, rule: null, reason: `default,size_fallback=${fallback.name}`, label: "default" };
}

function outputTokens(
  pool: RoutePool,
  requested: number | null,
  explain: string[] | null,
): { maxTokens: number; clamped: boolean; source: MaxTokensSource } | RouteRejection {
  const limit = pool.maxOutputTokens;
  if (requested === null) {
    explain?.push(`max_tokens absent: sending pool ${pool.name}'s maxOutputTokens ${limit}`);
    return { maxTokens: limit, clamped: false, source: "pool_default" };
  }
  if (requested <= limit) {
    explain?.push(`max_tokens ${requested} is within pool ${pool.name}'s maxOutputTokens ${limit}`);
    return { maxTokens: requested, clamped: false, source: "request" };
  }
  if (pool.outputTokensPolicy === "reject") {
    explain?.push(
      `max_tokens ${requested} > pool ${pool.name}'s maxOutputTokens ${limit}: refused (outputTokensPolicy reject)`,
    );
    return reject(
      "max_tokens_exceeded",
      400,
      "max_tokens",
      `max_tokens is ${requested}, but pool ${pool.name} allows at most ${limit} output tokens.`,
      pool.name,
      ["reduce_max_tokens"],
      explain,
    );
  }
  explain?.push(
    `max_tokens ${requested} > pool ${pool.name}'s maxOutputTokens ${limit}: clamped to ${limit}`,
  );
  return { maxTokens: limit, clamped: true, source: "pool_clamp" };
}

function tooLarge(
  alias: ModelAlias,
  candidates: readonly RoutePool[],
  p: RouteProfile,
  explain: string[] | null,
): RouteRejection {
  const largest = candidates.reduce((a, b) => (b.maxInputTokens > a.maxInputTokens ? b : a));
  if (p.inputTokens > largest.maxInputTokens) {
    return reject(
      "context_length_exceeded",
      400,
      "messages",
      `This request has about ${p.inputTokens} input tokens (estimated), more than the largest limit of model ${alias.name}: ${largest.maxInputTokens} tokens (pool ${largest.name}). Shorten or split the input; it is never truncated.`,
      largest.name,
      ["reduce_input", "split_input"],
      explain,
    );
  }
  const ranges = candidates.map((x) => `${x.name} ${poolRange(x)}`).join(", ");
  return reject(
    "no_eligible_pool",
    400,
    "messages",
    `No pool of model ${alias.name} takes ${p.inputTokens} input tokens (estimated); pools take ${ranges}.`,
    null,
    ["reduce_input"],
    explain,
  );
}

function poolOf(alias: ModelAlias, name: string): RoutePool {
  const pool = alias.pools.find((x) => x.name === name);
  if (!pool) throw new Error(`alias ${alias.name} has no pool ${name}`);
  return pool;
}

function reject(
  code: RouteRejection["code"],
  status: RouteRejection["status"],
  param: string,
  message: string,
  route: string | null,
  fallbackOptions: readonly string[],
  explain: string[] | null,
): RouteRejection {
  explain?.push(`rejected: ${code}`);
  return {
    ok: false,
    code,
    message,
    param,
    status,
    route,
    fallbackOptions,
    explain: explain ?? NOT_EXPLAINED,
  };
}
