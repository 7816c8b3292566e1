// vLLM's --api-key (or VLLM_API_KEY), as its AuthenticationMiddleware checks it: a path starting with
// /v1 needs `Authorization: Bearer <key>` (scheme case-insensitive), else 401 {"error": "Unauthorized"};
// OPTIONS requests and every other path (/health, /metrics, /tokenize, /admin/*) pass unchecked.

import { createHash, timingSafeEqual } from "node:crypto";

/** The body vLLM answers 401 with (not its usual error shape). */
export const UNAUTHORIZED = { error: "Unauthorized" } as const;

/** Why an --api-key value cannot be used, or null. vLLM treats an empty key as none. */
export function apiKeyProblem(key: string): string | null {
  return key === "" ? "expected a key, got an empty string" : null;
}

const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest();

export class ApiKeyGuard {
  // Compared as digests, as vLLM does: equal lengths for timingSafeEqual, whatever the caller sends.
  private readonly digest: Buffer;

  constructor(key: string) {
    this.digest = sha256(key);
  }

  /** Whether the request may go on; `path` is the URL path without its query. */
  admits(method: string, path: string, authorization: string | undefined): boolean {
    if (method === "OPTIONS" || !path.startsWith("/v1")) return true;
    if (!authorization) return false;
    // Python's str.partition(" "): the scheme before the first space, the token after it.
    const sp = authorization.indexOf(" ");
    const scheme = sp < 0 ? authorization : authorization.slice(0, sp);
    if (scheme.toLowerCase() !== "bearer") return false;
    return timingSafeEqual(sha256(sp < 0 ? "" : authorization.slice(sp + 1)), this.digest);
  }
}
