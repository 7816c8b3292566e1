// GatewayConfig `auth`: who a caller is — API keys (kept as SHA-256 hashes only), upstreams trusted to
// name the tenant in `X-AI-Tenant` (a shared secret, addresses, or both), and what an anonymous caller
// gets. Read by identify.ts on every request; parsed here with the rest of GatewayConfig.

import { createHash } from "node:crypto";
import { BlockList, isIP } from "node:net";
import { deepFreeze } from "./deep-freeze.js";
import type { IssueList } from "./errors.js";
import { ENV_NAME, type EnvOptions, FieldReader, quoted } from "./fields.js";

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

/** No keys, no trusted upstream, anonymous callers refused. */
export const DEFAULT_AUTH: AuthSettings = deepFreeze({
  apiKeys: [],
  trustedUpstreams: null,
  allowAnonymous: false,
  defaultTenant: "anonymous",
});

/** Tenants become metric labels and log fields. */
const TENANT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const TENANT_HINT = "letters, digits, '.', '_' and '-', at most 64 characters";
const HEADER = /^[A-Za-z0-9-]+$/;

/** `spec.auth`, validated; the defaults without one. */
export function parseAuth(spec: FieldReader, issues: IssueList, options: EnvOptions): AuthSettings {
  const d = DEFAULT_AUTH;
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
