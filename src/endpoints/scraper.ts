// EndpointMonitor: the background loops that keep every EndpointState current — a metrics scrape at the
// endpoint's own interval and a health check at its health interval, one of each in flight at most.

import { performance } from "node:perf_hooks";
import { Agent } from "undici";
import { readEngineMetrics } from "./dialects.js";
import type { EndpointState } from "./endpoint-state.js";
import { describeProbeError, probe } from "./http-probe.js";
import { readServedModels } from "./served-models.js";

/**
 * What changed, reported once per transition, not once per check. A new endpoint's first verdict counts
 * as a transition (from unknown), so a pool that never comes up is logged too.
 */
export type EndpointChange = "healthy" | "unhealthy" | "metrics-fresh" | "metrics-stale";

export interface EndpointMonitorOptions {
  /** Consecutive failed health checks that mark an endpoint unhealthy; default 2. */
  unhealthyThreshold?: number;
  /** Consecutive passed health checks that mark it healthy again; default 1. */
  healthyThreshold?: number;
  /** Per-scrape deadline; default and maximum: the endpoint's scrape interval. */
  metricsTimeoutMs?: number;
  /**
   * Per-check deadline; default 1000 ms, whatever the health interval: a check that runs past its
   * interval delays the next one rather than failing (an engine slow to answer under load, or in a
   * collection pause, is not dead; with a short interval the deadline would otherwise shrink with it).
   */
  healthTimeoutMs?: number;
  /** A newly watched endpoint's first probes land at random in [0, min(interval, this)); default 250. */
  maxStartDelayMs?: number;
  /** Monitoring connections per endpoint, separate from request traffic; default 2. */
  connectionsPerEndpoint?: number;
  onChange?: (endpoint: EndpointState, change: EndpointChange) => void;
  /** Injected in tests. */
  random?: () => number;
  now?: () => number;
}

type LoopKind = "metrics" | "health" | "models";

interface ProbeLoop {
  timer: NodeJS.Timeout | null;
  /** Set while a probe is in flight; the one place a stop or removal aborts it. */
  controller: AbortController | null;
}

interface Watch {
  readonly endpoint: EndpointState;
  readonly metrics: ProbeLoop;
  readonly health: ProbeLoop;
  readonly models: ProbeLoop;
  /** Last reported freshness; null until first known. */
  fresh: boolean | null;
}

/** Abort reason for probes cancelled by stop() or remove(); their results are thrown away. */
const CANCELLED = new Error("endpoint monitor stopped watching");

const MAX_METRICS_BYTES = 16 * 1024 * 1024;

/**
 * Keeps a set of EndpointStates current until stopped.
 * @example
 * const monitor = new EndpointMonitor(EndpointState.forPool(pool), {
 *   onChange: (ep, change) => log.info({ endpoint: ep.name, change }),
 * });
 * monitor.start();
 * // ... on shutdown:
 * await monitor.stop();
 */
export class EndpointMonitor {
  private readonly watches = new Map<EndpointState, Watch>();
  private readonly unhealthyThreshold: number;
  private readonly healthyThreshold: number;
  private readonly metricsTimeoutMs: number | undefined;
  private readonly healthTimeoutMs: number;
  private readonly maxStartDelayMs: number;
  private readonly connections: number;
  private readonly onChange: EndpointMonitorOptions["onChange"];
  private readonly random: () => number;
  private readonly now: () => number;
  private agent: Agent | null = null;

  constructor(endpoints: Iterable<EndpointState> = [], opts: EndpointMonitorOptions = {}) {
    this.unhealthyThreshold = positiveInt("unhealthyThreshold", opts.unhealthyThreshold ?? 2);
    this.healthyThreshold = positiveInt("healthyThreshold", opts.healthyThreshold ?? 1);
    this.metricsTimeoutMs = opts.metricsTimeoutMs;
    this.healthTimeoutMs = opts.healthTimeoutMs ?? 1000;
    this.maxStartDelayMs = opts.maxStartDelayMs ?? 250;
    this.connections = positiveInt("connectionsPerEndpoint", opts.connectionsPerEndpoint ?? 2);
    this.onChange = opts.onChange;
    this.random = opts.random ?? Math.random;
    this.now = opts.now ?? Date.now;
    for (const ep of endpoints) this.add(ep);
  }

  get running(): boolean {
    return this.agent !== null;
  }

  /** The endpoints being watched, in the order they were added. */
  endpoints(): EndpointState[] {
    return [...this.watches.keys()];
  }

  has(endpoint: EndpointState): boolean {
    return this.watches.has(endpoint);
  }

  start(): void {
    if (this.agent !== null) return;
    this.agent = new Agent({
      connections: this.connections,
      maxResponseSize: MAX_METRICS_BYTES,
    });
    for (const w of this.watches.values()) this.begin(w);
  }

  /** Clears every timer and aborts in-flight probes; resolves when the monitor's sockets are closed. */
  async stop(): Promise<void> {
    const agent = this.agent;
    if (agent === null) return;
    this.agent = null;
    for (const w of this.watches.values()) this.halt(w);
    await agent.destroy();
  }

  /**
   * Watches an endpoint; when running, its first probes follow within the start delay, or at once with
   * `now` (an engine a reload adds is checked before it takes traffic).
   */
  add(endpoint: EndpointState, now = false): void {
    if (this.watches.has(endpoint)) return;
    const w: Watch = {
      endpoint,
      metrics: { timer: null, controller: null },
      health: { timer: null, controller: null },
      models: { timer: null, controller: null },
      fresh: null,
    };
    this.watches.set(endpoint, w);
    if (this.agent !== null) this.begin(w, now);
  }

  /** Stops watching at once: timers cleared, probes in flight aborted and their results dropped. */
  remove(endpoint: EndpointState): boolean {
    const w = this.watches.get(endpoint);
    if (w === undefined) return false;
    this.watches.delete(endpoint);
    this.halt(w);
    return true;
  }

  private begin(w: Watch, now = false): void {
    // Spread first probes so a hundred endpoints added together do not fire in the same tick.
    const spread = (intervalMs: number) =>
      now ? 0 : this.random() * Math.min(intervalMs, this.maxStartDelayMs);
    this.schedule(w, "metrics", spread(w.endpoint.metricsIntervalMs));
    this.schedule(w, "health", spread(w.endpoint.healthIntervalMs));
    this.schedule(w, "models", spread(w.endpoint.modelsIntervalMs));
  }

  private halt(w: Watch): void {
    for (const loop of [w.metrics, w.health, w.models]) {
      if (loop.timer !== null) clearTimeout(loop.timer);
      loop.timer = null;
      const c = loop.controller;
      loop.controller = null;
      c?.abort(CANCELLED);
    }
  }

  private schedule(w: Watch, kind: LoopKind, delayMs: number): void {
    w[kind].timer = setTimeout(() => this.run(w, kind), delayMs);
  }

  private run(w: Watch, kind: LoopKind): void {
    const loop = w[kind];
    loop.timer = null;
    const agent = this.agent;
    if (agent === null) return;
    const controller = new AbortController();
    loop.controller = controller;
    const ep = w.endpoint;
    const startedAt = performance.now();
    const intervalMs =
      kind === "metrics"
        ? ep.metricsIntervalMs
        : kind === "health"
          ? ep.healthIntervalMs
          : ep.modelsIntervalMs;
    const done =
      kind === "metrics"
        ? this.scrape(agent, w, controller)
        : kind === "health"
          ? this.check(agent, w, controller)
          : this.readModels(agent, w, controller);
    const next = () => {
      // A stop or removal while in flight took this loop over; it must not be re-armed.
      if (loop.controller !== controller) return;
      loop.controller = null;
      // Fixed rate from the start of this probe; the deadline keeps a probe inside its interval.
      this.schedule(w, kind, Math.max(0, startedAt + intervalMs - performance.now()));
    };
    done.then(next, (err: unknown) => {
      process.emitWarning(`EndpointMonitor ${kind} probe of ${ep.name} failed: ${String(err)}`);
      next();
    });
  }

  private async scrape(agent: Agent, w: Watch, controller: AbortController): Promise<void> {
    const ep = w.endpoint;
    const started = performance.now();
    const timeoutMs = Math.min(this.metricsTimeoutMs ?? ep.metricsIntervalMs, ep.metricsIntervalMs);
    try {
      const res = await probe(agent, ep.url, ep.metricsPath, controller, timeoutMs, true);
      if (controller.signal.reason === CANCELLED) return;
      const durationMs = performance.now() - started;
      if (res.body === null) ep.scrape.recordError(`HTTP ${res.status}`, durationMs);
      else ep.recordScrape(readEngineMetrics(res.body, ep.dialect), this.now(), durationMs);
    } catch (err) {
      if (controller.signal.reason === CANCELLED) return;
      ep.scrape.recordError(describeProbeError(err, controller.signal), performance.now() - started);
    }
    const fresh = ep.metricsFresh(this.now());
    if (fresh !== w.fresh) {
      w.fresh = fresh;
      this.emit(ep, fresh ? "metrics-fresh" : "metrics-stale");
    }
  }

  /** What the engine serves; slow by default, and read again at once when the endpoint comes back. */
  private async readModels(agent: Agent, w: Watch, controller: AbortController): Promise<void> {
    const ep = w.endpoint;
    const headers: Record<string, string> = { accept: "application/json" };
    if (ep.authorization !== null) headers.authorization = ep.authorization;
    try {
      const res = await probe(agent, ep.url, ep.modelsPath, controller, this.healthTimeoutMs, true, headers);
      if (controller.signal.reason === CANCELLED) return;
      if (res.body === null) ep.recordModelsError(`HTTP ${res.status}`);
      else ep.recordServedModels(readServedModels(res.body), this.now());
    } catch (err) {
      if (controller.signal.reason === CANCELLED) return;
      ep.recordModelsError(describeProbeError(err, controller.signal));
    }
  }

  /** Reads /v1/models now instead of at its next turn (an endpoint back from down may have changed). */
  private readModelsSoon(w: Watch): void {
    const loop = w.models;
    if (loop.controller !== null || loop.timer === null) return;
    clearTimeout(loop.timer);
    this.schedule(w, "models", 0);
  }

  private async check(agent: Agent, w: Watch, controller: AbortController): Promise<void> {
    const ep = w.endpoint;
    const timeoutMs = this.healthTimeoutMs;
    const startedAt = this.now();
    let error: string | null;
    try {
      const res = await probe(agent, ep.url, ep.healthPath, controller, timeoutMs, false);
      error = res.status >= 200 && res.status < 300 ? null : `HTTP ${res.status}`;
    } catch (err) {
      error = describeProbeError(err, controller.signal);
    }
    if (controller.signal.reason === CANCELLED) return;
    const change = ep.health.recordHealth(
      error === null,
      this.now(),
      error,
      this.unhealthyThreshold,
      this.healthyThreshold,
      startedAt,
    );
    if (change === "healthy") this.readModelsSoon(w);
    if (change === "healthy" || change === "unhealthy") this.emit(ep, change);
  }

  private emit(ep: EndpointState, change: EndpointChange): void {
    if (this.onChange === undefined) return;
    try {
      this.onChange(ep, change);
    } catch (err) {
      // A throwing listener must not kill the loop that keeps routing state current.
      process.emitWarning(`EndpointMonitor onChange listener threw: ${(err as Error)?.message ?? err}`);
    }
  }
}

function positiveInt(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`${name} must be a whole number >= 1, got ${v}`);
  return v;
}
