// GatewayConfig: the gateway's own settings (listeners, who is a tenant, limits, timeouts, retries, logging).
// Every field has a default, so the document itself is optional.

import { createHash } from "node:crypto";
import { BlockList, isIP } from "node:net";
import { type BatchSettings, DEFAULT_BATCHES, parseBatchSettings } from "./batch-settings.js";
import { type BudgetStoreSettings, DEFAULT_BUDGET_STORE, parseBudgetStore } from "./budget-store-settings.js";
import { deepFreeze } from "./deep-freeze.js";
import type { Envelope } from "./envelope.js";
import type { IssueList } from "./errors.js";
import { ENV_NAME, FieldReader, quoted } from "./fields.js";
import { Secret } from "./secret.js";

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

export interface ApiKeyEntry {
  /** Lowercase hex SHA-256 of the key; plain `key` values are hashed at load so only hashes stay in memory. */
  readonly keySha256: string;
  readonly tenant: string;
}

/** An IP address or CIDR block, e.g. `10.0.0.0/8` or `::1`. */
export interface TrustedAddress {
  readonly address: string;
  readonly prefix: number;
  readonly family: "ipv4" | "ipv6";
}

/**
 * Callers allowed to name the tenant in `X-AI-Tenant`. When both a secret and addresses are configured a caller
 * needs both; with one of them, that one suffices.
 */
export interface TrustedUpstreams {
  /** The secret itself (from `sharedSecret`, or read from `sharedSecretEnv` at load); null when the env var was unset. */
  readonly sharedSecret: string | null;
  readonly sharedSecretEnv: string | null;
  /** Request header carrying the secret; default `X-AI-Upstream-Secret`. */
  readonly secretHeader: string;
  /** Empty means any address (then the secret is required). */
  readonly addresses: readonly TrustedAddress[];
}

export interface AuthSettings {
  readonly apiKeys: readonly ApiKeyEntry[];
  /** null: no caller may set `X-AI-Tenant`. */
  readonly trustedUpstreams: TrustedUpstreams | null;
  /** Default false: requests without a valid key or trusted tenant get 401. */
  readonly allowAnonymous: boolean;
  /** Tenant of anonymous requests; default `anonymous`. */
  readonly defaultTenant: string;
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
  auth: { apiKeys: [], trustedUpstreams: null, allowAnonymous: false, defaultTenant: "anonymous" },
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

export interface EnvOptions {
  /** Where `*Env` fields are read; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** An unset env variable is an error (default) or a warning (`config validate` on a machine without secrets). */
  readonly missingEnv?: "error" | "warning";
}

/** Tenants become metric labels and log fields. */
const TENANT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const TENANT_HINT = "letters, digits, '.', '_' and '-', at most 64 characters";
const HEADER = /^[A-Za-z0-9-]+$/;
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

function parseAuth(spec: FieldReader, issues: IssueList, options: EnvOptions): AuthSettings {
  const d = DEFAULT_GATEWAY_SETTINGS.auth;
  const f = spec.map("auth");
  if (!f) return d;
  const apiKeys: ApiKeyEntry[] = [];
  (f.list("apiKeys") ?? []).forEach((item, i) => {
    const entry = parseApiKey(FieldReader.of(item, f.at("apiKeys", i), issues));
    if (!entry) return;
    if (apiKeys.some((e) => e.keySha256 === entry.keySha256)) {
      issues.error(f.at("apiKeys", i), "the same key is listed twice");
    } else {
      apiKeys.push(entry);
    }
  });
  const trustedUpstreams = parseTrusted(f, issues, options);
  const allowAnonymous = f.bool("allowAnonymous") ?? d.allowAnonymous;
  const defaultTenant =
    f.string("defaultTenant", { pattern: TENANT, patternHint: TENANT_HINT }) ?? d.defaultTenant;
  f.done();
  return { apiKeys, trustedUpstreams, allowAnonymous, defaultTenant };
}

function parseApiKey(k: FieldReader | null): ApiKeyEntry | undefined {
  if (!k) return undefined;
  const key = k.string("key");
  const keySha256 = k.string("keySha256", { pattern: /^[0-9a-fA-F]{64}$/, patternHint: "64 hex digits" });
  const tenant = k.string("tenant", { required: true, pattern: TENANT, patternHint: TENANT_HINT });
  k.done();
  if (k.has("key") === k.has("keySha256")) {
    k.issues.error(k.path, 'set exactly one of "key" and "keySha256"');
    return undefined;
  }
  if (key !== undefined && key.length < 8) {
    k.issues.error(k.at("key"), "must be at least 8 characters");
    return undefined;
  }
  const hash = key !== undefined ? createHash("sha256").update(key).digest("hex") : keySha256?.toLowerCase();
  if (hash === undefined || tenant === undefined) return undefined;
  return { keySha256: hash, tenant };
}

function parseTrusted(auth: FieldReader, issues: IssueList, options: EnvOptions): TrustedUpstreams | null {
  const t = auth.map("trustedUpstreams");
  if (!t) return null;
  const literal = t.string("sharedSecret") ?? null;
  const sharedSecretEnv =
    t.string("sharedSecretEnv", { pattern: ENV_NAME, patternHint: "an environment variable name" }) ?? null;
  const secretHeader =
    t.string("secretHeader", { pattern: HEADER, patternHint: "an HTTP header name" }) ??
    "X-AI-Upstream-Secret";
  const addresses: TrustedAddress[] = [];
  (t.list("addresses") ?? []).forEach((item, i) => {
    const a = parseAddress(item);
    if (a) addresses.push(a);
    else issues.error(t.at("addresses", i), `${quoted(item)} is not an IP address or CIDR block`);
  });
  t.done();
  if (t.has("sharedSecret") && t.has("sharedSecretEnv")) {
    issues.error(t.path, 'set at most one of "sharedSecret" and "sharedSecretEnv"');
  }
  if (!t.has("sharedSecret") && !t.has("sharedSecretEnv") && !t.has("addresses")) {
    issues.error(
      t.path,
      'set "sharedSecret", "sharedSecretEnv" or "addresses"; otherwise anyone could claim a tenant',
    );
  }
  if (literal !== null && literal.length < 16)
    issues.error(t.at("sharedSecret"), "must be at least 16 characters");
  let sharedSecret = literal;
  if (sharedSecretEnv !== null) {
    const value = (options.env ?? process.env)[sharedSecretEnv];
    if (value === undefined || value === "") {
      const message = `environment variable ${sharedSecretEnv} is not set (the gateway will not start without it)`;
      if (options.missingEnv === "warning") issues.warn(t.at("sharedSecretEnv"), message);
      else issues.error(t.at("sharedSecretEnv"), message);
    } else if (value.length < 16) {
      issues.error(
        t.at("sharedSecretEnv"),
        `environment variable ${sharedSecretEnv} must hold at least 16 characters`,
      );
    } else {
      sharedSecret = value;
    }
  }
  return { sharedSecret, sharedSecretEnv, secretHeader, addresses };
}

/** `10.0.0.0/8`, `192.168.1.7`, `::1`, `fd00::/8`. */
export function parseAddress(item: unknown): TrustedAddress | undefined {
  if (typeof item !== "string") return undefined;
  const [address = "", prefixText, extra] = item.split("/");
  const version = isIP(address);
  if (version === 0 || extra !== undefined) return undefined;
  const bits = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? bits : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : -1;
  if (prefix < 0 || prefix > bits) return undefined;
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

/** A `net.BlockList` matching the trusted addresses, for checking `socket.remoteAddress`. */
export function trustedAddressList(addresses: readonly TrustedAddress[]): BlockList {
  const list = new BlockList();
  for (const a of addresses) list.addSubnet(a.address, a.prefix, a.family);
  return list;
}
