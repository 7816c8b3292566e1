// The live state of one engine endpoint, as the picker reads it on every request: whether it may take a
// request (endpoint-health.ts: active and passive health, drain, backoff, circuit breaker), the gateway's
// own in-flight accounting and prefill view, what the engine serves, and its last scraped metrics.

import type { EngineDialect, InferencePoolConfig, PollSettings } from "../config/inference-pool.js";
import type { ModelsPoll } from "../config/pool-serving.js";
import type { Secret } from "../config/secret.js";
import { AdapterRecord } from "./adapter-record.js";
import type { CircuitPolicy } from "./circuit-breaker.js";
import type { EngineReading, LoraState } from "./dialects.js";
import { EndpointHealth, type HealthStatus } from "./endpoint-health.js";
import { EngineScrape } from "./engine-scrape.js";
import { Lease } from "./lease.js";
import type { EjectionPolicy } from "./outlier-ejection.js";
import { PrefillLoad, type StepLora } from "./prefill-load.js";
import type { ServedModels } from "./served-models.js";

export type { HealthStatus } from "./endpoint-health.js";

export interface EndpointStateOptions {
  pool: string;
  name: string;
  url: string;
  dialect: EngineDialect;
  metrics: PollSettings;
  health: PollSettings;
  /** The served model and version the config expects; the engine's /v1/models overrides them. */
  model?: string | null;
  modelVersion?: string | null;
  /** The engine's model list; default `/v1/models` every 30 s. */
  models?: ModelsPoll;
  /** Bearer key of an engine started with --api-key. */
  upstreamKey?: Secret | null;
  /** Default: 4 × metrics.intervalMs, at least 200 ms. */
  metricsStalenessMs?: number;
  ejection?: Partial<EjectionPolicy>;
  circuit?: Partial<CircuitPolicy>;
}

export class EndpointState {
  /** What this state was built from (a reload keeps the state while they are unchanged). */
  readonly options: EndpointStateOptions;
  readonly pool: string;
  readonly name: string;
  /** Origin, e.g. `http://10.0.0.7:8000`. */
  readonly url: string;
  readonly dialect: EngineDialect;
  readonly metricsPath: string;
  readonly metricsIntervalMs: number;
  readonly healthPath: string;
  readonly healthIntervalMs: number;
  readonly modelsPath: string;
  readonly modelsIntervalMs: number;
  /** Whether /v1/models' `root` names the version this engine runs (`models.versionFrom: root`). */
  readonly versionFromRoot: boolean;
  /** `Authorization` value for every request to the engine; null when it needs none. */
  readonly authorization: string | null;

  /** Whether it may take a request, and why not (endpoint-health.ts); its fields are read through here. */
  readonly health: EndpointHealth;
  /** Whether one more ejection keeps every pool of this endpoint within its maxEjectionPercent. */
  ejectionAllowed: () => boolean = () => true;
  /** Told when the endpoint goes out (down or ejected): the pools drop its prefix-affinity claims. */
  onOut: (() => void) | null = null;
  /** Log events of the endpoint's own (marked down by a request, circuit changes). */
  onEvent: ((event: string, fields: Record<string, unknown>) => void) | null = null;

  // The gateway's own accounting; written only through acquire() and Lease.release().
  inflightRequests = 0;
  inflightTokens = 0;
  /** The prompt part of `inflightTokens` (a peer algorithm's active-blocks estimate reads it). */
  inflightPromptTokens = 0;
  /** Prefill tokens pending, sequences decoding, and the learned TTFT fit (prefill-load.ts). */
  readonly prefill: PrefillLoad;
  /** Called when a lease is released or a scrape lands: flow control may dispatch more. */
  onCapacity: (() => void) | null = null;

  /** What the last scrapes of its /metrics said (engine-scrape.ts). */
  readonly scrape: EngineScrape;

  // What the engine serves: from config until its /v1/models answers, then from there.
  /** Base model id. */
  model: string | null;
  /** The version it runs (`root`'s last segment), or the configured one. */
  modelVersion: string | null;
  /** Adapters it has registered; null until /v1/models answers (then any declared adapter is assumed). */
  servedAdapters: ReadonlySet<string> | null = null;
  modelsReadAt: number | null = null;
  lastModelsError: string | null = null;
  /** Adapters the gateway sent here lately, the ones the engine probably still holds. */
  readonly adapterRecord = new AdapterRecord();

  constructor(opts: EndpointStateOptions) {
    this.options = opts;
    this.pool = opts.pool;
    this.name = opts.name;
    this.url = opts.url;
    this.dialect = opts.dialect;
    this.metricsPath = opts.metrics.path;
    this.metricsIntervalMs = opts.metrics.intervalMs;
    this.healthPath = opts.health.path;
    this.healthIntervalMs = opts.health.intervalMs;
    this.modelsPath = opts.models?.path ?? "/v1/models";
    this.modelsIntervalMs = opts.models?.intervalMs ?? 30_000;
    this.versionFromRoot = opts.models?.versionFrom === "root";
    this.authorization = opts.upstreamKey ? `Bearer ${opts.upstreamKey.reveal()}` : null;
    this.model = opts.model ?? null;
    this.modelVersion = opts.modelVersion ?? null;
    this.scrape = new EngineScrape(opts.metrics.intervalMs, opts.metricsStalenessMs);
    this.prefill = new PrefillLoad();
    this.health = new EndpointHealth(
      {
        ejectionAllowed: () => this.ejectionAllowed(),
        out: () => this.onOut?.(),
        event: (event, fields) => this.onEvent?.(event, fields),
        statusChanging: (next, previous) => this.healthChanging(next, previous),
      },
      opts.ejection,
      opts.circuit,
    );
  }

  /** One EndpointState per endpoint of a pool, with the pool's dialect and intervals. */
  static forPool(
    pool: InferencePoolConfig,
    opts: Pick<EndpointStateOptions, "metricsStalenessMs"> = {},
  ): EndpointState[] {
    return EndpointState.optionsForPool(pool, opts).map((o) => new EndpointState(o));
  }

  /** What each of a pool's endpoints is built from (a reload keeps a state whose options are unchanged). */
  static optionsForPool(
    pool: InferencePoolConfig,
    opts: Pick<EndpointStateOptions, "metricsStalenessMs"> = {},
  ): EndpointStateOptions[] {
    return pool.endpoints.map(
      (e): EndpointStateOptions => ({
        ...opts,
        pool: pool.name,
        name: e.name,
        url: e.url,
        dialect: pool.engine,
        metrics: pool.metrics,
        health: pool.health,
        models: pool.models,
        model: pool.model,
        modelVersion: e.modelVersion ?? pool.modelVersion,
        upstreamKey: pool.upstreamAuth?.key ?? null,
        ejection: pool.outlierDetection,
        // A disabled breaker never opens: its threshold cannot be reached.
        circuit: pool.circuitBreaker.enabled
          ? pool.circuitBreaker
          : { minRequests: Number.POSITIVE_INFINITY },
      }),
    );
  }

  // What the picker and flow control read of the last scrape on every pick, as the flat PickerEndpoint
  // fields they expect; the rest of it through `scrape` (engine-scrape.ts).
  get waiting(): number | null {
    return this.scrape.waiting;
  }
  get running(): number | null {
    return this.scrape.running;
  }
  get kvUsage(): number | null {
    return this.scrape.kvUsage;
  }
  get blockSize(): number | null {
    return this.scrape.blockSize;
  }
  get numGpuBlocks(): number | null {
    return this.scrape.numGpuBlocks;
  }
  get loras(): LoraState | null {
    return this.scrape.loras;
  }
  get scrapedAt(): number | null {
    return this.scrape.scrapedAt;
  }
  get metricsStalenessMs(): number {
    return this.scrape.stalenessMs;
  }
  /** The last successful scrape is younger than the staleness bound. */
  metricsFresh(now: number): boolean {
    return this.scrape.fresh(now);
  }

  // What the picker and flow control read of its health on every pick, as the flat PickerEndpoint
  // fields they expect; everything else of it through `health` (endpoint-health.ts).
  get healthy(): boolean {
    return this.health.healthy;
  }
  set healthy(v: boolean) {
    this.health.healthy = v;
  }
  get draining(): boolean {
    return this.health.draining;
  }
  set draining(v: boolean) {
    this.health.draining = v;
  }
  get retired(): boolean {
    return this.health.retired;
  }
  set retired(v: boolean) {
    this.health.retired = v;
  }
  get ejectedUntil(): number {
    return this.health.ejectedUntil;
  }
  routable(now: number): boolean {
    return this.health.routable(now);
  }
  holdWhy(now: number): string | null {
    return this.health.holdWhy(now);
  }

  /** What a change of health means for what the engine holds. */
  private healthChanging(next: HealthStatus, previous: HealthStatus): void {
    // Back from down: the engine may have restarted, and then it holds no adapter.
    if (next === "healthy" && previous === "unhealthy") this.adapterRecord.clear();
    // Down: it may come back without the adapters registered at run time; /v1/models is read again on
    // recovery, and until then the gateway registers an adapter again before using it.
    if (next === "unhealthy" && this.servedAdapters !== null) this.servedAdapters = new Set();
    // Down: whatever its cache held is gone or unreachable; prefix affinity must not point at it.
    if (next === "unhealthy") this.onOut?.();
  }

  /**
   * Counts a request (and its tokens) as in flight until the returned lease is released; with `prefill`,
   * also its uncached prompt tokens as pending prefill until its first token (lease.firstToken()).
   * @example
   * const lease = endpoint.acquire(profile.inputTokens + profile.maxOutputTokens, { uncached: 900, stream: true });
   * try { await forward(endpoint, req); } finally { lease.release(); }
   */
  acquire(
    tokens: number,
    prefill?: { uncached: number; stream: boolean; prompt?: number; adapter?: string | null },
    now = Date.now(),
  ): Lease {
    if (!Number.isFinite(tokens) || tokens < 0) {
      throw new RangeError(`acquire: tokens must be a finite number >= 0, got ${tokens}`);
    }
    const prompt = Math.min(tokens, Math.max(0, prefill?.prompt ?? 0));
    this.inflightRequests++;
    this.inflightTokens += tokens;
    this.inflightPromptTokens += prompt;
    this.health.breaker.dispatched(now);
    const claim = prefill
      ? this.prefill.begin(
          prefill.uncached,
          prefill.stream,
          now,
          this.freshWaiting(now),
          this.stepLora(prefill.adapter ?? null),
        )
      : null;
    return new Lease(this, tokens, claim, prompt);
  }

  /**
   * The TTFT the prefill view estimates for a request of `uncached` prompt tokens for `adapter` sent
   * here now, ms from dispatch (what the request log records as `predicted_ttft_ms`, less the time the
   * request spent before): the explain endpoint's figure.
   */
  estimateTtftMs(uncached: number, adapter: string | null, now = Date.now()): number {
    return this.prefill.estimateTtft(uncached, now, this.freshWaiting(now), this.stepLora(adapter))
      .estimatedMs;
  }

  /**
   * A request's adapter for the step schedule: an adapter no longer among the last ones sent here has
   * likely lost its slot, and its requests wait while the engine runs the others.
   */
  private stepLora(adapter: string | null): StepLora {
    return { adapter, skipped: (a) => !this.adapterRecord.likelyResident(a) };
  }

  /** Uncached prompt tokens sent here and not yet first-tokened (the prefill view's pending work). */
  get pendingPrefillTokens(): number {
    return this.prefill.pendingTokens;
  }

  /** Predicted ms to the first token of a request bringing `uncached` prompt tokens, sent now. */
  predictTtftMs(uncached: number, now: number): number {
    return this.prefill.predictTtftMs(uncached, now, this.freshWaiting(now));
  }

  /**
   * How long the work already here delays a request sent now, in ms by the fit, without the lateness
   * correction: what the predicted-wait bound admits by. Lateness ranks engines (avoid the one that is
   * stuck) but would hold a whole pool back for one long prompt the fit under-predicts.
   */
  predictedWaitMs(now: number): number {
    return this.prefill.waitMs(now, this.freshWaiting(now));
  }

  /** The scraped waiting queue when the scrape is fresh; null otherwise. */
  freshWaiting(now: number): number | null {
    return this.metricsFresh(now) ? this.waiting : null;
  }

  /** Applies a successful scrape; flow control may dispatch more. */
  recordScrape(r: EngineReading, now: number, durationMs: number): void {
    this.scrape.record(r, now, durationMs);
    this.onCapacity?.();
  }

  /** The engine's /v1/models answered: what it serves now replaces what config said. */
  recordServedModels(m: ServedModels, now: number): void {
    if (m.base !== null) this.model = m.base;
    if (m.version !== null && this.versionFromRoot && m.version !== this.modelVersion) {
      this.modelVersion = m.version;
      const expected = this.options.modelVersion ?? null;
      if (expected !== null) {
        this.onEvent?.(m.version === expected ? "endpoint.version-restored" : "endpoint.version-mismatch", {
          expected,
          served: m.version,
        });
      }
    }
    this.servedAdapters = m.adapters;
    this.modelsReadAt = now;
    this.lastModelsError = null;
  }

  recordModelsError(error: string): void {
    this.lastModelsError = error;
  }
}
