// InferencePool: one group of engines serving one model — its engine dialect, the model name sent upstream,
// and a static endpoint list (Kubernetes discovery comes later).

import { ENGINE_DIALECT_NAMES, type EngineDialectName } from "../engines/dialects.js";
import type { Envelope } from "./envelope.js";
import type { IssueList, PathSegment } from "./errors.js";
import { FieldReader, quoted } from "./fields.js";
import type { EnvOptions } from "./gateway-settings.js";
import {
  type CircuitBreakerSettings,
  type OutlierDetection,
  parseCircuitBreaker,
  parseOutlierDetection,
} from "./pool-resilience.js";
import {
  DEFAULT_MODELS_POLL,
  type LoraAdapterConfig,
  type ModelsPoll,
  parseLoraAdapters,
  parseUpstreamAuth,
  type UpstreamAuth,
} from "./pool-serving.js";
import {
  DEFAULT_LONG_PREFILL,
  DEFAULT_SATURATION,
  LONG_PREFILL_ON_MS,
  type LongPrefillSettings,
  type SaturationBounds,
} from "./saturation-bounds.js";

/** An engine dialect's name (engines/dialects.ts: one per engine tokengate knows). */
export type EngineDialect = EngineDialectName;
export const ENGINE_DIALECTS: readonly EngineDialect[] = ENGINE_DIALECT_NAMES;

export interface PoolEndpoint {
  /** Label for logs and metrics; defaults to `host:port`. */
  readonly name: string;
  /** Origin only, e.g. `http://127.0.0.1:8001` (no path, no credentials). */
  readonly url: string;
  /** The version this endpoint runs, when it differs from the pool's; its /v1/models overrides both. */
  readonly modelVersion: string | null;
}

/** A pool's engines found at run time: the Ready pods of a GIE `InferencePool` (inference.networking.k8s.io/v1). */
export interface PoolDiscovery {
  readonly kubernetes: {
    /** The InferencePool object's name. */
    readonly inferencePool: string;
    /** Its namespace; null: the gateway's own (in a pod), else `default`. */
    readonly namespace: string | null;
  };
}

export interface PollSettings {
  /** HTTP path on each endpoint. */
  readonly path: string;
  readonly intervalMs: number;
}

/**
 * A validated `InferencePool` document.
 * @example
 * ```yaml
 * kind: InferencePool
 * metadata: { name: summary-online }
 * spec:
 *   engine: vllm
 *   model: summary-7b
 *   modelVersion: summary-7b-2026-06-15
 *   endpoints: ["http://127.0.0.1:8001", { url: "http://127.0.0.1:8002", name: online-1 }]
 *   # or, on Kubernetes, instead of endpoints: the pods of a Gateway API Inference Extension InferencePool
 *   # discovery: { kubernetes: { inferencePool: vllm-summary-7b, namespace: llm } }
 * ```
 */
export interface InferencePoolConfig {
  readonly name: string;
  /** Which metric names and health conventions the engines follow. */
  readonly engine: EngineDialect;
  /** Served model name written into the upstream request body in place of the alias. */
  readonly model: string;
  /**
   * The version the pool's engines run, until an engine's /v1/models says otherwise (the last path
   * segment of the base model's `root`); defaults to `model`.
   */
  readonly modelVersion: string;
  /** The engines as listed; empty when `discovery` finds them. */
  readonly endpoints: readonly PoolEndpoint[];
  /** Where the engines are found instead of `endpoints`; null: the list is the config's. */
  readonly discovery: PoolDiscovery | null;
  /** Adapters the engines serve under their own names; requests and alias targets may name them. */
  readonly loraAdapters: readonly LoraAdapterConfig[];
  /** The key of engines started with --api-key; null: none. */
  readonly upstreamAuth: UpstreamAuth | null;
  /** The engines' served models and versions; default `{ path: "/v1/models", intervalMs: 30000 }`. */
  readonly models: ModelsPoll;
  /** Ejection after consecutive failures, and how much of the pool may be out at once. */
  readonly outlierDetection: OutlierDetection;
  /** A failure-rate circuit breaker per endpoint. */
  readonly circuitBreaker: CircuitBreakerSettings;
  /** Engine metrics scrape; default `{ path: "/metrics", intervalMs: 250 }`. */
  readonly metrics: PollSettings;
  /** Health check; default `{ path: "/health", intervalMs: 1000 }`. */
  readonly health: PollSettings;
  /** The gateway queue in front of this pool and when an endpoint counts as full. */
  readonly flowControl: PoolFlowSettings;
}

/**
 * `spec.flowControl`. Requests wait in the gateway's queue until an endpoint is below these bounds.
 * @example
 * ```yaml
 * flowControl: { maxWaiting: 1, maxKvCacheUsage: 0.85, maxInflightTokens: 120000, maxQueuedRequests: 5000 }
 * ```
 */
export interface PoolFlowSettings extends SaturationBounds {
  /** false: dispatch at once, whatever the endpoints' load (no gateway queue). Default true. */
  readonly enabled: boolean;
  /** Requests the pool's queue holds; past it, 429 `queue_full`. Default 10,000. */
  readonly maxQueuedRequests: number;
  /** Long prompts held back so short ones find an endpoint free of them (flow/long-prefill.ts). */
  readonly longPrefill: LongPrefillSettings;
}

export const DEFAULT_POOL_FLOW: PoolFlowSettings = {
  ...DEFAULT_SATURATION,
  enabled: true,
  maxQueuedRequests: 10_000,
  longPrefill: DEFAULT_LONG_PREFILL,
};

export const DEFAULT_METRICS: PollSettings = { path: "/metrics", intervalMs: 250 };
export const DEFAULT_HEALTH: PollSettings = { path: "/health", intervalMs: 1000 };

const HTTP_PATH = /^\/[A-Za-z0-9._~!$&'()*+,;=:@/-]*$/;
const ENDPOINT_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

export function parseInferencePool(
  env: Envelope,
  issues: IssueList,
  options: EnvOptions = {},
): InferencePoolConfig | undefined {
  const spec = env.spec;
  if (!spec) return undefined;
  const engine = spec.string("engine", { required: true, oneOf: ENGINE_DIALECTS }) as
    | EngineDialect
    | undefined;
  const model = spec.string("model", { required: true });
  const modelVersion = spec.string("modelVersion");
  const discovery = parseDiscovery(spec, issues);
  const endpoints = discovery === undefined ? parseEndpoints(spec, issues) : [];
  const metrics = parsePoll(spec, "metrics", DEFAULT_METRICS);
  const health = parsePoll(spec, "health", DEFAULT_HEALTH);
  const flowControl = parseFlow(spec, issues);
  const loraAdapters = parseLoraAdapters(spec, issues);
  const upstreamAuth = parseUpstreamAuth(spec, issues, options);
  const models = parseModelsPoll(spec);
  const outlierDetection = parseOutlierDetection(spec);
  const circuitBreaker = parseCircuitBreaker(spec, issues);
  spec.done();
  if (!engine || !model || !endpoints || discovery === null) return undefined;
  return {
    name: env.name,
    engine,
    model,
    modelVersion: modelVersion ?? model,
    endpoints,
    discovery: discovery ?? null,
    metrics,
    health,
    flowControl,
    loraAdapters,
    upstreamAuth,
    models,
    outlierDetection,
    circuitBreaker,
  };
}

function parseFlow(spec: FieldReader, issues: IssueList): PoolFlowSettings {
  const f = spec.map("flowControl");
  if (!f) return DEFAULT_POOL_FLOW;
  const d = DEFAULT_POOL_FLOW;
  const enabled = f.bool("enabled") ?? d.enabled;
  const maxWaiting = f.int("maxWaiting", { min: 1 }) ?? d.maxWaiting;
  const maxPredictedWaitMs = f.isNull("maxPredictedWaitMs")
    ? null
    : f.raw("maxPredictedWaitMs") === "drain"
      ? "drain"
      : (f.int("maxPredictedWaitMs", { min: 1 }) ?? d.maxPredictedWaitMs);
  const staleMaxInflight = f.int("staleMaxInflight", { min: 1 }) ?? d.staleMaxInflight;
  const maxInflight = f.int("maxInflight", { min: 1 }) ?? d.maxInflight;
  const maxInflightTokens = f.int("maxInflightTokens", { min: 1 }) ?? d.maxInflightTokens;
  const maxQueuedRequests = f.int("maxQueuedRequests", { min: 0, max: 10_000_000 }) ?? d.maxQueuedRequests;
  let maxKvCacheUsage = d.maxKvCacheUsage;
  const kv = f.raw("maxKvCacheUsage");
  if (kv !== undefined) {
    if (typeof kv === "number" && kv > 0 && kv <= 1) maxKvCacheUsage = kv;
    else issues.error(f.at("maxKvCacheUsage"), `must be a number in (0, 1], got ${quoted(kv)}`);
  }
  const longPrefill = parseLongPrefill(f, issues);
  f.done();
  return {
    enabled,
    longPrefill,
    maxWaiting,
    maxPredictedWaitMs,
    maxKvCacheUsage,
    staleMaxInflight,
    maxInflight,
    maxInflightTokens,
    maxQueuedRequests,
  };
}

/** `flowControl.longPrefill`: a map turns it on (minPrefillMs 150, shortReserve 0.25 unless set); null or absent: off. */
function parseLongPrefill(f: FieldReader, issues: IssueList): LongPrefillSettings {
  const d = DEFAULT_LONG_PREFILL;
  if (f.isNull("longPrefill")) return d;
  const m = f.map("longPrefill");
  if (!m) return d;
  const minPrefillMs = m.isNull("minPrefillMs")
    ? null
    : (m.int("minPrefillMs", { min: 1 }) ?? LONG_PREFILL_ON_MS);
  let shortReserve = d.shortReserve;
  const r = m.raw("shortReserve");
  if (r !== undefined) {
    if (typeof r === "number" && r >= 0 && r <= 0.5) shortReserve = r;
    else issues.error(m.at("shortReserve"), `must be a number in [0, 0.5], got ${quoted(r)}`);
  }
  m.done();
  return { minPrefillMs, shortReserve };
}

/** A Kubernetes resource name (RFC 1123 subdomain). */
const KUBE_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/**
 * `spec.discovery`: undefined when absent (the pool lists `endpoints`), null when present and invalid.
 * A pool either lists its engines or finds them, never both.
 */
function parseDiscovery(spec: FieldReader, issues: IssueList): PoolDiscovery | null | undefined {
  const d = spec.map("discovery");
  if (!d) return undefined;
  const k = d.map("kubernetes", true);
  const hint = "a Kubernetes name: lower-case letters, digits, '-' and '.'";
  const inferencePool = k?.string("inferencePool", { required: true, pattern: KUBE_NAME, patternHint: hint });
  const namespace = k?.string("namespace", { pattern: KUBE_NAME, patternHint: hint }) ?? null;
  k?.done();
  d.done();
  if (spec.raw("endpoints") !== undefined) {
    issues.error(spec.at("endpoints"), "a pool lists its endpoints or finds them by discovery, not both");
    return null;
  }
  if (inferencePool === undefined) return null;
  return { kubernetes: { inferencePool, namespace } };
}

function parseEndpoints(spec: FieldReader, issues: IssueList): PoolEndpoint[] | undefined {
  const items = spec.list("endpoints", { required: true, nonEmpty: true });
  if (!items) return undefined;
  const out: PoolEndpoint[] = [];
  const urls = new Set<string>();
  const names = new Set<string>();
  let ok = true;
  items.forEach((item, i) => {
    const path = spec.at("endpoints", i);
    let url: string | undefined;
    let name: string | undefined;
    let modelVersion: string | null = null;
    if (typeof item === "string") {
      url = checkEndpointUrl(item, path, issues);
    } else {
      const f = FieldReader.of(item, path, issues);
      const raw = f?.string("url", { required: true });
      url = raw === undefined ? undefined : checkEndpointUrl(raw, [...path, "url"], issues);
      name = f?.string("name", {
        pattern: ENDPOINT_NAME,
        patternHint: "letters, digits, '.', '_', ':' and '-'",
      });
      modelVersion = f?.string("modelVersion") ?? null;
      f?.done();
    }
    if (url === undefined) {
      ok = false;
      return;
    }
    const finalName = name ?? new URL(url).host;
    if (urls.has(url)) {
      issues.error(path, `duplicate endpoint ${url}`);
      ok = false;
    } else if (names.has(finalName)) {
      issues.error(path, `duplicate endpoint name ${JSON.stringify(finalName)}`);
      ok = false;
    }
    urls.add(url);
    names.add(finalName);
    out.push({ name: finalName, url, modelVersion });
  });
  return ok ? out : undefined;
}

/** Accepts `http://host[:port][/]` only and returns its origin. */
export function checkEndpointUrl(text: string, path: PathSegment[], issues: IssueList): string | undefined {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    issues.error(path, `${JSON.stringify(text)} is not a URL; write http://host:port`);
    return undefined;
  }
  if (u.protocol !== "http:") {
    issues.error(path, `${JSON.stringify(text)}: only http:// endpoints are supported (got ${u.protocol})`);
    return undefined;
  }
  if (u.username !== "" || u.password !== "") {
    // Credentials in a URL end up in logs and error messages.
    issues.error(path, "endpoint URLs must not contain credentials");
    return undefined;
  }
  if ((u.pathname !== "/" && u.pathname !== "") || u.search !== "" || u.hash !== "") {
    issues.error(
      path,
      `${JSON.stringify(text)}: write only http://host:port; the gateway adds the /v1/... path`,
    );
    return undefined;
  }
  return u.origin;
}

function parseModelsPoll(spec: FieldReader): ModelsPoll {
  const d = DEFAULT_MODELS_POLL;
  const f = spec.map("models");
  if (!f) return d;
  const path = f.string("path", {
    pattern: HTTP_PATH,
    patternHint: "an absolute HTTP path such as /v1/models",
  });
  const intervalMs = f.int("intervalMs", { min: 100, max: 3_600_000 });
  const versionFrom = f.string("versionFrom", { oneOf: ["config", "root"] }) as
    | ModelsPoll["versionFrom"]
    | undefined;
  f.done();
  return {
    path: path ?? d.path,
    intervalMs: intervalMs ?? d.intervalMs,
    versionFrom: versionFrom ?? d.versionFrom,
  };
}

// Invalid values are already recorded as errors; defaults stand in so validation can go on.
function parsePoll(spec: FieldReader, key: string, defaults: PollSettings): PollSettings {
  const f = spec.map(key);
  if (!f) return defaults;
  const path = f.string("path", {
    pattern: HTTP_PATH,
    patternHint: "an absolute HTTP path such as /metrics",
  });
  const intervalMs = f.int("intervalMs", { min: 10, max: 3_600_000 });
  f.done();
  return { path: path ?? defaults.path, intervalMs: intervalMs ?? defaults.intervalMs };
}
