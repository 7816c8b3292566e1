// Test fixture: a small version of seed 004's platform in one process — simulated replicas for three
// pools and a gateway in front of them, every port picked free, every log line captured.

import OpenAI from "openai";
import { loadConfigTexts } from "../config/index.js";
import type { HookFactory } from "../pipeline/plugins/hook-factory.js";
import { Gateway } from "../server/gateway.js";
import { makeEngineConfig } from "../sim/engine-config.js";
import { SimReplica } from "../sim/replica.js";
import type { RequestLogLine } from "../telemetry/request-log.js";

export const KEYS = { basic: "sk-test-basic", quality: "sk-test-quality" } as const;
export const SECRET = "test-upstream-secret";

export interface Platform {
  gateway: Gateway;
  replicas: Record<"online" | "long" | "batch", SimReplica[]>;
  lines: RequestLogLine[];
  /** Log events (endpoint health, queue pauses) with their fields. */
  events: { event: string; fields: Record<string, unknown> }[];
  url: string;
  /** The config as files (pools.yaml, route.yaml, gateway.yaml), for `route explain --config`. */
  configTexts: Record<string, string>;
  /** A request to the admin listener (/metrics, /admin/*), with the admin token. */
  admin(path: string, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
}

export interface PlatformOptions {
  profile?: string;
  online?: number;
  gatewayYaml?: string;
  /** YAML flow map for summary-batch's `spec.flowControl`, e.g. `{ maxInflight: 1 }`. */
  batchFlowControl?: string;
  /** More lines (two-space indented) for summary-batch's spec (outlierDetection, circuitBreaker). */
  batchPoolExtra?: string;
  /** YAML flow map for the quality-batch rule's `queuePolicy`. */
  batchQueuePolicy?: string;
  /** summary-batch also lists the long-context engine (seed 004: batch borrows the long pool). */
  batchBorrowsLong?: boolean;
  /** summary-batch's maxQueueMs (default 300000). */
  batchMaxQueueMs?: number;
  /** More lines (two-space indented) for the default GatewayConfig's spec. */
  gatewayExtra?: string;
  /** YAML flow map replacing the default GatewayConfig's timeouts. */
  timeouts?: string;
  /** LoRA adapters the online engines serve and summary-online declares. */
  onlineAdapters?: readonly string[];
  /** More aliases (YAML, indented four spaces, under modelAliases). */
  extraAliases?: string;
  /** More lines (two-space indented) for the InferenceRoute's spec (legacy, rollout, globalMode). */
  routeExtra?: string;
  /** An InferenceBudget document, as budget.yaml. */
  budgetYaml?: string;
  /** Request-pipeline plugins added after the built-in ones. */
  hooks?: readonly HookFactory[];
}

export async function startPlatform(opts: PlatformOptions = {}): Promise<Platform> {
  const profile = opts.profile ?? "instant";
  const make = async (
    name: string,
    model: string,
    maxModelLen: number,
    loraModules: readonly string[] = [],
  ) => {
    const r = new SimReplica({
      name,
      port: 0,
      engine: makeEngineConfig(profile, model, {
        maxModelLen,
        loraModules,
        maxLoras: Math.max(1, loraModules.length),
      }),
      seed: 1,
    });
    await r.start();
    return r;
  };
  const replicas = {
    online: await Promise.all(
      Array.from({ length: opts.online ?? 2 }, (_, i) =>
        make(`online-${i}`, "summary-7b", 8192, opts.onlineAdapters),
      ),
    ),
    long: [await make("long-0", "summary-14b-long", 65536)],
    batch: [await make("batch-0", "summary-14b-long", 65536)],
  };
  const eps = (rs: SimReplica[]) => rs.map((r) => `"${r.url}"`).join(", ");
  const pools = `
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: summary-online }
spec:
  engine: vllm
  model: summary-7b
  modelVersion: summary-7b-2026-06-15
  endpoints: [${eps(replicas.online)}]
  loraAdapters: [${(opts.onlineAdapters ?? []).join(", ")}]
  metrics: { intervalMs: 100 }
  health: { intervalMs: 100 }
---
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: summary-long }
spec:
  engine: vllm
  model: summary-14b-long
  endpoints: [${eps(replicas.long)}]
  metrics: { intervalMs: 100 }
  health: { intervalMs: 100 }
---
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: summary-batch }
spec:
  engine: vllm
  model: summary-14b-long
  endpoints: [${eps(opts.batchBorrowsLong ? [...replicas.batch, ...replicas.long] : replicas.batch)}]
  metrics: { intervalMs: 100 }
  health: { intervalMs: 100 }
${opts.batchFlowControl ? `  flowControl: ${opts.batchFlowControl}` : ""}
${opts.batchPoolExtra ?? ""}
`;
  const route = `
apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata:
  name: support-summary-route
  annotations:
    ai.example.com/route-config-version: "test-r1"
spec:
  knownTasks: ["batch_recompute_summary"]
${opts.routeExtra ?? ""}
  modelAliases:
    summary-default:
      defaultPool: summary-online
      pools:
        - { name: summary-online, maxInputTokens: 8192, maxOutputTokens: 600, maxQueueMs: 800, priority: 100 }
        - { name: summary-long, minInputTokens: 8193, maxInputTokens: 65536, maxOutputTokens: 2200, maxQueueMs: 12000, priority: 50 }
        - { name: summary-batch, maxInputTokens: 65536, maxOutputTokens: 2200, maxQueueMs: ${opts.batchMaxQueueMs ?? 300000}, priority: 10 }
${opts.extraAliases ?? ""}
  rules:
    - name: live-summary-short
      when: { taskIn: ["live_ticket_summary", "agent_assist_summary"], inputTokensLte: 8192 }
      routeTo: summary-online
    - name: live-summary-long
      when: { taskIn: ["live_ticket_summary"], inputTokensGt: 8192 }
      routeTo: summary-long
    - name: quality-batch
      when: { requestClass: batch }
      routeTo: summary-batch
${opts.batchQueuePolicy ? `      queuePolicy: ${opts.batchQueuePolicy}` : ""}
`;
  const gateway =
    opts.gatewayYaml ??
    `
apiVersion: tokengate.dev/v1alpha1
kind: GatewayConfig
metadata: { name: test }
spec:
  listen: { host: 127.0.0.1, port: 0 }
  auth:
    apiKeys:
      - { key: ${KEYS.basic}, tenant: support-basic }
      - { key: ${KEYS.quality}, tenant: quality-job }
    trustedUpstreams: { sharedSecret: ${SECRET}, addresses: ["127.0.0.1"] }
  limits: { maxBodyBytes: 1048576 }
  timeouts: ${opts.timeouts ?? "{ connectMs: 500, firstByteMs: 5000, idleMs: 2000, totalMs: 20000 }"}
  retry: { maxAttempts: 2, budgetPercent: 100 }
${opts.gatewayExtra ?? ""}`;
  const configTexts: Record<string, string> = {
    "pools.yaml": pools,
    "route.yaml": route,
    "gateway.yaml": gateway,
  };
  if (opts.budgetYaml) configTexts["budget.yaml"] = opts.budgetYaml;
  const loaded = loadConfigTexts(configTexts);
  if (!loaded.ok) throw new Error(loaded.errors.map((e) => `${e.path}: ${e.message}`).join("\n"));
  const gw = new Gateway(loaded.config, { logDestination: "none", hooks: opts.hooks ?? [] });
  const lines: RequestLogLine[] = [];
  gw.log.listener = (l) => lines.push(l);
  const events: Platform["events"] = [];
  gw.log.eventListener = (event, fields) => events.push({ event, fields });
  await gw.start();
  // On a loaded machine the first health checks can take longer than the gateway's own start-up wait.
  const endpoints = [...gw.pools.values()].flatMap((p) => p.endpoints);
  for (const until = Date.now() + 15_000; Date.now() < until; ) {
    if (endpoints.every((e) => e.routable(Date.now()) && e.scrapedAt !== null)) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const all = [...replicas.online, ...replicas.long, ...replicas.batch];
  return {
    gateway: gw,
    replicas,
    lines,
    events,
    url: gw.url,
    configTexts,
    admin: (path, init = {}) =>
      fetch(`${gw.adminUrl}${path}`, {
        ...init,
        headers: {
          ...(init.headers as Record<string, string>),
          authorization: `Bearer ${gw.adminToken.reveal()}`,
        },
      }),
    stop: async () => {
      await gw.stop();
      await Promise.all(all.map((r) => r.stop()));
    },
  };
}

/** The official openai client against a platform's gateway: no retries, so a test sees every error. */
export function openaiClient(
  p: Platform,
  headers: Record<string, string> = {},
  key: string = KEYS.basic,
): OpenAI {
  return new OpenAI({
    baseURL: `${p.url}/v1`,
    apiKey: key,
    maxRetries: 0,
    timeout: 15_000,
    defaultHeaders: headers,
  });
}

/**
 * A reader of the platform's log that waits, for each call, until `n` requests have finished under config
 * `version` since the previous call (at most `deadlineMs`): a change made under load then gets requests
 * of its own however fast the machine is, where a fixed sleep would get a number that depends on it.
 */
export function versionWatch(
  p: Platform,
): (version: string, n: number, deadlineMs?: number) => Promise<void> {
  let seen = p.lines.length;
  return async (version, n, deadlineMs = 60_000) => {
    for (const until = Date.now() + deadlineMs; ; await new Promise((r) => setTimeout(r, 20))) {
      const mine = p.lines.slice(seen).filter((l) => l.config_version === version).length;
      if (mine >= n) break;
      if (Date.now() > until)
        throw new Error(`${mine} of ${n} requests finished under ${version} within ${deadlineMs} ms`);
    }
    seen = p.lines.length;
  };
}

/** Platforms started by one test suite; `stopAll` (for `after`) stops every one. */
export function suitePlatforms(): {
  start: (opts: PlatformOptions) => Promise<Platform>;
  stopAll: () => Promise<unknown>;
} {
  const started: Platform[] = [];
  return {
    start: async (opts) => {
      const p = await startPlatform(opts);
      started.push(p);
      return p;
    },
    stopAll: () => Promise.all(started.map((p) => p.stop())),
  };
}
