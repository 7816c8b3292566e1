// `spec.legacy` (the service traffic went to before tokengate) and `spec.rollout` (seed 004's stages:
// shadow-label, canary, full, per pool), validated against the route's pools.
//
//   legacy: { url: http://summarizer-legacy.default.svc.cluster.local:8000 }
//   rollout:
//     stage: canary
//     canary: { match: { requestClass: interactive, inputTokensLte: 8192 }, percent: 5,
//               routeTo: summary-online, stickyBy: tenant }
//     pools: { summary-long: full, summary-batch: shadow-label }

import { parseStickyBy } from "./alias-targets.js";
import { didYouMean, type IssueList } from "./errors.js";
import { describe, type FieldReader } from "./fields.js";
import {
  type Canary,
  type LegacyService,
  ROLLOUT_STAGES,
  type Rollout,
  type RolloutGates,
  type RolloutStage,
} from "./route-types.js";
import { parseConditions } from "./rule-conditions.js";

/** The labels a rollout may write on forwarded requests (seed 004's `write_headers`). */
export const LABEL_HEADERS = [
  "x-ai-task",
  "x-ai-request-class",
  "x-ai-input-tokens-estimated",
  "x-ai-tenant",
] as const;

const DEFAULT_GATES: RolloutGates = {
  minRequests: 100,
  labelledRatioMin: 0.95,
  tokenErrorP90Max: 0.18,
  unknownTaskRatioMax: 0.01,
  canaryErrorRatioMax: 0.01,
  canaryTtftP95MsMax: 1800,
};

export function parseLegacy(spec: FieldReader, issues: IssueList): LegacyService | null {
  const f = spec.map("legacy");
  if (!f) return null;
  const url = f.string("url", { required: true });
  f.done();
  if (url === undefined) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    issues.error(f.at("url"), `${JSON.stringify(url)} is not a URL (write http://host:port)`);
    return null;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    issues.error(f.at("url"), `must be an http:// or https:// URL, got ${JSON.stringify(url)}`);
    return null;
  }
  if (parsed.pathname !== "/" || parsed.search !== "") {
    issues.error(f.at("url"), "give the service's origin only (http://host:port): requests keep their path");
    return null;
  }
  return { url: parsed.origin };
}

/**
 * @param pools every pool named under a model alias (canary `routeTo` and `pools` keys must be one).
 * @param legacy whether `spec.legacy` is set: a stage that sends traffic there needs it.
 */
export function parseRollout(
  spec: FieldReader,
  pools: ReadonlySet<string>,
  legacy: boolean,
  issues: IssueList,
): Rollout | null {
  const f = spec.map("rollout");
  if (!f) return null;
  const stage = f.string("stage", { required: true, oneOf: ROLLOUT_STAGES }) as RolloutStage | undefined;
  // The seed's own spellings: `route_effect: disabled` is shadow-label's, `traffic: 100%` says all of it.
  const effect = f.string("route_effect", { oneOf: ["disabled", "enabled"] });
  if (effect !== undefined && stage !== undefined && (effect === "disabled") !== (stage === "shadow-label")) {
    issues.error(
      f.at("route_effect"),
      `route_effect ${effect} contradicts stage ${stage} (only shadow-label disables the route's effect)`,
    );
  }
  const traffic = f.raw("traffic");
  if (traffic !== undefined && traffic !== "100%" && traffic !== 100) {
    issues.error(
      f.at("traffic"),
      `only "100%" is accepted (a stage's share is the canary's percent), got ${describe(traffic)}`,
    );
  }
  const writeHeaders = parseWriteHeaders(f, issues);
  const perPool = parsePoolStages(f, pools, issues);
  const canary = parseCanary(f, pools, issues);
  const gates = parseGates(f);
  f.done();
  if (stage === undefined) return null;
  const stages = [stage, ...perPool.values()];
  if (stages.includes("canary") && canary === null && !f.has("canary")) {
    issues.error(f.path, 'a canary stage needs a "canary" block (match, percent, routeTo, stickyBy)');
  }
  if (!legacy && stages.some((s) => s !== "full")) {
    issues.error(
      f.at("stage"),
      'stages shadow-label and canary send traffic to the legacy service: set spec.legacy.url (e.g. "http://summarizer-legacy:8000")',
    );
  }
  return { stage, pools: perPool, canary, writeHeaders, gates };
}

function parseWriteHeaders(f: FieldReader, issues: IssueList): string[] {
  const key = f.has("write_headers") ? "write_headers" : "writeHeaders";
  const list = f.stringList(key);
  // Read both so either spelling is known; one of them is absent.
  f.raw(key === "write_headers" ? "writeHeaders" : "write_headers");
  if (list === undefined) return [...LABEL_HEADERS.slice(0, 3)];
  const out: string[] = [];
  list.forEach((h, i) => {
    const lower = h.toLowerCase();
    if (!(LABEL_HEADERS as readonly string[]).includes(lower)) {
      issues.error(
        f.at(key, i),
        `${JSON.stringify(h)} is not a label the gateway writes; one of X-AI-Task, X-AI-Request-Class, X-AI-Input-Tokens-Estimated, X-AI-Tenant${didYouMean(lower, LABEL_HEADERS)}`,
      );
      return;
    }
    out.push(lower);
  });
  return out;
}

function parsePoolStages(
  f: FieldReader,
  pools: ReadonlySet<string>,
  issues: IssueList,
): Map<string, RolloutStage> {
  const out = new Map<string, RolloutStage>();
  const m = f.map("pools");
  if (!m) return out;
  for (const name of Object.keys(m.value)) {
    const stage = m.string(name, { oneOf: ROLLOUT_STAGES }) as RolloutStage | undefined;
    if (pools.size > 0 && !pools.has(name)) {
      issues.error(
        m.at(name),
        `pool "${name}" is not declared under any model alias${didYouMean(name, pools)}`,
        "key",
      );
      continue;
    }
    if (stage !== undefined) out.set(name, stage);
  }
  return out;
}

function parseCanary(f: FieldReader, pools: ReadonlySet<string>, issues: IssueList): Canary | null {
  const c = f.map("canary");
  if (!c) return null;
  const match = parseConditions(c.map("match"), issues);
  const routeTo = c.string("routeTo", { required: true });
  const rawPercent = c.raw("percent", true);
  const stickyBy = parseStickyBy(c);
  c.done();
  let percent: number | undefined;
  if (rawPercent !== undefined) {
    if (
      typeof rawPercent !== "number" ||
      !Number.isFinite(rawPercent) ||
      rawPercent < 0 ||
      rawPercent > 100
    ) {
      issues.error(c.at("percent"), `must be a number from 0 to 100, got ${describe(rawPercent)}`);
    } else {
      percent = rawPercent;
    }
  }
  if (routeTo !== undefined && pools.size > 0 && !pools.has(routeTo)) {
    issues.error(
      c.at("routeTo"),
      `pool "${routeTo}" is not declared under any model alias${didYouMean(routeTo, pools)}`,
    );
    return null;
  }
  if (routeTo === undefined || percent === undefined) return null;
  return { match, percent, routeTo, stickyBy };
}

function parseGates(f: FieldReader): RolloutGates {
  const g = f.map("gates");
  if (!g) return DEFAULT_GATES;
  const ratio = (key: string, dflt: number): number => {
    const v = g.raw(key);
    if (v === undefined) return dflt;
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > 1) {
      g.issues.error(g.at(key), `must be a ratio from 0 to 1, got ${describe(v)}`);
      return dflt;
    }
    return v;
  };
  const gates: RolloutGates = {
    minRequests: g.int("minRequests", { min: 1, max: 10_000_000 }) ?? DEFAULT_GATES.minRequests,
    labelledRatioMin: ratio("labelledRatioMin", DEFAULT_GATES.labelledRatioMin),
    tokenErrorP90Max: ratio("tokenErrorP90Max", DEFAULT_GATES.tokenErrorP90Max),
    unknownTaskRatioMax: ratio("unknownTaskRatioMax", DEFAULT_GATES.unknownTaskRatioMax),
    canaryErrorRatioMax: ratio("canaryErrorRatioMax", DEFAULT_GATES.canaryErrorRatioMax),
    canaryTtftP95MsMax:
      g.int("canaryTtftP95MsMax", { min: 1, max: 3_600_000 }) ?? DEFAULT_GATES.canaryTtftP95MsMax,
  };
  g.done();
  return gates;
}
