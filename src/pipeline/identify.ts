// Who is calling: the tenant comes from an API key mapped in config, or from X-AI-Tenant only when the
// caller is a configured trusted upstream (shared secret and/or address list). A client never names its
// own tenant. The trace id is taken from X-AI-Trace-Id or is the W3C trace id (trace-context.ts), and always returned.

import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { BlockList } from "node:net";
import type { AuthSettings } from "../config/gateway-settings.js";
import { GatewayError } from "../errors/gateway-error.js";

export interface Identity {
  tenant: string;
  /** How the tenant was established. */
  via: "api_key" | "trusted_upstream" | "anonymous" | "batch";
  /** A Batch API job's line (`via: "batch"`): the job and the line's custom_id. */
  batch?: { readonly id: string; readonly customId: string };
}

/**
 * The header with which the gateway's own batch runner sends a job's lines through the request path
 * for the job's tenant; its value is a secret made at start that never leaves the process.
 */
export const BATCH_SECRET_HEADER = "x-tokengate-batch";

export class Identifier {
  private readonly keys: Map<string, string>;
  private readonly trusted: BlockList | null;
  private readonly secret: Buffer | null;
  private readonly secretHeader: string;

  constructor(
    private readonly auth: AuthSettings,
    trustedList: BlockList | null,
    /** The batch runner's secret (BATCH_SECRET_HEADER); null: no runner. */
    private readonly batchSecret: Buffer | null = null,
  ) {
    this.keys = new Map(auth.apiKeys.map((k) => [k.keySha256, k.tenant]));
    this.trusted = auth.trustedUpstreams && auth.trustedUpstreams.addresses.length > 0 ? trustedList : null;
    this.secret = auth.trustedUpstreams?.sharedSecret
      ? Buffer.from(auth.trustedUpstreams.sharedSecret)
      : null;
    this.secretHeader = (auth.trustedUpstreams?.secretHeader ?? "x-ai-upstream-secret").toLowerCase();
  }

  identify(headers: IncomingHttpHeaders, remoteAddress: string | undefined): Identity {
    if (this.batchSecret !== null && headers[BATCH_SECRET_HEADER] !== undefined) {
      const batch = this.batchLine(headers);
      if (batch) return batch;
    }
    const claimed = headers["x-ai-tenant"];
    if (typeof claimed === "string" && claimed !== "") {
      if (!this.isTrustedUpstream(headers, remoteAddress)) {
        throw new GatewayError(
          "untrusted_tenant_header",
          "X-AI-Tenant is accepted only from a configured trusted upstream; authenticate with an API key instead",
          { param: "X-AI-Tenant" },
        );
      }
      return { tenant: claimed, via: "trusted_upstream" };
    }
    const key = bearer(headers);
    if (key !== null) {
      const tenant = this.keys.get(createHash("sha256").update(key).digest("hex"));
      if (tenant === undefined)
        throw new GatewayError("invalid_api_key", "Incorrect API key provided.", { param: "Authorization" });
      return { tenant, via: "api_key" };
    }
    if (this.auth.allowAnonymous) return { tenant: this.auth.defaultTenant, via: "anonymous" };
    throw new GatewayError("missing_api_key", "An API key is required (Authorization: Bearer <key>).", {
      param: "Authorization",
    });
  }

  /** The runner's own request for a job's line: the secret matches and names tenant, job and line. */
  private batchLine(headers: IncomingHttpHeaders): Identity | null {
    const given = headers[BATCH_SECRET_HEADER];
    if (typeof given !== "string" || !equalSecret(Buffer.from(given), this.batchSecret!)) return null;
    const tenant = headers["x-ai-tenant"];
    const id = headers["x-ai-batch-id"];
    const customId = headers["x-ai-batch-custom-id"];
    if (typeof tenant !== "string" || typeof id !== "string" || typeof customId !== "string") return null;
    return { tenant, via: "batch", batch: { id, customId: decodeURIComponent(customId) } };
  }

  private isTrustedUpstream(headers: IncomingHttpHeaders, remoteAddress: string | undefined): boolean {
    const up = this.auth.trustedUpstreams;
    if (!up) return false;
    if (this.trusted) {
      if (!remoteAddress) return false;
      const addr = remoteAddress.startsWith("::ffff:") ? remoteAddress.slice(7) : remoteAddress;
      const family = addr.includes(":") ? "ipv6" : "ipv4";
      if (!this.trusted.check(addr, family)) return false;
    }
    if (this.secret) {
      const given = headers[this.secretHeader];
      if (typeof given !== "string") return false;
      if (!equalSecret(Buffer.from(given), this.secret)) return false;
    } else if (!this.trusted) {
      // Neither a secret nor addresses could be established (e.g. the secret's env var is unset): trust nobody.
      return false;
    }
    return true;
  }
}

function bearer(headers: IncomingHttpHeaders): string | null {
  const h = headers.authorization;
  if (typeof h === "string" && h.startsWith("Bearer ")) return h.slice(7).trim() || null;
  const k = headers["x-api-key"];
  return typeof k === "string" && k !== "" ? k : null;
}

function equalSecret(given: Buffer, secret: Buffer): boolean {
  return given.length === secret.length && timingSafeEqual(given, secret);
}
