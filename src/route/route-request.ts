// Routing: model alias + task + class + input tokens → the pool that serves the request, and why.
// Pure: reads only the config and the profile, so `route explain` shows exactly what the gateway does.
import type { GatewayConfigSet } from "../config/config-set.js";
import type { AliasTarget, ModelAlias, RoutePool, RouteRule, StickyBy } from "../config/route-types.js";
import type {
  MaxTokensSource,
  RouteDecision,
  RouteProfile,
  RouteRejection,
  RouteTarget,
} from "./route-decision.js";
import { checkConditions, fitsPool, poolRange } from "./rule-match.js";
import { chooseTarget } from "./target-choice.js";

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
  const resolved = resolveModel(config, profile, explain);
  if ("code" in resolved) return resolved;
  const { alias, target } = resolved;
  // Only pools that serve the target's adapter can take the request.
  const pools =
    target.adapter === null
      ? alias.pools
      : alias.pools.filter((p) => servesAdapter(config, p.name, target.adapter!));
  const view: ModelAlias = pools === alias.pools ? alias : { ...alias, pools };
  const tokens = tokenCounter(config, profile, pools);
  explain?.push(
    `alias ${alias.name}: default pool ${alias.defaultPool}; pools ${view.pools.map((p) => `${p.name} (${poolRange(p)})`).join(", ")}`,
  );
  explain?.push(
    `request: task ${profile.task ?? "(none)"}, class ${profile.requestClass ?? "(none)"}, input ${profile.inputTokens} tokens, max_tokens ${profile.maxTokens ?? "(none)"}`,
  );

  let chosen: { pool: RoutePool; rule: RouteRule | null; reason: string; label: string } | null = null;
  let candidates = view.pools;
  // With a legacy service the rollout stage sends the request there; the rules still decide on paper.
  if (route.globalMode === "legacy_passthrough" && route.legacy === null) {
    explain?.push(
      "globalMode legacy_passthrough (route rollback) without spec.legacy: rules skipped, default pool used",
    );
    const pool = view.pools.find((x) => x.name === alias.defaultPool) ?? view.pools[0]!;
    candidates = [pool];
    if (tokens(pool) <= pool.maxInputTokens) {
      chosen = { pool, rule: null, reason: "legacy_passthrough", label: "legacy_passthrough" };
    }
  } else {
    chosen =
      matchRules(route.rules, view, profile, tokens, target.adapter, explain) ??
      defaultPool(view, tokens, explain);
  }
  if (!chosen) return tooLarge(view, candidates, tokens, explain);

  const { pool } = chosen;
  const upstream = config.pools.get(pool.name);
  // The loader guarantees every routed pool has an InferencePool; this only guards hand-built configs.
  if (!upstream) throw new Error(`pool ${pool.name} has no InferencePool`);
  const out = outputTokens(pool, profile.maxTokens, explain);
  if ("code" in out) return out;
  const task = profile.task;
  let reason = chosen.reason;
  if (target.how === "weighted") reason += `,target=${target.name}(${target.percent}%)`;
  else if (target.how === "adapter") reason += `,adapter=${target.name}`;
  if (target.rolledBackFrom) {
    reason += `,alias_rollback=${target.rolledBackFrom}->${target.modelVersion}`;
    explain?.push(`model-alias rollback: ${target.rolledBackFrom} is served as ${target.modelVersion}`);
  }
  if (out.clamped) reason += `,max_tokens_clamped=${profile.maxTokens}->${out.maxTokens}`;
  if (target.modelVersion !== null) explain?.push(`model version ${target.modelVersion} required`);
  return {
    ok: true,
    modelAlias: alias.name,
    pool: pool.name,
    poolConfig: pool,
    upstreamModel: target.adapter ?? upstream.model,
    baseModel: upstream.model,
    modelVersion: target.modelVersion ?? upstream.modelVersion,
    target,
    adapterPath:
      target.adapter === null
        ? null
        : (upstream.loraAdapters.find((a) => a.name === target.adapter)?.path ?? null),
    inputTokens: tokens(pool),
    configVersion: config.version,
    rule: chosen.rule?.name ?? null,
    reason,
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
  profile: RouteProfile,
  tokens: TokenCounter,
  adapter: string | null,
  explain: string[] | null,
) {
  for (const rule of rules) {
    const pool = alias.pools.find((x) => x.name === rule.routeTo);
    if (!pool) {
      explain?.push(
        `rule ${rule.name}: skipped, pool ${rule.routeTo} is not a pool of alias ${alias.name}${adapter === null ? "" : ` that serves adapter ${adapter}`}`,
      );
      continue;
    }
    const n = tokens(pool);
    const p = n === profile.inputTokens ? profile : { ...profile, inputTokens: n };
    const check = checkConditions(rule, p, explain !== null);
    if (!check.holds) {
      explain?.push(`rule ${rule.name}: no match, ${check.why}`);
      continue;
    }
    if (!fitsPool(pool, p.inputTokens, tokens.largest())) {
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

function defaultPool(alias: ModelAlias, tokens: TokenCounter, explain: string[] | null) {
  const pool = alias.pools.find((x) => x.name === alias.defaultPool);
  if (pool && fitsPool(pool, tokens(pool), tokens.largest())) {
    explain?.push(`default pool ${pool.name}`);
    return { pool, rule: null, reason: "default", label: "default" };
  }
  const fallback = alias.pools.find((x) => fitsPool(x, tokens(x), tokens.largest()));
  const why = pool
    ? `default pool ${pool.name} takes ${poolRange(pool)} input tokens, not ${tokens(pool)}`
    : `default pool ${alias.defaultPool} does not serve this model`;
  if (!fallback) {
    explain?.push(`${why}, and no other pool fits`);
    return null;
  }
  explain?.push(`${why}; first pool that fits: ${fallback.name}`);
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
  tokens: TokenCounter,
  explain: string[] | null,
): RouteRejection {
  const largest = candidates.reduce((a, b) => (b.maxInputTokens > a.maxInputTokens ? b : a));
  const n = tokens(largest);
  if (n > largest.maxInputTokens) {
    return reject(
      "context_length_exceeded",
      400,
      "messages",
      `This request has about ${n} input tokens (estimated), more than the largest limit of model ${alias.name}: ${largest.maxInputTokens} tokens (pool ${largest.name}). Shorten or split the input; it is never truncated.`,
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
    `No pool of model ${alias.name} takes ${n} input tokens (estimated); pools take ${ranges}.`,
    null,
    ["reduce_input"],
    explain,
  );
}

/**
 * The alias and target a request's `model` names: an alias (its weighted targets, or its base model), or
 * a LoRA adapter that a pool declares (routed as the first alias using such a pool). Anything else is
 * `model_not_found`, naming what is served: never a silent fall-back to a base model.
 */
function resolveModel(
  config: GatewayConfigSet,
  profile: RouteProfile,
  explain: string[] | null,
): { alias: ModelAlias; target: RouteTarget } | RouteRejection {
  const route = config.route;
  const alias = route.aliases.get(profile.modelAlias);
  if (alias) {
    if (alias.targets.length === 0) {
      return {
        alias,
        target: {
          name: alias.name,
          adapter: null,
          modelVersion: alias.defaultVersion,
          how: "base",
          percent: null,
          rolledBackFrom: alias.rollbackFrom,
        },
      };
    }
    const key = profile.stickyKey?.(alias.stickyBy) ?? null;
    const servable = (t: AliasTarget) =>
      t.adapter === null || alias.pools.some((p) => servesAdapter(config, p.name, t.adapter!));
    const choice = chooseTarget(alias, key, servable);
    if (choice) {
      explain?.push(
        `alias ${alias.name}: target ${choice.target.name} (${choice.percent}% of its traffic; ${choice.sticky ? `sticky by ${describeSticky(alias.stickyBy)}` : "no sticky key: by weight at random"})`,
      );
      const t = choice.target;
      return {
        alias,
        target: {
          name: t.name,
          adapter: t.adapter,
          modelVersion: t.modelVersion,
          how: "weighted",
          percent: choice.percent,
          rolledBackFrom: t.rolledBackFrom ?? null,
        },
      };
    }
  } else {
    for (const a of route.aliases.values()) {
      if (!a.pools.some((p) => servesAdapter(config, p.name, profile.modelAlias))) continue;
      explain?.push(`model "${profile.modelAlias}" is a LoRA adapter served by pools of alias ${a.name}`);
      return {
        alias: a,
        target: {
          name: profile.modelAlias,
          adapter: profile.modelAlias,
          modelVersion: a.defaultVersion,
          how: "adapter",
          percent: null,
          rolledBackFrom: a.rollbackFrom,
        },
      };
    }
  }
  const known = servedModelNames(config);
  explain?.push(
    `model "${profile.modelAlias}" is not a model alias or a served adapter (known: ${known.join(", ")})`,
  );
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

/** Every name a caller may send as `model`: the aliases, then the adapters their pools declare. */
export function servedModelNames(config: GatewayConfigSet): string[] {
  const names = [...config.route.aliases.keys()];
  for (const a of config.route.aliases.values())
    for (const p of a.pools)
      for (const l of config.pools.get(p.name)?.loraAdapters ?? [])
        if (!names.includes(l.name)) names.push(l.name);
  return names;
}

function servesAdapter(config: GatewayConfigSet, pool: string, adapter: string): boolean {
  return config.pools.get(pool)?.loraAdapters.some((a) => a.name === adapter) ?? false;
}

function describeSticky(by: StickyBy): string {
  return by.kind === "header" ? `header ${by.header}` : by.kind;
}

/** Input tokens as estimated for each pool's served model, computed once per model. */
interface TokenCounter {
  (pool: RoutePool): number;
  /** The largest estimate over the alias's pools (what lower bounds are judged by). */
  largest(): number;
}

function tokenCounter(
  config: GatewayConfigSet,
  profile: RouteProfile,
  pools: readonly RoutePool[],
): TokenCounter {
  const f = profile.tokensFor;
  if (f === undefined) {
    return Object.assign(() => profile.inputTokens, { largest: () => profile.inputTokens });
  }
  const byModel = new Map<string, number>();
  const at = (pool: RoutePool) => {
    const model = config.pools.get(pool.name)?.model ?? pool.name;
    let n = byModel.get(model);
    if (n === undefined) {
      n = f(model);
      byModel.set(model, n);
    }
    return n;
  };
  let largest = -1;
  return Object.assign(at, {
    largest: () => {
      if (largest < 0) for (const p of pools) largest = Math.max(largest, at(p));
      return largest;
    },
  });
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
