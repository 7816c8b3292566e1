// The legacy side of a rollout or a route rollback: the request goes to `spec.legacy.url` (the service
// traffic went to before tokengate) with its own path and body — no pool, no queue, no picker; a
// connection that fails before anything is sent is tried again. Its outcome is written into the record
// as an engine's would be, so the log line and the rollout's gates read it the same way.

import type { ServerResponse } from "node:http";
import type { GatewaySettings } from "../config/gateway-settings.js";
import { GatewayError } from "../errors/gateway-error.js";
import { attemptUpstream, type ClientGone } from "../proxy/upstream-attempt.js";
import { API_PATHS } from "./forward.js";
import type { RequestRecord } from "./request-record.js";
import type { LegacyRequest } from "./rollout-stage.js";
import type { GatewayRuntime } from "./runtime.js";

const LEGACY = "legacy";

export async function forwardToLegacy(
  gw: GatewayRuntime,
  settings: GatewaySettings,
  legacy: LegacyRequest,
  res: ServerResponse,
  rec: RequestRecord,
  clientGone: ClientGone,
  traceHeaders: Record<string, string>,
): Promise<void> {
  const maxAttempts = Math.max(1, settings.retry.maxAttempts);
  const inflight = gw.metrics.inflight.labels(LEGACY, LEGACY);
  rec.dispatchedAt = performance.now();
  for (;;) {
    rec.attempts++;
    rec.endpoint = LEGACY;
    inflight.inc();
    let outcome: Awaited<ReturnType<typeof attemptUpstream>>;
    try {
      outcome = await attemptUpstream(
        gw.dispatcherFor(legacy.url),
        {
          url: legacy.url,
          path: API_PATHS[legacy.kind],
          body: legacy.body,
          stream: legacy.stream,
          clientWantsUsage: legacy.clientWantsUsage,
          responseHeaders: {
            "x-ai-route-pool": LEGACY,
            "x-ai-route-reason": rec.routeReason ?? LEGACY,
          },
          traceId: rec.traceId,
          upstreamHeaders: { ...traceHeaders, ...legacy.labels },
          timeouts: settings.timeouts,
        },
        res,
        clientGone,
      );
    } finally {
      inflight.dec();
    }
    switch (outcome.kind) {
      case "done": {
        rec.recordAnswer(outcome, outcome.status);
        return;
      }
      case "cancelled":
        rec.firstTokenAt = outcome.firstTokenAt;
        rec.clientCancelled = true;
        rec.status = "client_cancelled";
        rec.httpStatus = 499;
        return;
      case "timeout_after_start":
        rec.status = "broken_stream";
        rec.errorCode = "upstream_timeout";
        rec.httpStatus = 200;
        return;
      case "total_timeout":
        throw legacyError(
          "upstream_timeout",
          `did not answer within timeouts.totalMs (${settings.timeouts.totalMs} ms)`,
        );
      case "retryable": {
        rec.addFallback(`retry:${LEGACY}:${outcome.reason}${outcome.status ? `=${outcome.status}` : ""}`);
        // Only a connection that never carried the request is tried again: the legacy service is one
        // address (a Service in front of its pods), and a second try of a sent request doubles its work.
        if (outcome.reason === "connect" && rec.attempts < maxAttempts) continue;
        if (outcome.reason === "status" && (outcome.status === 429 || outcome.status === 503)) {
          throw legacyError("upstream_overloaded", `is full (${outcome.detail.slice(0, 200)})`, {
            status: outcome.status === 429 ? 429 : 503,
            retryAfterSeconds: outcome.retryAfterSeconds ?? 1,
          });
        }
        throw legacyError(
          outcome.reason === "timeout" ? "upstream_timeout" : "upstream_unavailable",
          `did not answer (${outcome.detail}) after ${rec.attempts} attempt(s)`,
        );
      }
    }
  }
}

function legacyError(
  code: "upstream_timeout" | "upstream_unavailable" | "upstream_overloaded",
  what: string,
  extra: { status?: 429 | 503; retryAfterSeconds?: number } = {},
): GatewayError {
  return new GatewayError(code, `the legacy service (spec.legacy) ${what}`, {
    route: LEGACY,
    retryAfterSeconds: extra.retryAfterSeconds ?? 1,
    fallbackOptions: ["retry_later"],
    ...(extra.status ? { status: extra.status } : {}),
  });
}
