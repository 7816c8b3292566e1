// GatewayConfig: the gateway's own settings (listeners, who is a tenant, limits, timeouts, retries, logging).
// Every field has a default, so the document itself is optional.

import { type AuthSettings, DEFAULT_AUTH, parseAuth } from "./auth-settings.js";
import { type BatchSettings, DEFAULT_BATCHES, parseBatchSettings } from "./batch-settings.js";
import { type BudgetStoreSettings, DEFAULT_BUDGET_STORE, parseBudgetStore } from "./budget-store-settings.js";
import { deepFreeze } from "./deep-freeze.js";
import type { Envelope } from "./envelope.js";
import type { IssueList } from "./errors.js";
import { ENV_NAME, type EnvOptions, type FieldReader } from "./fields.js";
import { Secret } from "./secret.js";

export {
  type ApiKeyEntry,
  type AuthSettings,
  parseAddress,
  type TrustedAddress,
  type TrustedUpstreams,
  trustedAddressList,
} from "./auth-settings.js";
export type { EnvOptions } from "./fields.js";

export interface ListenAddress {
  readonly host: string;
  /** 0 picks a free port (tests). */
  readonly port: number;
}

/** The metrics/admin listener. `separate: false` means it is served on the main listener. */
export interface AdminListener extends ListenAddress {
  readonly separate: boolean;
  /**
   * The bearer token every /admin/* request must carry: `token`, or the variable `tokenEnv` names
   * (default TOKENGATE_ADMIN_TOKEN); null when neither is set, and then the gateway makes one at start
   * (`tokengate gateway` writes it to a file only its user can read and says where).
   */
  readonly token: Secret | null;
  readonly tokenEnv: string;
}

/**
 * A validated `GatewayConfig` document, or the defaults when there is none.
 * Defaults: listen 0.0.0.0:8080; admin (`/metrics`, admin API) on the same listener; no API keys, no trusted
 * upstreams, anonymous refused; body limit 4 MiB, read within 60 s; timeouts connect 2 s, first byte 60 s, idle 30 s,
 * total 600 s; 2 attempts with a 10% retry budget; no stream heartbeat; 25 s to drain on shutdown; prompts not
 * logged; logs to stdout.
 */
export interface GatewaySettings {
  readonly listen: ListenAddress;
  readonly admin: AdminListener;
  readonly auth: AuthSettings;
  readonly limits: {
    readonly maxBodyBytes: number;
    /** From the request's headers to the last byte of its body (a slow sender holds a connection). */
    readonly bodyReadMs: number;
  };
  readonly timeouts: {
    /** TCP connect to an engine. */
    readonly connectMs: number;
    /** From sending upstream to the first response byte (covers engine queue and prefill). */
    readonly firstByteMs: number;
    /** Longest gap between two chunks of a streaming reply. */
    readonly idleMs: number;
    /** Whole upstream exchange. */
    readonly totalMs: number;
  };
  readonly retry: {
    /** Attempts including the first; retries happen only before the first byte. */
    readonly maxAttempts: number;
    /** Retries in flight may be at most this percentage of the pool's requests in flight (0 disables retries). */
    readonly budgetPercent: number;
    /** Retries in flight allowed whatever the budget (Envoy's `min_retry_concurrency`); default 3. */
    readonly minRetryConcurrency: number;
  };
  readonly streaming: {
    /**
     * A stream that has sent nothing for this long — waiting in the gateway's queue, or for the
     * engine's first token — gets its headers and then an SSE comment every `heartbeatMs`, so that an
     * idle timeout of a balancer or proxy in front does not cut it. Once its headers are out, a
     * failure before the first token reaches the client as an error event, not as an HTTP status.
     * 0: off (the default).
     */
    readonly heartbeatMs: number;
  };
  readonly shutdown: {
    /**
     * On SIGTERM: stop accepting connections, let requests in progress (queued ones too) finish for
     * at most this long, then cut what is left. Below a Kubernetes pod's termination grace period.
     */
    readonly drainMs: number;
  };
  /** Where tenant budgets are counted (budget-store-settings.ts). */
  readonly budgets: BudgetStoreSettings;
  /** The Files and Batch API (batch-settings.ts); off without a `path`. */
  readonly batches: BatchSettings;
  /** The region this gateway serves, as a `tokengate director` names it in its config and decisions. */
  readonly region: { readonly name: string };
  /** How pools with `discovery.kubernetes` reach the Kubernetes API. */
  readonly kubernetes: {
    /**
     * A kubeconfig file; null: the pod's service account when running in a cluster
     * (KUBERNETES_SERVICE_HOST), else $KUBECONFIG or ~/.kube/config.
     */
    readonly kubeconfig: string | null;
  };
  readonly logging: {
    /** Log prompt and completion text; default false. */
    readonly prompts: boolean;
    /** `stdout`, `stderr`, or a file path. */
    readonly destination: string;
  };
}

/** The variable the admin token is read from unless `admin.tokenEnv` names another. */
export const ADMIN_TOKEN_ENV = "TOKENGATE_ADMIN_TOKEN";
/** The admin listener's port unless `admin.port` says (0, its own free port, when `listen.port` is 0). */
export const ADMIN_PORT = 9090;

export const DEFAULT_GATEWAY_SETTINGS: GatewaySettings = deepFreeze({
  listen: { host: "0.0.0.0", port: 8080 },
  admin: { host: "127.0.0.1", port: 9090, separate: true, token: null, tokenEnv: ADMIN_TOKEN_ENV },
  auth: DEFAULT_AUTH,
  limits: { maxBodyBytes: 4 * 1024 * 1024, bodyReadMs: 60_000 },
  timeouts: { connectMs: 2_000, firstByteMs: 60_000, idleMs: 30_000, totalMs: 600_000 },
  retry: { maxAttempts: 2, budgetPercent: 10, minRetryConcurrency: 3 },
  streaming: { heartbeatMs: 0 },
  shutdown: { drainMs: 25_000 },
  budgets: DEFAULT_BUDGET_STORE,
  batches: DEFAULT_BATCHES,
  region: { name: "default" },
  kubernetes: { kubeconfig: null },
  logging: { prompts: false, destination: "stdout" },
});

/** The settings of a config without a GatewayConfig document: the defaults, and an admin token from the environment. */
export function defaultGatewaySettings(options: EnvOptions = {}): GatewaySettings {
  const d = DEFAULT_GATEWAY_SETTINGS;
  const token = envSecret((options.env ?? process.env)[ADMIN_TOKEN_ENV]);
  return token === null ? d : { ...d, admin: { ...d.admin, token } };
}

const HOST = /^[A-Za-z0-9.:[\]-]+$/;
const PORT = { min: 0, max: 65535 };

export function parseGatewaySettings(
  env: Envelope,
  issues: IssueList,
  options: EnvOptions = {},
): GatewaySettings {
  const d = DEFAULT_GATEWAY_SETTINGS;
  const spec = env.spec;
  if (!spec) return defaultGatewaySettings(options);
  const l = spec.map("listen");
  const listen = {
    host: l?.string("host", { pattern: HOST, patternHint: "a hostname or IP address" }) ?? d.listen.host,
    port: l?.int("port", PORT) ?? d.listen.port,
  };
  l?.done();
  const a = spec.map("admin");
  const adminHost =
    a?.string("host", { pattern: HOST, patternHint: "a hostname or IP address" }) ?? d.admin.host;
  const adminPort = a?.int("port", PORT) ?? (listen.port === 0 ? 0 : d.admin.port);
  const literalToken = a?.string("token") ?? null;
  if (a && literalToken !== null && literalToken.length < 16) {
    issues.error(a.at("token"), "must be at least 16 characters");
  }
  const tokenEnv =
    a?.string("tokenEnv", { pattern: ENV_NAME, patternHint: "an environment variable name" }) ??
    ADMIN_TOKEN_ENV;
  a?.done();
  // The same host and port as the public listener share it; port 0 is always a listener of its own.
  const separate = adminHost !== listen.host || adminPort !== listen.port || adminPort === 0;
  if (a && separate && adminPort === listen.port && adminPort !== 0) {
    issues.error(
      a.at("port"),
      "equals listen.port on another host; give admin the same host to share the listener",
    );
  }
  const envToken = (options.env ?? process.env)[tokenEnv];
  const token = literalToken !== null ? new Secret(literalToken) : envSecret(envToken);
  if (literalToken === null && envToken !== undefined && envToken.length < 16) {
    issues.error(
      a?.at("tokenEnv") ?? spec.at("admin"),
      `environment variable ${tokenEnv} must hold at least 16 characters`,
    );
  }
  const auth = parseAuth(spec, issues, options);
  const lim = spec.map("limits");
  const maxBodyBytes = lim?.int("maxBodyBytes", { min: 1024, max: 1024 ** 3 }) ?? d.limits.maxBodyBytes;
  const bodyReadMs = lim?.int("bodyReadMs", { min: 100, max: 3_600_000 }) ?? d.limits.bodyReadMs;
  lim?.done();
  const timeouts = parseTimeouts(spec, issues);
  const r = spec.map("retry");
  const retry = {
    maxAttempts: r?.int("maxAttempts", { min: 1, max: 10 }) ?? d.retry.maxAttempts,
    budgetPercent: r?.int("budgetPercent", { min: 0, max: 100 }) ?? d.retry.budgetPercent,
    minRetryConcurrency:
      r?.int("minRetryConcurrency", { min: 0, max: 10_000 }) ?? d.retry.minRetryConcurrency,
  };
  r?.done();
  const st = spec.map("streaming");
  const heartbeatMs = st?.int("heartbeatMs", { min: 0, max: 600_000 }) ?? d.streaming.heartbeatMs;
  st?.done();
  if (st && heartbeatMs > 0 && heartbeatMs < 100)
    issues.error(st.at("heartbeatMs"), `must be 0 (off) or at least 100, got ${heartbeatMs}`);
  const sd = spec.map("shutdown");
  const drainMs = sd?.int("drainMs", { min: 0, max: 3_600_000 }) ?? d.shutdown.drainMs;
  sd?.done();
  const budgets = parseBudgetStore(spec, issues, options.env ?? process.env);
  const batches = parseBatchSettings(spec, issues, budgets.redis.url);
  const rg = spec.map("region");
  const region = {
    name:
      rg?.string("name", {
        pattern: /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/,
        patternHint: "lower-case letters, digits and '-', as a region's name",
      }) ?? d.region.name,
  };
  rg?.done();
  const k = spec.map("kubernetes");
  const kubernetes = { kubeconfig: k?.string("kubeconfig") ?? d.kubernetes.kubeconfig };
  k?.done();
  const g = spec.map("logging");
  const logging = {
    prompts: g?.bool("prompts") ?? d.logging.prompts,
    destination: g?.string("destination") ?? d.logging.destination,
  };
  g?.done();
  spec.done();
  return {
    listen,
    admin: { host: adminHost, port: adminPort, separate, token, tokenEnv },
    auth,
    limits: { maxBodyBytes, bodyReadMs },
    timeouts,
    retry,
    streaming: { heartbeatMs },
    shutdown: { drainMs },
    budgets,
    batches,
    region,
    kubernetes,
    logging,
  };
}

/** An admin token from the environment: at least 16 characters, else none (the error is reported). */
function envSecret(value: string | undefined): Secret | null {
  return value !== undefined && value.length >= 16 ? new Secret(value) : null;
}

function parseTimeouts(spec: FieldReader, issues: IssueList): GatewaySettings["timeouts"] {
  const d = DEFAULT_GATEWAY_SETTINGS.timeouts;
  const t = spec.map("timeouts");
  const range = { min: 1, max: 24 * 3_600_000 };
  const out = {
    connectMs: t?.int("connectMs", range) ?? d.connectMs,
    firstByteMs: t?.int("firstByteMs", range) ?? d.firstByteMs,
    idleMs: t?.int("idleMs", range) ?? d.idleMs,
    totalMs: t?.int("totalMs", range) ?? d.totalMs,
  };
  t?.done();
  if (t) {
    for (const key of ["connectMs", "firstByteMs", "idleMs"] as const) {
      if (out[key] > out.totalMs)
        issues.error(t.at(key), `is ${out[key]}, longer than totalMs (${out.totalMs})`);
    }
  }
  return out;
}
