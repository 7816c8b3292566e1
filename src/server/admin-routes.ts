// The gateway's admin surface: liveness, readiness (503 while draining or while a pool has no routable
// endpoint), Prometheus metrics, endpoint snapshots, the config and its history (admin-config-routes.ts),
// and /admin/explain. On a listener of its own (127.0.0.1:9090 by default); every /admin/* request must
// carry the admin token (`Authorization: Bearer …`); /health, /ready and /metrics need none.

import { createHash, timingSafeEqual } from "node:crypto";
import type http from "node:http";
import { formatClock, formatWindow } from "../budget/time-window.js";
import type { Secret } from "../config/secret.js";
import type { ConfigControl } from "../control/config-control.js";
import type { DiscoveryStatus } from "../discovery/inference-pool-discovery.js";
import { snapshotOf } from "../endpoints/snapshot.js";
import { GatewayError, sendBody } from "../errors/gateway-error.js";
import { readAdminJson, sendJson } from "../http/admin-body.js";
import type { GatewayRuntime } from "../pipeline/runtime.js";
import { PROMETHEUS_CONTENT_TYPE } from "../telemetry/metrics.js";
import { routeConfigAdmin } from "./admin-config-routes.js";
import { routeRolloutAdmin } from "./admin-rollout-routes.js";
import { explainRequest } from "./explain.js";
import { regionSummary } from "./region-summary.js";

/** What the admin surface reads of the running gateway beyond the request path's view. */
export interface AdminView extends GatewayRuntime {
  readonly isDraining: boolean;
  readonly activeRequests: number;
  /** The bearer token /admin/* requires. */
  readonly adminToken: Secret;
  /** The config history and its changes; null when the gateway keeps none. */
  readonly control: ConfigControl | null;
  /** Each discovered pool's watcher status (none when no pool uses discovery). */
  discoveryStatus(): ReadonlyMap<string, DiscoveryStatus>;
}

/** Whether the request carries the admin token (compared in constant time). */
function authorized(gw: AdminView, req: http.IncomingMessage): boolean {
  const h = req.headers.authorization;
  if (typeof h !== "string" || !h.startsWith("Bearer ")) return false;
  const digest = (v: string) => createHash("sha256").update(v).digest();
  return timingSafeEqual(digest(h.slice("Bearer ".length).trim()), digest(gw.adminToken.reveal()));
}

export { sendJson };

/** Where a `tokengate director` reads this gateway's region summary (no token, like /metrics). */
export const REGION_SUMMARY_PATH = "/admin/region/summary";

/** Health, readiness, metrics and the admin API; returns false when the path is not one of them. */
export function routeAdmin(
  gw: AdminView,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  fallback404: boolean,
): boolean {
  const [path = "/", search = ""] = (req.url ?? "/").split("?", 2);
  // The region summary is a director's to poll, like /metrics: no token.
  if ((path.startsWith("/admin/") || path === "/admin") && path !== REGION_SUMMARY_PATH) {
    if (!authorized(gw, req)) {
      req.resume();
      res.setHeader("www-authenticate", 'Bearer realm="tokengate-admin"');
      const missing = req.headers.authorization === undefined;
      new GatewayError(
        "admin_unauthorized",
        missing
          ? "the admin API needs the admin token: Authorization: Bearer <token> (GatewayConfig admin.tokenEnv)"
          : "the admin token is wrong",
      ).send(res, "none");
      return true;
    }
    if (routeConfigAdmin(gw.control, req, res, path, new URLSearchParams(search))) return true;
    if (routeRolloutAdmin(gw, gw.control, req, res, path)) return true;
  }
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
      // An unreachable budget store does not take the replica out of service: its configured mode
      // (refuse budgeted tenants, or admit against a local share) applies, and this says so.
      // Discovery that lost the API server keeps serving its last known pods (ready, and says so); a
      // discovered pool never listed has no endpoints, so it is in pools_without_endpoints.
      const discovery = Object.fromEntries(
        [...gw.discoveryStatus()].map(([pool, st]) => [
          pool,
          { synced: st.synced, api_reachable: st.connected, endpoints: st.endpoints, error: st.error },
        ]),
      );
      sendJson(res, notReady.length === 0 ? 200 : 503, {
        ready: notReady.length === 0,
        pools_without_endpoints: notReady,
        budget_store: { store: gw.budgets.kind, up: gw.budgets.up },
        ...(Object.keys(discovery).length > 0 ? { discovery } : {}),
      });
      return true;
    }
    if (path === REGION_SUMMARY_PATH) {
      const g = gw.config.gateway;
      sendJson(
        res,
        200,
        regionSummary(gw, gw.regionWindow, { region: g.region.name, draining: gw.isDraining }),
      );
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
    if (path === "/admin/budgets") {
      budgetView(gw).then(
        (v) => sendJson(res, 200, v),
        (err: unknown) => new GatewayError("internal_error", String(err)).send(res, "none"),
      );
      return true;
    }
    if (path === "/admin/config") {
      sendJson(res, 200, {
        version: gw.config.version,
        current: gw.control?.history.current() ?? null,
        sources: gw.config.sources,
        documents: gw.config.documents,
      });
      return true;
    }
  }
  if (req.method === "POST" && (path === "/admin/endpoints/drain" || path === "/admin/endpoints/undrain")) {
    setDraining(gw, req, res, path.endsWith("/drain"));
    return true;
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
  readAdminJson(req, res, async (input) => {
    const kind = input.kind === "completion" ? "completion" : "chat";
    // The admin names the tenant a what-if runs for (weighted targets stick by it); the explained
    // request's own credentials are not checked here.
    const tenant = typeof input.tenant === "string" && input.tenant !== "" ? input.tenant : null;
    sendJson(res, 200, explainRequest(gw, kind, input.body, req.headers, tenant));
  });
}

/**
 * POST /admin/endpoints/drain (or undrain) `{"pool": …, "endpoint": …}`: a drained engine takes no new
 * request, its streams finish, and it stays listed (for a runtime rollback: drain, `kubectl rollout
 * undo`, undrain). `endpoint` is its name or URL; `pool` may be left out when the name is unique.
 */
function setDraining(
  gw: AdminView,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  drain: boolean,
): void {
  readAdminJson(req, res, async (body) => {
    const name = body.endpoint;
    const pool = body.pool;
    if (typeof name !== "string" || name === "") {
      throw new GatewayError("invalid_request", "endpoint: expected an endpoint's name or URL", {
        param: "endpoint",
      });
    }
    if (pool !== undefined && typeof pool !== "string") {
      throw new GatewayError("invalid_request", "pool: expected a pool name", { param: "pool" });
    }
    const found = [...gw.generation.engines.keys()].filter(
      (e) =>
        (e.name === name || e.url === name) &&
        (pool === undefined || gw.pools.get(pool)?.endpoints.includes(e)),
    );
    if (found.length !== 1) {
      throw new GatewayError(
        found.length === 0 ? "not_found" : "invalid_request",
        found.length === 0
          ? `no endpoint ${name}${pool ? ` in pool ${pool}` : ""}`
          : `endpoint ${name} is in several pools; name the pool`,
        { param: found.length === 0 ? "endpoint" : "pool" },
      );
    }
    const ep = found[0]!;
    ep.draining = drain;
    if (!drain) ep.onCapacity?.();
    gw.log.event(drain ? "endpoint.drained-by-admin" : "endpoint.undrained-by-admin", {
      pool: ep.pool,
      endpoint: ep.name,
      in_flight: ep.inflightRequests,
      actor: String(req.headers["x-ai-actor"] ?? "admin"),
    });
    sendJson(res, 200, snapshotOf(ep, Date.now()));
  });
}

/** GET /admin/budgets: each budgeted tenant's limits and its use of the current budget day. */
async function budgetView(gw: GatewayRuntime): Promise<Record<string, unknown>> {
  const b = gw.config.budgets;
  const now = new Date();
  const tenants = await Promise.all(
    [...b.tenants.values()].map(async (t) => ({
      tenant: t.name,
      limits: {
        dailyInputTokens: t.dailyInputTokens,
        dailyOutputTokens: t.dailyOutputTokens,
        concurrentRequests: t.concurrentRequests,
        maxSingleInputTokens: t.maxSingleInputTokens,
        allowedWindows: t.allowedWindows.map(formatWindow),
      },
      usage: await gw.budgets.usage(t.name, now),
    })),
  );
  return { time_zone: b.timeZone, day_starts_at: formatClock(b.dayStartsAtMinutes), tenants };
}
