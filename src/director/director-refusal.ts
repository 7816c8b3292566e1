// The director's refusals: a request no region may take — `residency_unavailable` (every region the
// tenant's data may be served in is down), `model_unavailable` (no region serves the model), `no_region`
// (every region is out for another reason) — as a 503 in the gateway's OpenAI error shape, with
// Retry-After and a message that names the constraint.

import { GatewayError } from "../errors/gateway-error.js";
import type { DirectorDecision } from "./director-types.js";

export type DirectorRefusalCode = "residency_unavailable" | "model_unavailable" | "no_region";

/** Either kind of error the director answers with: since its codes are the gateway's, one. */
export type DirectorError = GatewayError;

/**
 * The refusal of a `refuse` decision. Retry-After is one polling interval (at least a second): the
 * earliest a region's state can have changed.
 */
export function refusalOf(
  decision: DirectorDecision & { kind: "refuse" },
  pollIntervalMs: number,
): GatewayError {
  return new GatewayError(decision.code as DirectorRefusalCode, decision.message, {
    retryAfterSeconds: Math.max(1, Math.ceil(pollIntervalMs / 1000)),
    fallbackOptions: ["retry_later"],
  });
}
