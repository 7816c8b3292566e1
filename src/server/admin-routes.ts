// The gateway's admin surface: liveness, readiness (503 while draining or while a pool has no routable
// endpoint), Prometheus metrics, endpoint snapshots, the loaded config, and /admin/explain. Served on
// the main listener, or on its own when GatewayConfig sets admin.port.

import type http from "node:http";
import { snapshotOf } from "../endpoints/snapshot.js";
import { GatewayError, sendBody } from "../errors/gateway-error.js";
import { PROMETHEUS_CONTENT_TYPE } from "../telemetry/metrics.js";
import { explainRequest } from "./explain.js";
import type { GatewayRuntime } from "./gateway-runtime.js";

/** What the admin surface reads of the running gateway beyond the request path's view. */
export interface AdminView extends GatewayRuntime {
  readonly isDraining: boolean;
  readonly activeRequests: number;
}

export function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  sendBody(res, status, { "content-type": "application/json" }, JSON.stringify(value));
}

/** Health, readiness, metrics and the admin API; returns false when the path is not one of them. */
export function routeAdmin(
  gw: AdminView,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  fallback404: boolean,
): boolean {
  const path = (req.url ?? "/").split("?", 1)[0];
  if (req.method === "GET") {
    if (path === "/health") {
      sendBody(res, 200, { "content-type": "text/plain" }, "ok\n");
      return true;
    }
    if (path === "/ready" && gw.isDraining) {
      sendJson(res, 503, { ready: false, draining: true, in_flight: gw.activeRequests });
      return true;
    }
    if (path === "/ready") {
      const now = Date.now();
      const notReady = [...gw.pools.values()]
        .filter((p) => !p.endpoints.some((e) => e.routable(now)))
        .map((p) => p.name);
      sendJson(res, notReady.length === 0 ? 200 : 503, {
        ready: notReady.length === 0,
        pools_without_endpoints: notReady,
      });
      return true;
    }
    if (path === "/metrics") {
      sendBody(res, 200, { "content-type": PROMETHEUS_CONTENT_TYPE }, gw.metrics.registry.expose());
      return true;
    }
    if (path === "/admin/endpoints") {
      const now = Date.now();
      sendJson(
        res,
        200,
        [...gw.pools.values()].map((p) => ({
          pool: p.name,
          endpoints: p.endpoints.map((e) => snapshotOf(e, now)),
        })),
      );
      return true;
    }
    if (path === "/admin/config") {
      sendJson(res, 200, {
        version: gw.config.version,
        sources: gw.config.sources,
        documents: gw.config.documents,
      });
      return true;
    }
  }
  if (req.method === "POST" && path === "/admin/explain") {
    explain(gw, req, res);
    return true;
  }
  if (fallback404) {
    const err = new GatewayError("not_found", `no route for ${req.method} ${path}`);
    req.resume();
    err.send(res, "none");
    return true;
  }
  return false;
}

/** POST /admin/explain: `{ "kind": "chat" | "completion", "body": {...}, "tenant"?: "..." }` plus the request's X-AI-* headers. */
function explain(gw: GatewayRuntime, req: http.IncomingMessage, res: http.ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    try {
      const input = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        kind?: unknown;
        body?: unknown;
        tenant?: unknown;
      };
      const kind = input.kind === "completion" ? "completion" : "chat";
      // The admin names the tenant a what-if runs for (weighted targets stick by it); the explained
      // request's own credentials are not checked here.
      const tenant = typeof input.tenant === "string" && input.tenant !== "" ? input.tenant : null;
      sendJson(res, 200, explainRequest(gw, kind, input.body, req.headers, tenant));
    } catch (err) {
      const e =
        err instanceof GatewayError
          ? err
          : new GatewayError("invalid_json", `explain takes {"kind", "body"}: ${(err as Error).message}`, {
              param: "body",
            });
      e.send(res, "explain");
    }
  });
}
