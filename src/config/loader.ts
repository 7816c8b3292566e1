// Loads a config file or folder into a GatewayConfigSet, or into every error found (never a partial config).

import { mergeBudgets, type PlacedBudget, parseInferenceBudget } from "../budget/budget-config.js";
import type { DocumentSummary, GatewayConfigSet } from "./config-set.js";
import { deepFreeze } from "./deep-freeze.js";
import { type PlacedPickerConfig, parseEndpointPickerDoc, pickersByPool } from "./endpoint-picker.js";
import { type ConfigKind, type Envelope, readEnvelope, skippedKind } from "./envelope.js";
import { type ConfigError, type ConfigIssue, formatPath, IssueList } from "./errors.js";
import { isPlainMap } from "./fields.js";
import {
  defaultGatewaySettings,
  type EnvOptions,
  type GatewaySettings,
  parseGatewaySettings,
} from "./gateway-settings.js";
import { type InferencePoolConfig, parseInferencePool } from "./inference-pool.js";
import { parseInferenceRoute } from "./inference-route.js";
import type { RouteConfig } from "./route-types.js";
import { parseYamlText, readYamlSources, type SourceDocument, type SourceSet } from "./yaml-source.js";

export type LoadOptions = EnvOptions;

export type LoadResult =
  | { readonly ok: true; readonly config: GatewayConfigSet; readonly warnings: readonly ConfigError[] }
  | {
      readonly ok: false;
      readonly errors: readonly ConfigError[];
      readonly warnings: readonly ConfigError[];
    };

/**
 * Loads and validates a file or a folder of YAML documents.
 * @example
 * const res = await loadConfig("examples/support-summary");
 * if (!res.ok) for (const e of res.errors) console.error(formatConfigError(e));
 */
export async function loadConfig(path: string, options: LoadOptions = {}): Promise<LoadResult> {
  return validateSources(await readYamlSources(path), path, options);
}

/** Same as loadConfig for in-memory files (tests, reload previews). */
export function loadConfigTexts(files: Record<string, string>, options: LoadOptions = {}): LoadResult {
  const documents: SourceDocument[] = [];
  const errors: ConfigError[] = [];
  for (const [file, text] of Object.entries(files)) {
    const parsed = parseYamlText(file, text);
    documents.push(...parsed.documents);
    errors.push(...parsed.errors);
  }
  return validateSources(
    { files: Object.keys(files), documents, errors },
    Object.keys(files).join(","),
    options,
  );
}

interface Parsed {
  readonly source: SourceDocument;
  readonly env: Envelope;
  readonly issues: IssueList;
}

function validateSources(sources: SourceSet, root: string, options: LoadOptions): LoadResult {
  const errors: ConfigError[] = [...sources.errors];
  const warnings: ConfigError[] = [];
  const report = (source: SourceDocument, list: readonly ConfigIssue[]) => {
    for (const issue of list) {
      const { line, column } = source.locate(issue.path, issue.at);
      const located = {
        file: source.file,
        line,
        column,
        path: formatPath(issue.path),
        message: issue.message,
      };
      (issue.severity === "error" ? errors : warnings).push(located);
    }
  };

  const summaries: DocumentSummary[] = [];
  const byKind = new Map<ConfigKind, Parsed[]>();
  for (const source of sources.documents) {
    const line = source.locate([]).line;
    const skipped = skippedKind(source.value);
    if (skipped) {
      summaries.push({ file: source.file, line, kind: skipped, name: null, skipped: true });
      continue;
    }
    const issues = new IssueList();
    const env = readEnvelope(source.value, issues);
    if (!env) {
      report(source, issues.items);
      continue;
    }
    summaries.push({ file: source.file, line, kind: env.kind, name: env.name, skipped: false });
    const list = byKind.get(env.kind) ?? [];
    const first = list.find((p) => p.env.name === env.name);
    // Single-instance kinds get their own "only one" error instead.
    if (first && env.kind !== "InferenceRoute" && env.kind !== "GatewayConfig") {
      const where = `${first.source.file}:${first.source.locate(["metadata", "name"]).line}`;
      issues.error(["metadata", "name"], `${env.kind} "${env.name}" is already defined at ${where}`);
    }
    list.push({ source, env, issues });
    byKind.set(env.kind, list);
  }
  const get = (kind: ConfigKind) => byKind.get(kind) ?? [];

  const pools = new Map<string, InferencePoolConfig>();
  for (const p of get("InferencePool")) {
    const pool = parseInferencePool(p.env, p.issues, options);
    if (pool && !pools.has(pool.name)) pools.set(pool.name, pool);
  }
  const poolNames = new Set(get("InferencePool").map((p) => p.env.name));
  const poolAdapters = new Map(
    [...pools.values()].map((p) => [p.name, new Set(p.loraAdapters.map((a) => a.name))]),
  );

  let route: RouteConfig | undefined;
  const routes = get("InferenceRoute");
  const routeClaimed = sources.documents.some(
    (d) => isPlainMap(d.value) && d.value.kind === "InferenceRoute",
  );
  if (!routeClaimed && sources.documents.length > 0) {
    errors.push({ file: root, line: 0, column: 0, path: "", message: "no InferenceRoute document found" });
  }
  routes.forEach((r, i) => {
    if (i > 0) {
      const first = routes[0]!.source;
      r.issues.error(
        [],
        `only one InferenceRoute is allowed; the first is at ${first.file}:${first.locate([]).line}`,
      );
    }
    const parsed = parseInferenceRoute(r.env, poolNames, r.issues, poolAdapters);
    if (i === 0) route = parsed;
  });

  const used = new Set(route ? [...route.aliases.values()].flatMap((a) => a.pools.map((p) => p.name)) : []);
  const routeClean = routes.length === 1 && routes[0]!.issues.errorCount === 0;
  for (const p of get("InferencePool")) {
    if (route && routeClean && !used.has(p.env.name)) {
      p.issues.warn(["metadata", "name"], `InferencePool "${p.env.name}" is not used by any model alias`);
    }
  }

  let gateway: GatewaySettings = defaultGatewaySettings(options);
  get("GatewayConfig").forEach((g, i) => {
    if (i > 0) g.issues.error([], "only one GatewayConfig is allowed");
    const parsed = parseGatewaySettings(g.env, g.issues, options);
    if (i === 0) gateway = parsed;
  });

  const placedPickers: PlacedPickerConfig[] = [];
  for (const d of get("EndpointPicker")) {
    const placed = parseEndpointPickerDoc(d.env, poolNames, d.issues);
    if (placed) placedPickers.push(placed);
  }
  const pickers = pickersByPool(placedPickers, poolNames);

  const placedBudgets: PlacedBudget[] = [];
  for (const b of get("InferenceBudget")) {
    const budget = parseInferenceBudget(b.env, b.issues);
    const where = `${b.source.file}:${b.source.locate([]).line}`;
    if (budget) placedBudgets.push({ budget, issues: b.issues, where });
  }
  const budgets = mergeBudgets(placedBudgets);
  if (route) warnUnreachableInputs(route, placedBudgets);

  for (const list of byKind.values()) for (const p of list) report(p.source, p.issues.items);
  if (sources.documents.length === 0 && sources.errors.length === 0) {
    errors.push({ file: root, line: 0, column: 0, path: "", message: "no YAML documents found" });
  }
  if (errors.length > 0 || !route)
    return { ok: false, errors: sortErrors(errors), warnings: sortErrors(warnings) };
  const config: GatewayConfigSet = {
    version: route.version,
    route,
    pools,
    gateway,
    pickers,
    budgets,
    sources: [...sources.files],
    documents: summaries,
  };
  return { ok: true, config: deepFreeze(config), warnings: sortErrors(warnings) };
}

function sortErrors(list: ConfigError[]): ConfigError[] {
  return list.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column);
}

/**
 * A tenant allowed single inputs larger than any pool takes will be refused by routing
 * (context_length_exceeded) before its budget matters: legal, but rarely meant.
 */
function warnUnreachableInputs(route: RouteConfig, placed: readonly PlacedBudget[]): void {
  let largest = 0;
  for (const a of route.aliases.values())
    for (const p of a.pools) largest = Math.max(largest, p.maxInputTokens);
  for (const { budget, issues } of placed) {
    for (const t of budget.tenants) {
      const limit = t.maxSingleInputTokens;
      if (limit === null || limit <= largest) continue;
      issues.warn(
        ["spec", "tenants", budget.tenantIndex.get(t.name) ?? 0, "maxSingleInputTokens"],
        `tenant "${t.name}" may send ${limit} input tokens, but no pool takes more than ${largest}: larger inputs are refused by routing first`,
      );
    }
  }
}
