// The running gateway: builds pools of endpoint states from the config, keeps them fresh with the
// endpoint monitor, serves the OpenAI API (the admin surface is admin-routes.ts), and drains and stops.

import { randomBytes } from "node:crypto";
import http from "node:http";
import type { Pool } from "undici";
import type { BudgetStore } from "../budget/budget-ledger.js";
import { budgetStoreFor } from "../budget/budget-store.js";
import type { GatewayConfigSet } from "../config/config-set.js";
import { trustedAddressList } from "../config/gateway-settings.js";
import { Secret } from "../config/secret.js";
import type { ConfigControl } from "../control/config-control.js";
import { RolloutStats, rolloutSignature } from "../control/rollout-gates.js";
import type { DiscoveryStatus } from "../discovery/inference-pool-discovery.js";
import { AdapterLoader } from "../endpoints/adapter-loader.js";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import { EndpointMonitor } from "../endpoints/scraper.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { FlowControl, FlowListeners } from "../flow/flow-control.js";
import type { PauseGate, PauseTransition } from "../flow/pause-gate.js";
import type { Placement } from "../flow/placement.js";
import { close, listen } from "../http/http-listen.js";
import { UpstreamPools } from "../http/upstream-pools.js";
import { syncIndexCapacity } from "../picker/picker-profile.js";
import type { HookSet } from "../pipeline/hooks.js";
import { Identifier } from "../pipeline/identify.js";
import { defaultHooks } from "../pipeline/plugins/default-hooks.js";
import type { HookFactory } from "../pipeline/plugins/hook-factory.js";
import type { PoolRuntime } from "../pipeline/pool-runtime.js";
import type { GatewayRuntime } from "../pipeline/runtime.js";
import type { ApiKind } from "../profile/request-profile.js";
import { TokenCorrection } from "../profile/token-correction.js";
import { routeModels } from "../route/model-list.js";
import { GatewayMetrics } from "../telemetry/gateway-metrics.js";
import { LoopDelayMonitor } from "../telemetry/loop-delay.js";
import { ProcessMetrics } from "../telemetry/process-metrics.js";
import { RegionWindow } from "../telemetry/region-window.js";
import { RequestLog } from "../telemetry/request-log.js";
import { REGION_SUMMARY_PATH, routeAdmin } from "./admin-routes.js";
import { type BatchApi, isBatchPath, routeBatch } from "./batch-routes.js";
import { BatchService } from "./batch-service.js";
import { handleCompletion } from "./completion-handler.js";
import { ConfigChanges } from "./config-changes.js";
import { withDiscovered } from "./discovered-config.js";
import { EngineRetirement } from "./engine-retirement.js";
import { collectGauges } from "./gateway-gauges.js";
import { buildGeneration, type EngineChanges, type Generation, newEngines } from "./generation.js";
import { wirePassiveHealth } from "./passive-health.js";
import { cutInProgress } from "./shutdown-cut.js";

export interface GatewayOptions {
  /** Overrides the config's log destination (`none` keeps lines in memory for the listener only). */
  logDestination?: string;
  /** Overrides the listen port (0 = any free port). */
  port?: number;
  host?: string;
  /** Request-pipeline plugins run after the built-in ones at each hook point (pipeline/hooks.ts). */
  hooks?: readonly HookFactory[];
}

/** The longest a reload waits for the first health check of the engines it adds (a probe times out at 1 s). */
const RELOAD_WARMUP_MS = 1500;

export class Gateway implements GatewayRuntime {
  /** Reloads and discovery's findings, applied one at a time. */
  private readonly changes: ConfigChanges;
  /** The generation in force: swapped whole by a reload (generation.ts). */
  private gen: Generation;
  readonly metrics = new GatewayMetrics();
  readonly log: RequestLog;
  /** Who a caller is (API keys, trusted upstreams): rebuilt by a reload, so new keys apply at once. */
  identifier: Identifier;
  readonly correction = new TokenCorrection();
  readonly regionWindow = new RegionWindow();
  readonly hooks: HookSet;
  readonly adapterLoader = new AdapterLoader((ep, adapter) =>
    this.log.event("endpoint.adapter-registered", { pool: ep.pool, endpoint: ep.name, adapter }),
  );
  readonly monitor: EndpointMonitor;
  private readonly flowListeners: FlowListeners = {
    onTransition: (gate, t) => this.pauseChanged(gate, t),
    onQueueOutcome: (pool, outcome) => this.metrics.queueOutcomes.labels(pool, outcome).inc(),
  };
  /** Engines a reload removed, draining until their last request ends. */
  private readonly retirement: EngineRetirement;
  /** Tenant budgets, kept across reloads (a reload sets their limits). */
  readonly budgets: BudgetStore;
  /** The Files and Batch API's store and runner; null when `batches` names no store. */
  readonly batches: BatchService | null;
  private readonly batchApi: BatchApi | null;
  /** What the requests of the rollout stage in force showed (its gates); a new stage starts afresh. */
  rollout: RolloutStats;
  private readonly upstream = new UpstreamPools(() => this.config.gateway.timeouts.connectMs);
  private readonly server: http.Server;
  private readonly adminServer: http.Server | null;
  private readonly opts: GatewayOptions;
  /** The config history and its changes, when the gateway runs with one (`tokengate gateway` does). */
  control: ConfigControl | null = null;
  private readonly generatedToken = new Secret(randomBytes(24).toString("base64url"));
  private boundPort = 0;
  private adminPort = 0;
  private capacityTimer: NodeJS.Timeout | null = null;
  /**
   * The responses of completion requests in progress (queued, waiting or streaming): a drain waits for
   * them, and tells a stream still running at its deadline why it is cut.
   */
  private readonly inProgress = new Set<http.ServerResponse>();
  private draining = false;
  private drainUntil = 0;
  cutting = false;
  private stopping: Promise<void> | null = null;
  private batchesStopped: Promise<void> | null = null;
  /** The event loop's own delays; a window whose worst passes 100 ms is logged as `gateway.loop-stall`. */
  private readonly loopDelay = new LoopDelayMonitor(10_000, 10, (w) =>
    this.log.event("gateway.loop-stall", { max_ms: w.maxMs, p99_ms: w.p99Ms, window_s: 10 }),
  );
  /** process_* and nodejs_* on /metrics, read at scrape time; the loop figures from the monitor above. */
  private readonly processMetrics = new ProcessMetrics(this.metrics.registry, {
    loopDelay: () => this.loopDelay.last,
  });

  constructor(config: GatewayConfigSet, opts: GatewayOptions = {}) {
    this.opts = opts;
    const g = config.gateway;
    this.log = new RequestLog(opts.logDestination ?? g.logging.destination);
    this.hooks = defaultHooks(this, opts.hooks);
    this.batches = BatchService.open(config, this.log, this.metrics);
    this.batchApi =
      this.batches?.api(
        () => this.config,
        (req) => this.identifier.identify(req.headers, req.socket.remoteAddress),
      ) ?? null;
    this.identifier = identifierFor(config, this.batches);
    this.changes = new ConfigChanges(
      config,
      (c) => this.apply(c),
      (event, fields) => this.log.event(event, fields),
    );
    const built = buildGeneration(withDiscovered(config, new Map()), null, this.flowListeners);
    this.gen = built.generation;
    this.rollout = new RolloutStats(rolloutSignature(config.route));
    this.budgets = budgetStoreFor(config, (e, f) => this.log.event(e, f));
    this.wire(this.gen);
    this.monitor = new EndpointMonitor(this.gen.engines.keys(), {
      onChange: (ep, change) => this.log.event(`endpoint.${change}`, { pool: ep.pool, endpoint: ep.name }),
    });
    this.retirement = new EngineRetirement(this.monitor, this.log);
    this.metrics.configInfo.labels(config.version).set(1);
    this.metrics.registry.onCollect(() =>
      collectGauges(
        this.metrics,
        this.gen,
        this.loopDelay.last,
        this.correction,
        this.budgets,
        this.changes.status(),
        this.changes.discovered,
      ),
    );
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => this.route(req, res);
    this.server = http.createServer(
      { keepAliveTimeout: 65_000, requestTimeout: 0, headersTimeout: 30_000 },
      handler,
    );
    this.adminServer = g.admin.separate
      ? http.createServer((req, res) => routeAdmin(this, req, res, true))
      : null;
  }

  /** The admin token: the config's, or one made at start when it names none. */
  get adminToken(): Secret {
    return this.config.gateway.admin.token ?? this.generatedToken;
  }

  /** Whether the admin token was made here (so the CLI says where to find it). */
  get adminTokenGenerated(): boolean {
    return this.config.gateway.admin.token === null;
  }

  get generation(): Generation {
    return this.gen;
  }

  get config(): GatewayConfigSet {
    return this.gen.config;
  }

  get pools(): ReadonlyMap<string, PoolRuntime> {
    return this.gen.pools;
  }

  get flow(): FlowControl<Placement> {
    return this.gen.flow;
  }

  /**
   * Wires a generation's engines: freed capacity offered to the pools sharing an engine in their route
   * priority order, and what happens when an engine's requests fail (passive-health.ts).
   */
  private wire(gen: Generation): void {
    for (const [ep, names] of gen.engines) {
      const flows = gen.flow.shareEngines(names);
      ep.onCapacity = () => {
        for (const f of flows) f.notify();
      };
    }
    const poolsOf = new Map([...gen.engines].map(([ep, names]) => [ep, names.map((n) => gen.pools.get(n)!)]));
    wirePassiveHealth(
      poolsOf,
      (pool) => gen.config.pools.get(pool)?.outlierDetection.maxEjectionPercent ?? 50,
      this.log,
      this.metrics,
    );
  }

  /**
   * Puts `config` in force in one step: the next generation is built beside this one (reusing what did
   * not change) and swapped in. Requests in flight finish under the generation they started with;
   * queued requests of a pool still there keep their place; an engine no longer listed is drained — no
   * new requests, the ones on it finish — and then leaves the monitor. Listener settings (ports, hosts)
   * and the log destination take effect at the next start.
   */
  reload(config: GatewayConfigSet): Promise<EngineChanges> {
    return this.changes.reload(config);
  }

  /** Each discovered pool's watcher: synced, the API reachable, what it found (readiness, metrics). */
  discoveryStatus(): ReadonlyMap<string, DiscoveryStatus> {
    return this.changes.status();
  }

  private async apply(config: GatewayConfigSet): Promise<EngineChanges> {
    // Engines new to this config are health-checked first: they take traffic known healthy or not at all.
    const fresh = newEngines(config, this.gen);
    for (const ep of fresh) this.monitor.add(ep, true);
    await firstHealthChecks(fresh, RELOAD_WARMUP_MS);
    const previous = this.gen;
    const { generation, changes } = buildGeneration(config, previous, this.flowListeners, fresh);
    for (const ep of fresh) if (!generation.engines.has(ep)) this.monitor.remove(ep);
    const identifier = identifierFor(config, this.batches);
    for (const ep of changes.added) this.monitor.add(ep);
    this.wire(generation);
    this.gen = generation;
    this.identifier = identifier;
    previous.flow.handOver();
    generation.flow.start();
    for (const ep of changes.removed) this.retirement.retire(ep);
    this.budgets.setConfig(config.budgets);
    this.batches?.reconfigure(config.gateway.batches);
    const stage = rolloutSignature(config.route);
    if (stage !== this.rollout.signature) this.rollout = new RolloutStats(stage);
    this.metrics.configInfo.labels(previous.config.version).set(0);
    this.metrics.configInfo.labels(config.version).set(1);
    // Queued requests may fit where they did not (new bounds, new engines).
    for (const f of generation.flow.pools.values()) f.notify();
    return changes;
  }

  get port(): number {
    return this.boundPort;
  }

  get url(): string {
    const host = this.opts.host ?? this.config.gateway.listen.host;
    return `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${this.boundPort}`;
  }

  get adminUrl(): string {
    if (!this.adminServer) return this.url;
    const host = this.config.gateway.admin.host;
    return `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${this.adminPort}`;
  }

  dispatcher(ep: EndpointState): Pool {
    return this.dispatcherFor(ep.url);
  }

  dispatcherFor(origin: string): Pool {
    return this.upstream.for(origin);
  }

  /** Listens, and waits (briefly) for the first health checks so the first requests find endpoints. */
  async start(): Promise<void> {
    // Discovered pools' first lists, and their engines in force, before the listener opens.
    await this.changes.start();
    this.loopDelay.start();
    this.processMetrics.start();
    this.monitor.start();
    this.flow.start();
    // Each endpoint's share of the prefix index follows the KV cache its engine reports.
    this.capacityTimer = setInterval(() => {
      for (const p of this.pools.values()) syncIndexCapacity(p.picker.index, p.picker.config, p.endpoints);
    }, 2000);
    this.capacityTimer.unref();
    const g = this.config.gateway;
    this.boundPort = await listen(
      this.server,
      this.opts.port ?? g.listen.port,
      this.opts.host ?? g.listen.host,
    );
    if (this.adminServer) this.adminPort = await listen(this.adminServer, g.admin.port, g.admin.host);
    await firstHealthChecks(
      [...this.pools.values()].flatMap((p) => p.endpoints),
      3000,
    );
    this.batches?.start(`http://${loopbackHost(this.opts.host ?? g.listen.host)}:${this.boundPort}`);
  }

  private serveCompletion(kind: ApiKind, req: http.IncomingMessage, res: http.ServerResponse): void {
    this.inProgress.add(res);
    handleCompletion(this, kind, req, res)
      .catch((err: unknown) => {
        // The handler answers every error itself; what reaches here is a bug in its own cleanup. One
        // request's bug must not end the process and every other request with it.
        this.log.event("gateway.internal-error", { error: err instanceof Error ? err.stack : String(err) });
        if (!res.headersSent && !res.destroyed)
          new GatewayError("internal_error", "internal error").send(res, "none");
        else if (!res.destroyed) res.destroy();
      })
      .finally(() => this.inProgress.delete(res));
  }

  /** Completion requests in progress. */
  get activeRequests(): number {
    return this.inProgress.size;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /**
   * Graceful shutdown: readiness turns 503, no new connection is accepted, idle keep-alive connections
   * close and busy ones close after their reply; requests in progress — queued ones too — may finish
   * for up to `maxMs` (GatewayConfig shutdown.drainMs). Then what is left is cut (logged with status
   * `shutdown`, its engine request aborted) and the gateway stops. Resolves with how many were cut.
   */
  async drain(maxMs = this.config.gateway.shutdown.drainMs): Promise<{ cut: number }> {
    if (!this.draining) {
      this.draining = true;
      this.drainUntil = Date.now() + maxMs;
      this.log.event("gateway.draining", { in_flight: this.activeRequests, drain_ms: maxMs });
      this.server.close();
      this.server.closeIdleConnections();
      // The runner claims no more; its lines in flight are requests in progress like any other.
      this.batchesStopped = this.batches?.stop(this.drainUntil) ?? null;
    }
    while (this.activeRequests > 0 && Date.now() < this.drainUntil) await sleep(20);
    const cut = this.activeRequests;
    if (cut > 0) {
      this.cutting = true;
      await cutInProgress(this.inProgress, () => this.activeRequests);
    }
    this.log.event("gateway.drained", { cut });
    await this.stop();
    return { cut };
  }

  /** Ends a drain now (a second signal): whatever is still in progress is cut. */
  hurry(): void {
    this.drainUntil = 0;
  }

  /** Stops at once (connections cut); idempotent. `drain()` is the graceful way. */
  stop(): Promise<void> {
    this.stopping ??= this.stopNow();
    return this.stopping;
  }

  private async stopNow(): Promise<void> {
    await (this.batchesStopped ?? this.batches?.stop());
    await this.changes.stop();
    this.loopDelay.stop();
    this.processMetrics.stop();
    if (this.capacityTimer) clearInterval(this.capacityTimer);
    this.retirement.stop();
    this.flow.stop();
    await this.monitor.stop();
    await Promise.all([close(this.server), this.adminServer ? close(this.adminServer) : Promise.resolve()]);
    await this.upstream.destroy();
    await this.budgets.close();
    await this.log.close();
  }

  private route(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = (req.url ?? "/").split("?", 1)[0];
    // Draining: a request on a connection kept alive is still served, and the connection then closed.
    if (this.draining) res.setHeader("connection", "close");
    if (req.method === "POST" && path === "/v1/chat/completions") {
      this.serveCompletion("chat", req, res);
      return;
    }
    if (req.method === "POST" && path === "/v1/completions") {
      this.serveCompletion("completion", req, res);
      return;
    }
    if (path !== undefined && isBatchPath(path)) {
      const query = new URLSearchParams((req.url ?? "").split("?", 2)[1] ?? "");
      void routeBatch(this.batchApi, req, res, path, query);
      return;
    }
    if (path !== undefined && routeModels(this.config, req, res, path)) return;
    if (!this.adminServer && routeAdmin(this, req, res, false)) return;
    if (req.method === "GET" && (path === "/health" || path === "/ready" || path === REGION_SUMMARY_PATH)) {
      routeAdmin(this, req, res, true);
      return;
    }
    const known = ["/v1/chat/completions", "/v1/completions", "/v1/models"].includes(path ?? "");
    const err = known
      ? new GatewayError("method_not_allowed", `${req.method} is not allowed on ${path}`)
      : new GatewayError("not_found", `no route for ${req.method} ${path}`);
    req.resume();
    err.send(res, "none");
  }

  /** A batch pause started or ended: one log event with the figure that decided it, and the metrics. */
  private pauseChanged(gate: PauseGate, t: PauseTransition): void {
    const w = gate.when;
    this.metrics.queuePaused.labels(gate.pool, gate.rule).set(t.paused ? 1 : 0);
    this.metrics.queuePauseTransitions.labels(gate.pool, gate.rule, t.paused ? "paused" : "resumed").inc();
    this.log.event(t.paused ? "queue.paused" : "queue.resumed", {
      pool: gate.pool,
      rule: gate.rule,
      watched_pool: w.pool,
      ttft_p95_ms: t.ttftP95Ms === null ? null : Math.round(t.ttftP95Ms),
      threshold_ms: t.paused ? w.ttftP95MsGt : w.resumeBelowMs,
      window_s: w.windowSeconds,
      samples: t.samples,
      queued: this.flow.pools.get(gate.pool)?.depth ?? 0,
    });
  }
}

/** The caller identification a config's `auth` describes (and the batch runner's own requests). */
function identifierFor(config: GatewayConfigSet, batches: BatchService | null): Identifier {
  const auth = config.gateway.auth;
  const up = auth.trustedUpstreams;
  const list = up && up.addresses.length > 0 ? trustedAddressList(up.addresses) : null;
  return new Identifier(auth, list, batches ? Buffer.from(batches.secret) : null);
}

/** Where the gateway reaches its own listener: a wildcard address is reached on loopback. */
function loopbackHost(host: string): string {
  if (host === "0.0.0.0" || host === "") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Resolves once every endpoint has been health-checked once (or after `timeoutMs`). */
async function firstHealthChecks(endpoints: readonly EndpointState[], timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until && endpoints.some((e) => e.health.lastHealthAt === null)) {
    await new Promise((r) => setTimeout(r, 5));
  }
}
