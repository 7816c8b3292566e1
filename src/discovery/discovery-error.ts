// The errors Kubernetes discovery reports, each with a stable code: they end up in the gateway's
// readiness answer, metrics and logs, so an operator can tell RBAC from an unreachable API server.

export type DiscoveryErrorCode =
  /** No answer from the API server: refused, reset, DNS, timeout, or a 502/503/504 in front of it. */
  | "kube_api_unreachable"
  /** The API server answered with an error status (401, 403, 404, 500, ...). */
  | "kube_api_status"
  /** 410 Gone: the resourceVersion asked for is older than the server keeps; a fresh list is needed. */
  | "kube_resource_expired"
  /** An answer that is not the JSON the API defines. */
  | "kube_bad_response"
  /** The kubeconfig or in-cluster service account could not be loaded or used. */
  | "kubeconfig_invalid"
  | "inference_pool_not_found"
  | "inference_pool_invalid"
  /** `start()` saw no complete list of the pool and its pods in time (discovery keeps retrying). */
  | "discovery_start_timeout";

/** An error of discovery, with its code and, for HTTP answers, the status. */
export class DiscoveryError extends Error {
  override readonly name = "DiscoveryError";

  constructor(
    readonly code: DiscoveryErrorCode,
    message: string,
    /** The HTTP status of the answer, when there was one. */
    readonly status: number | null = null,
  ) {
    super(message);
  }

  /** `code: message`, as status() and logs show it. */
  describe(): string {
    return `${this.code}: ${this.message}`;
  }
}

/** `err` as a DiscoveryError, wrapping anything else under `code`. */
export function asDiscoveryError(err: unknown, code: DiscoveryErrorCode): DiscoveryError {
  if (err instanceof DiscoveryError) return err;
  return new DiscoveryError(code, err instanceof Error ? err.message : String(err));
}
