// The director's own surface beside the API: the answer API for DNS/GSLB callers (`/director/answer`,
// which decides as a real send does, or explains with `dry_run=1`), `/director/explain`,
// `/director/regions`, summary pushes (`POST /director/summary`), and `/health`, `/ready`, `/metrics`.

import type http from "node:http";
import { GatewayError, sendBody } from "../errors/gateway-error.js";
import { readAdminJson, sendJson } from "../http/admin-body.js";
import { PROMETHEUS_CONTENT_TYPE } from "../telemetry/metrics.js";
import type { RequestLog } from "../telemetry/request-log.js";
import { countDecision, decisionLine, logDecision } from "./decision-record.js";
import type { DirectorMetrics } from "./director-metrics.js";
import { queryOfParams } from "./director-query.js";
import { refusalOf } from "./director-refusal.js";
import type { DirectorConfig, DirectorCore, DirectorDecision, DirectorQuery } from "./director-types.js";
import { checkSummary } from "./summary-check.js";

/** What the routes read of the running director. */
export interface DirectorView {
  readonly config: DirectorConfig;
  readonly core: DirectorCore;
  readonly metrics: DirectorMetrics;
  readonly log: RequestLog;
  readonly clock: () => number;
  /** Ready, or the regions not heard from yet. */
  readiness(): { readonly ready: boolean; readonly waiting: readonly string[] };
  /** A region's summary was pushed (it counts as heard for readiness). */
  pushed(region: string): void;
  /** A trace id for a request with these headers. */
  traceIdOf(headers: http.IncomingHttpHeaders): string;
}

type Route = (
  view: DirectorView,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  params: URLSearchParams,
) => void;

/** Each route by `METHOD path`. */
const ROUTES = new Map<string, Route>([
  ["GET /health", (_v, _req, res) => sendBody(res, 200, { "content-type": "text/plain" }, "ok\n")],
  [
    "GET /ready",
    (view, _req, res) => {
      const r = view.readiness();
      sendJson(res, r.ready ? 200 : 503, { ready: r.ready, waiting_for: r.waiting });
    },
  ],
  [
    "GET /metrics",
    (view, _req, res) =>
      sendBody(res, 200, { "content-type": PROMETHEUS_CONTENT_TYPE }, view.metrics.registry.expose()),
  ],
  [
    "GET /director/regions",
    (view, _req, res) => sendJson(res, 200, { regions: view.core.regions(view.clock()) }),
  ],
  [
    "GET /director/explain",
    (view, req, res, params) => withQuery(view, req, res, params, (q) => explain(view, res, q)),
  ],
  [
    "GET /director/answer",
    (view, req, res, params) => withQuery(view, req, res, params, (q) => answer(view, req, res, q, params)),
  ],
  ["POST /director/summary", (view, req, res) => readAdminJson(req, res, async (b) => push(view, res, b))],
]);

/** Serves the path if it is one of these routes (or under /director/: a 404 or 405); false otherwise. */
export function routeDirector(
  view: DirectorView,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  path: string,
  params: URLSearchParams,
): boolean {
  const route = ROUTES.get(`${req.method} ${path}`);
  if (route) {
    route(view, req, res, params);
    return true;
  }
  const known = [...ROUTES.keys()].some((k) => k.endsWith(` ${path}`));
  if (!known && !path.startsWith("/director/")) return false;
  req.resume();
  const err = known
    ? new GatewayError("method_not_allowed", `${req.method} is not allowed on ${path}`)
    : new GatewayError("not_found", `no route for ${req.method} ${path}`);
  err.send(res, "none");
  return true;
}

function withQuery(
  view: DirectorView,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  params: URLSearchParams,
  fn: (q: DirectorQuery) => void,
): void {
  let q: DirectorQuery;
  try {
    q = queryOfParams(params, view.config);
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    err.send(res, view.traceIdOf(req.headers));
    return;
  }
  fn(q);
}

function gatewayUrlOf(config: DirectorConfig, d: DirectorDecision): string | null {
  return d.kind === "region" ? (config.regions.find((r) => r.name === d.region)?.gatewayUrl ?? null) : null;
}

/** The decision without recording anything, every candidate with its terms or filter reason. */
function explain(view: DirectorView, res: http.ServerResponse, q: DirectorQuery): void {
  const decision = view.core.explain(q, view.clock());
  sendJson(res, 200, { query: q, decision, gateway_url: gatewayUrlOf(view.config, decision) });
}

/**
 * The region for a DNS/GSLB caller: the same decision the L7 door makes for the same inputs (recorded
 * as a send is: affinity, hysteresis), or with `dry_run=1` the explanation only.
 */
function answer(
  view: DirectorView,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  q: DirectorQuery,
  params: URLSearchParams,
): void {
  const started = performance.now();
  const dryRun = ["1", "true"].includes(params.get("dry_run") ?? "");
  const now = view.clock();
  const d = dryRun ? view.core.explain(q, now) : view.core.decide(q, now);
  const traceId = view.traceIdOf(req.headers);
  let status = 200;
  if (d.kind === "refuse") {
    const refusal = refusalOf(d, view.config.polling.intervalMs);
    status = refusal.status;
    refusal.send(res, traceId);
  } else {
    sendJson(res, 200, {
      region: d.region,
      gateway_url: gatewayUrlOf(view.config, d),
      reason: d.reason,
      ttl_s: view.config.answerTtlS,
      affinity: d.affinity,
      candidates: d.candidates,
      dry_run: dryRun,
    });
  }
  if (dryRun) return;
  countDecision(view.metrics, d);
  logDecision(
    view.log,
    decisionLine(q, d, {
      trace_id: traceId,
      front: "answer",
      status: d.kind === "refuse" ? "refused" : "ok",
      http_status: status,
      latency_ms: performance.now() - started,
    }),
  );
}

/** A region pushed its summary: checked as a poll's is, and fed to the core. */
async function push(
  view: DirectorView,
  res: http.ServerResponse,
  body: Record<string, unknown>,
): Promise<void> {
  const checked = checkSummary(body);
  if (!checked.ok) {
    throw new GatewayError("invalid_request", `summary ${checked.field}: ${checked.problem}`, {
      param: checked.field,
    });
  }
  const { summary } = checked;
  if (!view.config.regions.some((r) => r.name === summary.region)) {
    const names = view.config.regions.map((r) => r.name).join(", ");
    throw new GatewayError(
      "invalid_request",
      `region "${summary.region}" is not in the director's config (${names})`,
      {
        param: "region",
      },
    );
  }
  view.core.observeSummary(summary, view.clock());
  view.pushed(summary.region);
  sendJson(res, 200, { accepted: true, region: summary.region });
}
