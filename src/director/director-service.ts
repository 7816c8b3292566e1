// The running director (`tokengate director`): polls the regions' summaries into its decision core, and
// answers on one listener — the API (POST /v1/*, forwarded or redirected to the chosen region; GET
// /v1/models from the regions' summaries), the answer API for DNS/GSLB, explain, regions, summary
// pushes, health, readiness and metrics.

import http from "node:http";
import { GatewayError } from "../errors/gateway-error.js";
import { close, listen } from "../http/http-listen.js";
import { traceContextFrom, traceIdFrom } from "../http/trace-context.js";
import { UpstreamPools } from "../http/upstream-pools.js";
import { routeModelNames } from "../route/model-list.js";
import { RequestLog } from "../telemetry/request-log.js";
import { DirectorMetrics } from "./director-metrics.js";
import { directorModelNames } from "./director-models.js";
import { tenantOf } from "./director-query.js";
import { type RequestContext, serveApiRequest } from "./director-request.js";
import { routeDirector } from "./director-routes.js";
import type { DirectorConfig, DirectorCore } from "./director-types.js";
import { SummaryPoller } from "./summary-poller.js";

/** As the gateway's default (GatewayConfig limits.maxBodyBytes): prompts, not uploads. */
export const DIRECTOR_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** How long a connection to a region's gateway may take to open. */
const CONNECT_TIMEOUT_MS = 5_000;

export interface DirectorOptions {
  readonly config: DirectorConfig;
  readonly core: DirectorCore;
  /** stdout (default), stderr, none (lines only reach `log.eventListener`), or a file path. */
  readonly logDestination?: string;
  /** Overrides `listen.port` (0 = any free port). */
  readonly port?: number;
  /** Overrides `listen.host`. */
  readonly host?: string;
  /** The largest API request body read (for its model); larger ones are refused with 413. */
  readonly maxBodyBytes?: number;
  /** The clock the core is given (`now` of every call); default Date.now. */
  readonly clock?: () => number;
}

export interface RunningDirector {
  /** Where the director listens, `http://host:port`. */
  readonly url: string;
  readonly port: number;
  readonly core: DirectorCore;
  readonly metrics: DirectorMetrics;
  readonly log: RequestLog;
  /** API requests in progress (forwarded, streaming). */
  readonly activeRequests: number;
  /**
   * Stops: readiness turns 503, no new connection is taken, requests in progress get up to `graceMs`
   * (default 0) to finish, then the rest are cut. Idempotent.
   */
  stop(graceMs?: number): Promise<void>;
  /** Ends a stop's grace now (a second signal): what is still in progress is cut. */
  hurry(): void;
}

/**
 * Starts a director: listening, and polling every region at once and then every `polling.intervalMs`.
 * @example
 * const d = await startDirector({ config, core: new RegionDirectorCore(config), port: 0 });
 * const client = new OpenAI({ baseURL: `${d.url}/v1`, apiKey: "sk-…" });
 */
export async function startDirector(opts: DirectorOptions): Promise<RunningDirector> {
  const d = new DirectorService(opts);
  await d.start();
  return d;
}

class DirectorService implements RequestContext, RunningDirector {
  readonly config: DirectorConfig;
  readonly core: DirectorCore;
  readonly metrics: DirectorMetrics;
  readonly log: RequestLog;
  readonly clock: () => number;
  readonly upstream = new UpstreamPools(() => CONNECT_TIMEOUT_MS);
  readonly maxBodyBytes: number;
  private readonly poller: SummaryPoller;
  private readonly server: http.Server;
  private readonly inProgress = new Set<http.ServerResponse>();
  private readonly startedAt: number;
  private boundPort = 0;
  private stopping: Promise<void> | null = null;
  private graceUntil = 0;
  /** Regions that failed their last poll (a log event when one starts or stops failing). */
  private readonly failing = new Set<string>();

  constructor(private readonly opts: DirectorOptions) {
    this.config = opts.config;
    this.core = opts.core;
    this.clock = opts.clock ?? Date.now;
    this.maxBodyBytes = opts.maxBodyBytes ?? DIRECTOR_MAX_BODY_BYTES;
    this.log = new RequestLog(opts.logDestination ?? "stdout");
    this.metrics = new DirectorMetrics(this.core, this.clock);
    this.startedAt = this.clock();
    this.poller = new SummaryPoller(
      this.config,
      this.core,
      { polled: (r, why) => this.polled(r, why) },
      this.clock,
    );
    this.server = http.createServer(
      { keepAliveTimeout: 65_000, requestTimeout: 0, headersTimeout: 30_000 },
      (req, res) => this.route(req, res),
    );
  }

  async start(): Promise<void> {
    this.boundPort = await listen(this.server, this.opts.port ?? this.config.listen.port, this.host);
    this.poller.start();
    this.log.event("director.started", {
      name: this.config.name,
      url: this.url,
      mode: this.config.mode,
      regions: this.config.regions.map((r) => r.name),
    });
  }

  private get host(): string {
    return this.opts.host ?? this.config.listen.host;
  }

  get port(): number {
    return this.boundPort;
  }

  get url(): string {
    const h = this.host;
    const host =
      h === "0.0.0.0" || h === "" ? "127.0.0.1" : h === "::" ? "[::1]" : h.includes(":") ? `[${h}]` : h;
    return `http://${host}:${this.boundPort}`;
  }

  get activeRequests(): number {
    return this.inProgress.size;
  }

  readiness(): { ready: boolean; waiting: string[] } {
    if (this.stopping) return { ready: false, waiting: [] };
    const waiting = this.config.regions.map((r) => r.name).filter((n) => !this.poller.heard.has(n));
    const waited = this.clock() - this.startedAt >= 2 * this.config.polling.staleAfterMs;
    return { ready: waiting.length === 0 || waited, waiting };
  }

  pushed(region: string): void {
    this.poller.heard.add(region);
  }

  traceIdOf(headers: http.IncomingHttpHeaders): string {
    return traceIdFrom(headers, traceContextFrom(headers).traceId);
  }

  private polled(region: string, why: string | null): void {
    if (why === null) {
      if (this.failing.delete(region)) this.log.event("director.region-polled", { region, recovered: true });
      return;
    }
    this.metrics.pollFailures.labels(region).inc();
    if (!this.failing.has(region)) {
      this.failing.add(region);
      this.log.event("director.poll-failed", { region, why });
    }
  }

  private route(req: http.IncomingMessage, res: http.ServerResponse): void {
    const [path = "/", search = ""] = (req.url ?? "/").split("?", 2);
    if (this.stopping) res.setHeader("connection", "close");
    try {
      if (path.startsWith("/v1/")) {
        if (routeModelNames(() => this.modelNames(req), req, res, path)) return;
        if (path === "/v1/models" || path.startsWith("/v1/models/")) {
          req.resume();
          new GatewayError("method_not_allowed", `the director takes GET on ${path}`).send(res, "none");
          return;
        }
        if (req.method !== "POST") {
          req.resume();
          new GatewayError("method_not_allowed", `the director takes POST on ${path}`).send(res, "none");
          return;
        }
        this.serveApi(req, res);
        return;
      }
      if (routeDirector(this, req, res, path, new URLSearchParams(search))) return;
      req.resume();
      new GatewayError("not_found", `no route for ${req.method} ${path}`).send(res, "none");
    } catch (err) {
      this.internalError(err, res);
    }
  }

  /** The aliases the caller's tenant (`x-ai-tenant`) could be routed with now. */
  private modelNames(req: http.IncomingMessage): string[] {
    return directorModelNames(this.config, this.core.regions(this.clock()), tenantOf(req.headers));
  }

  private serveApi(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.inProgress.add(res);
    serveApiRequest(this, req, res)
      .catch((err: unknown) => this.internalError(err, res))
      .finally(() => this.inProgress.delete(res));
  }

  /** A bug in a handler ends its own request, never the process and every other request with it. */
  private internalError(err: unknown, res: http.ServerResponse): void {
    this.log.event("director.internal-error", { error: err instanceof Error ? err.stack : String(err) });
    if (!res.headersSent && !res.destroyed)
      new GatewayError("internal_error", "internal error").send(res, "none");
    else if (!res.destroyed) res.destroy();
  }

  stop(graceMs = 0): Promise<void> {
    this.stopping ??= this.stopNow(graceMs);
    return this.stopping;
  }

  hurry(): void {
    this.graceUntil = 0;
  }

  private async stopNow(graceMs: number): Promise<void> {
    this.log.event("director.stopping", { in_flight: this.activeRequests, grace_ms: graceMs });
    this.server.close();
    this.server.closeIdleConnections();
    this.graceUntil = Date.now() + graceMs;
    while (this.activeRequests > 0 && Date.now() < this.graceUntil)
      await new Promise((r) => setTimeout(r, 20));
    await this.poller.stop();
    await close(this.server);
    await this.upstream.destroy();
    this.log.event("director.stopped", {});
    await this.log.close();
  }
}
