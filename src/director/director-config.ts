// The `RegionDirector` document (`tokengate director`'s config): regions and their gateways, the latency
// matrix, data residency and the choice's tuning, validated at the edge like the gateway's own documents
// (every problem at once, with file:line:col and the YAML path): past here, only typed values.

import { deepFreeze } from "../config/deep-freeze.js";
import { NAME_HINT, NAME_PATTERN } from "../config/envelope.js";
import { didYouMean, formatConfigError, formatPath, IssueList } from "../config/errors.js";
import { describe, ENV_NAME, FieldReader } from "../config/fields.js";
import { parseYamlText } from "../config/yaml-source.js";
import type { DirectorConfig, DirectorRegion } from "./director-types.js";

export const DIRECTOR_API_VERSION = "tokengate.dev/v1alpha1";
export const DIRECTOR_KIND = "RegionDirector";

/** Region names, as a gateway's `region.name` accepts them. */
const REGION = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const REGION_HINT = "lower-case letters, digits and '-', as a region's name";
const HOST = /^[A-Za-z0-9.:[\]-]+$/;
const HEADER = /^[A-Za-z0-9-]+$/;
const HOUR = 3_600_000;

/** Everything but the regions (and what names them: latency, residency) has a default. */
export const DIRECTOR_DEFAULTS: Omit<DirectorConfig, "name" | "regions" | "latencyMs" | "residency"> =
  deepFreeze({
    listen: { host: "0.0.0.0", port: 8090 },
    defaultLatencyMs: 100,
    weights: { latency: 0.4, headroom: 0.3, errors: 0.2, cost: 0.1 },
    hysteresis: { dwellMs: 30_000, switchMargin: 0.1 },
    breaker: { errorRateToOpen: 0.2, failuresToOpen: 3, openMs: 10_000, halfOpenProbes: 3 },
    spillover: { minHeadroom: 0.15, maxShare: 0.5 },
    affinity: { header: "x-session-id", ttlMs: 300_000 },
    polling: { intervalMs: 1_000, staleAfterMs: 5_000, timeoutMs: 1_000 },
    mode: "forward" as const,
    answerTtlS: 15,
  });

export type DirectorConfigResult =
  | { readonly ok: true; readonly config: DirectorConfig }
  | { readonly ok: false; readonly errors: string[] };

/**
 * Parses and validates one `RegionDirector` document. Errors read `file:line:col path: message`.
 * `summaryTokenEnv` variables are read from `env` now; an unset one is an error.
 * @example
 * const res = parseDirectorConfig(await readFile(path, "utf8"), path);
 * if (!res.ok) for (const e of res.errors) console.error(e);
 */
export function parseDirectorConfig(
  text: string,
  source = "director.yaml",
  env: Readonly<Record<string, string | undefined>> = process.env,
): DirectorConfigResult {
  const parsed = parseYamlText(source, text);
  if (parsed.errors.length > 0) return { ok: false, errors: parsed.errors.map(formatConfigError) };
  if (parsed.documents.length !== 1) {
    const found = `found ${parsed.documents.length}`;
    return { ok: false, errors: [`${source}: expected one ${DIRECTOR_KIND} document, ${found}`] };
  }
  const doc = parsed.documents[0]!;
  const issues = new IssueList();
  const config = readDocument(doc.value, issues, env);
  const errors = issues.items
    .filter((i) => i.severity === "error")
    .map((i) => ({ ...doc.locate(i.path, i.at), i }))
    .sort((a, b) => a.line - b.line || a.column - b.column)
    .map(({ line, column, i }) =>
      formatConfigError({ file: source, line, column, path: formatPath(i.path), message: i.message }),
    );
  if (errors.length > 0 || config === undefined) return { ok: false, errors };
  return { ok: true, config: deepFreeze(config) };
}

/** The frame (apiVersion, kind, metadata) and the spec. */
function readDocument(
  value: unknown,
  issues: IssueList,
  env: Readonly<Record<string, string | undefined>>,
): DirectorConfig | undefined {
  const doc = FieldReader.of(value, [], issues);
  if (!doc) return undefined;
  doc.string("apiVersion", { required: true, oneOf: [DIRECTOR_API_VERSION] });
  doc.string("kind", { required: true, oneOf: [DIRECTOR_KIND] });
  const meta = doc.map("metadata", true);
  const name = meta?.string("name", { required: true, pattern: NAME_PATTERN, patternHint: NAME_HINT });
  meta?.map("labels");
  meta?.map("annotations");
  meta?.done();
  const spec = doc.map("spec", true);
  doc.done();
  if (!spec) return undefined;
  const config = readSpec(spec, env);
  spec.done();
  return name === undefined || config === undefined ? undefined : { name, ...config };
}

function readSpec(
  spec: FieldReader,
  env: Readonly<Record<string, string | undefined>>,
): Omit<DirectorConfig, "name"> | undefined {
  const d = DIRECTOR_DEFAULTS;
  const l = spec.map("listen");
  const listen = {
    host: l?.string("host", { pattern: HOST, patternHint: "a hostname or IP address" }) ?? d.listen.host,
    port: l?.int("port", { min: 0, max: 65535 }) ?? d.listen.port,
  };
  l?.done();
  const mode = (spec.string("mode", { oneOf: ["forward", "redirect"] }) ?? d.mode) as DirectorConfig["mode"];
  const regions = readRegions(spec, env);
  const known = regions?.map((r) => r.name) ?? [];
  const latencyMs = readLatency(spec, known);
  const defaultLatencyMs = number(spec, "defaultLatencyMs", d.defaultLatencyMs, { min: 0, max: HOUR });
  const residency = readResidency(spec, known);

  const w = spec.map("weights");
  const weight = (key: keyof typeof d.weights) => number(w, key, d.weights[key], { min: 0 });
  const weights = {
    latency: weight("latency"),
    headroom: weight("headroom"),
    errors: weight("errors"),
    cost: weight("cost"),
  };
  w?.done();
  if (w && Object.values(weights).every((x) => x === 0))
    w.issues.error(w.path, "all weights are 0: nothing would tell regions apart");

  const h = spec.map("hysteresis");
  const hysteresis = {
    dwellMs: h?.int("dwellMs", { min: 0, max: HOUR }) ?? d.hysteresis.dwellMs,
    switchMargin: number(h, "switchMargin", d.hysteresis.switchMargin, { min: 0, max: 1 }),
  };
  h?.done();
  const b = spec.map("breaker");
  const breaker = {
    errorRateToOpen: number(b, "errorRateToOpen", d.breaker.errorRateToOpen, { above: 0, max: 1 }),
    failuresToOpen: b?.int("failuresToOpen", { min: 1, max: 1000 }) ?? d.breaker.failuresToOpen,
    openMs: b?.int("openMs", { min: 1, max: HOUR }) ?? d.breaker.openMs,
    halfOpenProbes: b?.int("halfOpenProbes", { min: 1, max: 1000 }) ?? d.breaker.halfOpenProbes,
  };
  b?.done();
  const s = spec.map("spillover");
  const spillover = {
    minHeadroom: number(s, "minHeadroom", d.spillover.minHeadroom, { min: 0, max: 1 }),
    maxShare: number(s, "maxShare", d.spillover.maxShare, { min: 0, max: 1 }),
  };
  s?.done();
  const affinity = readAffinity(spec);
  const p = spec.map("polling");
  const polling = {
    intervalMs: p?.int("intervalMs", { min: 1, max: HOUR }) ?? d.polling.intervalMs,
    staleAfterMs: p?.int("staleAfterMs", { min: 1, max: HOUR }) ?? d.polling.staleAfterMs,
    timeoutMs: p?.int("timeoutMs", { min: 1, max: HOUR }) ?? d.polling.timeoutMs,
  };
  p?.done();
  if (polling.staleAfterMs <= polling.intervalMs) {
    spec.issues.error(
      p?.has("staleAfterMs") ? p.at("staleAfterMs") : spec.at("polling"),
      `staleAfterMs (${polling.staleAfterMs}) must be longer than intervalMs (${polling.intervalMs}), or every summary goes stale before the next poll`,
    );
  }
  const answerTtlS = spec.int("answerTtlS", { min: 0, max: 86_400 }) ?? d.answerTtlS;
  if (regions === undefined) return undefined;
  return {
    listen,
    regions,
    latencyMs,
    defaultLatencyMs,
    residency,
    weights,
    hysteresis,
    breaker,
    spillover,
    affinity,
    polling,
    mode,
    answerTtlS,
  };
}

/** `spec.regions`: unique names, http(s) URLs, the summary token read from its variable. */
function readRegions(
  spec: FieldReader,
  env: Readonly<Record<string, string | undefined>>,
): DirectorRegion[] | undefined {
  const items = spec.list("regions", { required: true, nonEmpty: true });
  if (items === undefined) return undefined;
  const out: DirectorRegion[] = [];
  const firstAt = new Map<string, number>();
  let ok = true;
  items.forEach((item, i) => {
    const r = FieldReader.of(item, spec.at("regions", i), spec.issues);
    if (!r) {
      ok = false;
      return;
    }
    const name = r.string("name", { required: true, pattern: REGION, patternHint: REGION_HINT });
    const gatewayUrl = httpUrl(r, "gatewayUrl", true);
    const summaryUrl = httpUrl(r, "summaryUrl", false);
    const tokenEnv = r.string("summaryTokenEnv", {
      pattern: ENV_NAME,
      patternHint: "an environment variable name",
    });
    const cost = number(r, "cost", 1, { min: 0 });
    r.done();
    let summaryToken: string | null = null;
    if (tokenEnv !== undefined) {
      const value = env[tokenEnv];
      if (value === undefined || value === "") {
        r.issues.error(r.at("summaryTokenEnv"), `environment variable ${tokenEnv} is not set`);
        ok = false;
      } else summaryToken = value;
    }
    if (name !== undefined && firstAt.has(name)) {
      r.issues.error(r.at("name"), `duplicate region "${name}" (first at regions[${firstAt.get(name)}])`);
      ok = false;
      return;
    }
    if (name !== undefined) firstAt.set(name, i);
    if (name === undefined || gatewayUrl === undefined || gatewayUrl === null || summaryUrl === null) {
      ok = false;
      return;
    }
    const base = gatewayUrl.replace(/\/+$/, "");
    out.push({
      name,
      gatewayUrl: base,
      summaryUrl: summaryUrl ?? `${base}/admin/region/summary`,
      summaryToken,
      cost,
    });
  });
  return ok ? out : undefined;
}

/** `spec.latencyMs`: caller region → serving region → ms; serving regions must be configured. */
function readLatency(spec: FieldReader, known: readonly string[]): Record<string, Record<string, number>> {
  const m = spec.map("latencyMs");
  const out: Record<string, Record<string, number>> = {};
  if (!m) return out;
  for (const caller of Object.keys(m.value)) {
    if (!REGION.test(caller)) m.issues.error(m.at(caller), `"${caller}" is not valid: ${REGION_HINT}`, "key");
    const row = m.map(caller);
    if (!row) continue;
    const inner: Record<string, number> = {};
    for (const region of Object.keys(row.value)) {
      const ms = number(row, region, Number.NaN, { min: 0, max: HOUR, required: true });
      if (knownRegion(row, region, known) && !Number.isNaN(ms)) inner[region] = ms;
    }
    out[caller] = inner;
  }
  return out;
}

/** `spec.residency`: tenant → the only regions its data may be served in. */
function readResidency(spec: FieldReader, known: readonly string[]): Record<string, string[]> {
  const m = spec.map("residency");
  const out: Record<string, string[]> = {};
  if (!m) return out;
  for (const tenant of Object.keys(m.value)) {
    const list = m.stringList(tenant, { allowSingle: true });
    if (list === undefined) continue;
    list.forEach((region, i) => {
      if (!known.includes(region) && known.length > 0) {
        m.issues.error(m.at(tenant, i), `unknown region "${region}"${didYouMean(region, known)}`);
      }
    });
    out[tenant] = list;
  }
  return out;
}

function readAffinity(spec: FieldReader): DirectorConfig["affinity"] {
  const d = DIRECTOR_DEFAULTS.affinity;
  const a = spec.map("affinity");
  if (!a) return d;
  let header: string | null = d.header;
  const raw = a.raw("header");
  if (raw === false) header = null;
  else if (raw !== undefined) {
    if (typeof raw === "string" && HEADER.test(raw)) header = raw.toLowerCase();
    else
      a.issues.error(
        a.at("header"),
        `must be an HTTP header name, or false (sessions by tenant), got ${describe(raw)}`,
      );
  }
  const ttlMs = a.int("ttlMs", { min: 1, max: 24 * HOUR }) ?? d.ttlMs;
  a.done();
  return { header, ttlMs };
}

/** A serving region named in a map key is configured (else an error at the key). */
function knownRegion(f: FieldReader, region: string, known: readonly string[]): boolean {
  if (known.includes(region)) return true;
  if (known.length > 0)
    f.issues.error(f.at(region), `unknown region "${region}"${didYouMean(region, known)}`, "key");
  return false;
}

/** An http(s) URL; undefined when absent (error if required), null when invalid (reported). */
function httpUrl(f: FieldReader, key: string, required: boolean): string | undefined | null {
  const v = f.string(key, { required });
  if (v === undefined) return f.has(key) ? null : undefined;
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    f.issues.error(f.at(key), `${JSON.stringify(v)} is not a URL`);
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    f.issues.error(f.at(key), `${JSON.stringify(v)} must be an http:// or https:// URL`);
    return null;
  }
  return v;
}

interface NumberRule {
  readonly min?: number;
  /** Exclusive lower bound. */
  readonly above?: number;
  readonly max?: number;
  readonly required?: boolean;
}

/** A finite number within the rule; the default when absent (or `f` is), or after an error. */
function number(f: FieldReader | null, key: string, dflt: number, rule: NumberRule): number {
  if (f === null) return dflt;
  const v = f.raw(key, rule.required);
  if (v === undefined) return dflt;
  const low =
    rule.above !== undefined
      ? (x: number) => x > rule.above!
      : (x: number) => rule.min === undefined || x >= rule.min;
  if (typeof v === "number" && Number.isFinite(v) && low(v) && (rule.max === undefined || v <= rule.max))
    return v;
  const from =
    rule.above !== undefined ? `above ${rule.above}` : rule.min !== undefined ? `≥ ${rule.min}` : "";
  const to = rule.max === undefined ? "" : from === "" ? `≤ ${rule.max}` : ` and ≤ ${rule.max}`;
  f.issues.error(f.at(key), `must be a number ${from}${to}, got ${describe(v)}`);
  return dflt;
}
