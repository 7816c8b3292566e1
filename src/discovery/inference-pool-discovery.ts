// The endpoints of one Gateway API Inference Extension v1 InferencePool, kept current from the Kubernetes
// API: a list-watch of the pool object (its selector and target ports) and one of the pods its selector
// matches, turned into endpoints by pod-endpoints.ts. While the API server is unreachable the last known
// endpoints stay and status() says so; a changed selector starts a fresh pod list-watch.
//
// The HTTP calls are our own (kube-connection.ts, watch-stream.ts) over the KubeConfig's
// applyToHTTPSOptions rather than client-node's Watch or informer: its Watch (1.4.0) drops lines it cannot
// parse (a lost event), has no idle timeout for a half-open stream, and reports a 410 on open only as a
// bare Error; its informer stops on errors other than 410. Owning the loop (list-watch.ts) gives us the
// resourceVersion, bookmarks, 410 handling, backoff and the periodic relist in one place we can test.

import { DiscoveryError } from "./discovery-error.js";
import { KubeConnection } from "./kube-connection.js";
import {
  decodePod,
  decodePool,
  labelSelector,
  type PodFacts,
  type PoolObject,
  type PoolSelection,
} from "./kube-objects.js";
import { ListWatch, type ListWatchNotice, type RetryPolicy } from "./list-watch.js";
import { type DiscoveredEndpoint, endpointChanges, sameEndpoints, selectEndpoints } from "./pod-endpoints.js";

/** What the gateway shows of discovery in readiness, metrics and logs. */
export interface DiscoveryStatus {
  /** The pool and its pods are listed and both watches are live: the endpoints are current. */
  synced: boolean;
  /** The API server answers (an error status such as 403 counts as an answer). */
  connected: boolean;
  /** When the last full list succeeded (ms since the epoch); null before the first. */
  lastSyncAt: number | null;
  /** `code: message` of what is wrong now (unreachable, pool missing or invalid, RBAC), else null. */
  error: string | null;
  /** How many endpoints `current()` holds (ready and draining). */
  endpoints: number;
}

/** Which pool to discover, and whom to tell. */
export interface InferencePoolDiscoveryOptions {
  readonly namespace: string;
  /** The InferencePool object's name. */
  readonly inferencePool: string;
  /** A kubeconfig file; null or absent: in-cluster service account, else $KUBECONFIG or ~/.kube/config. */
  readonly kubeconfig?: string | null;
  /** A connection to use instead of loading `kubeconfig` (one per gateway, shared by its pools). */
  readonly connection?: KubeConnection;
  /** The full current set (sorted by pod, then port) after each change, and once after the first list. */
  readonly onChange: (endpoints: readonly DiscoveredEndpoint[]) => void;
  /** `discovery.*` events with their fields, for logs. */
  readonly onEvent?: (event: string, fields: Record<string, unknown>) => void;
  /** Full relist period of both list-watches; default 5 min. */
  readonly relistMs?: number;
  /** How long start() waits for the first list before it rejects; default 30 s. */
  readonly startTimeoutMs?: number;
  /** Backoff between failed requests; default 250 ms doubling to 30 s. */
  readonly retry?: RetryPolicy;
  /** The server ends each watch after this; default 290 s. */
  readonly watchTimeoutSeconds?: number;
}

const INFERENCE_POOLS = "/apis/inference.networking.k8s.io/v1/namespaces";

/**
 * Discovers the endpoints of one InferencePool.
 * @example
 * ```ts
 * const d = new InferencePoolDiscovery({ namespace: "llm", inferencePool: "vllm-7b", onChange: (eps) => pool.set(eps) });
 * await d.start(); // the first list, or a discovery_start_timeout error (it keeps trying)
 * d.status(); // { synced: true, connected: true, lastSyncAt: 1767225600000, error: null, endpoints: 3 }
 * ```
 */
export class InferencePoolDiscovery {
  private readonly pool: string;
  private connection: KubeConnection | null = null;
  private poolWatch: ListWatch<PoolObject> | null = null;
  private podWatch: ListWatch<PodFacts> | null = null;
  private podSelector: string | null = null;
  /** The next pod list follows a selector change: pods missing from it were deselected. */
  private reselected = false;
  private podsListed = false;
  private selection: PoolSelection | null = null;
  private poolError: DiscoveryError | null = null;
  private endpoints: readonly DiscoveredEndpoint[] = Object.freeze([]);
  private published = false;
  private apiState: "unknown" | "up" | "down" = "unknown";
  private wasSynced = false;
  /** The latest list of either kind once the pods have been listed; kept across a selector change. */
  private lastSyncAt: number | null = null;
  private starting: Promise<void> | null = null;
  private firstList: { resolve: () => void; reject: (err: Error) => void; timer: NodeJS.Timeout } | null =
    null;
  private stopped = false;

  constructor(private readonly opts: InferencePoolDiscoveryOptions) {
    this.pool = `${opts.namespace}/${opts.inferencePool}`;
  }

  /**
   * Starts discovery; resolves after the first list of the pool and its pods. Rejects with
   * `kubeconfig_invalid` at once, or `discovery_start_timeout` after `startTimeoutMs` (then it goes on
   * trying in the background until stop()).
   */
  start(): Promise<void> {
    this.starting ??= this.begin();
    return this.starting;
  }

  /** Stops both list-watches (for good: a stopped discovery does not start again). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.settleStart(new Error(`discovery of InferencePool ${this.pool} stopped before its first list`));
    await Promise.all([this.poolWatch?.stop(), this.podWatch?.stop()]);
  }

  /** The endpoints now, sorted by pod, then port. */
  current(): readonly DiscoveredEndpoint[] {
    return this.endpoints;
  }

  status(): DiscoveryStatus {
    const pool = this.poolWatch?.status();
    const pods = this.podWatch?.status();
    const connected = Boolean(pool?.connected) && (pods?.connected ?? true);
    const error = this.poolError ?? pool?.lastError ?? pods?.lastError ?? null;
    const kept =
      !connected && this.published ? `; keeping the last ${this.endpoints.length} known endpoints` : "";
    return {
      synced:
        Boolean(pool?.synced && pods?.synced) && this.podsListed && connected && this.poolError === null,
      connected,
      lastSyncAt: this.lastSyncAt,
      error: error ? error.describe() + kept : null,
      endpoints: this.endpoints.length,
    };
  }

  private begin(): Promise<void> {
    try {
      this.connection =
        this.opts.connection ?? KubeConnection.load({ kubeconfig: this.opts.kubeconfig ?? null });
    } catch (err) {
      return Promise.reject(err);
    }
    const done = new Promise<void>((resolve, reject) => {
      const ms = this.opts.startTimeoutMs ?? 30_000;
      const timer = setTimeout(() => {
        const why = this.status().error ?? "no answer yet";
        this.settleStart(
          new DiscoveryError(
            "discovery_start_timeout",
            `InferencePool ${this.pool}: no list of the pool and its pods in ${ms} ms (${why}); still trying`,
          ),
        );
      }, ms);
      this.firstList = { resolve, reject, timer };
    });
    this.poolWatch = this.listWatch<PoolObject>(
      "inferencepools",
      `${INFERENCE_POOLS}/${this.opts.namespace}/inferencepools`,
      {
        fieldSelector: `metadata.name=${this.opts.inferencePool}`,
      },
      decodePool,
      (items) => this.poolChanged(items.get(this.opts.inferencePool) ?? null),
    );
    this.poolWatch.start();
    return done;
  }

  private listWatch<T>(
    resource: string,
    path: string,
    query: Record<string, string>,
    decode: (raw: unknown) => T | null,
    onChange: (items: ReadonlyMap<string, T>) => void,
  ): ListWatch<T> {
    const lw: ListWatch<T> = new ListWatch<T>({
      connection: this.connection!,
      path,
      query,
      decode,
      onChange: (items) => {
        // A replaced pod list-watch may still deliver while it stops.
        if (!this.stopped && this.isCurrent(lw)) onChange(items);
      },
      onNotice: (n) => this.notice(resource, n),
      onStatus: () => this.refresh(),
      relistMs: this.opts.relistMs,
      retry: this.opts.retry,
      watchTimeoutSeconds: this.opts.watchTimeoutSeconds,
    });
    return lw;
  }

  private isCurrent(lw: object): boolean {
    return lw === this.poolWatch || lw === this.podWatch;
  }

  private poolChanged(pool: PoolObject | null): void {
    if (!pool) {
      this.poolError = new DiscoveryError(
        "inference_pool_not_found",
        `no InferencePool "${this.opts.inferencePool}" in namespace "${this.opts.namespace}"`,
      );
      this.stopPods();
      if (this.selection) this.publish([], "pool-deleted");
      this.selection = null;
    } else if (!pool.selection) {
      // Keep the last good selection: the API server validates the CRD, so this is rare and transient.
      this.poolError = new DiscoveryError(
        "inference_pool_invalid",
        `InferencePool ${this.pool}: ${pool.invalid}`,
      );
    } else {
      this.poolError = null;
      this.selection = pool.selection;
      const selector = labelSelector(pool.selection.matchLabels);
      if (selector !== this.podSelector) this.startPods(selector);
      else if (this.podsListed) this.podsChanged(null);
    }
    this.refresh();
  }

  private startPods(selector: string): void {
    if (this.podWatch)
      this.emit("discovery.relist", { resource: "pods", reason: "selector-changed", selector });
    this.reselected = this.podWatch !== null || this.published;
    this.stopPods();
    this.podSelector = selector;
    this.podWatch = this.listWatch<PodFacts>(
      "pods",
      `/api/v1/namespaces/${this.opts.namespace}/pods`,
      {
        labelSelector: selector,
      },
      decodePod,
      () => {
        const reason = !this.podsListed && this.reselected ? "deselected" : null;
        this.podsListed = true;
        this.reselected = false;
        this.podsChanged(reason);
      },
    );
    this.podWatch.start();
  }

  private stopPods(): void {
    void this.podWatch?.stop();
    this.podWatch = null;
    this.podSelector = null;
    this.podsListed = false;
  }

  /** Recomputes the endpoints; `goneReason` replaces `pod-gone` right after a selector change. */
  private podsChanged(goneReason: string | null): void {
    const pods = this.podWatch?.items();
    if (!pods || !this.selection) return;
    const next = selectEndpoints(pods.values(), this.selection, this.endpoints);
    for (const c of endpointChanges(this.endpoints, next, pods, this.selection)) {
      const reason = c.reason === "pod-gone" && goneReason ? goneReason : c.reason;
      this.emit(`discovery.endpoint-${c.kind}`, { pod: c.endpoint.pod, address: c.endpoint.address, reason });
    }
    this.publish(next, null);
    this.settleStart(null);
  }

  private publish(next: readonly DiscoveredEndpoint[], removedReason: string | null): void {
    if (removedReason) {
      for (const e of this.endpoints) {
        this.emit("discovery.endpoint-removed", { pod: e.pod, address: e.address, reason: removedReason });
      }
    }
    if (this.published && sameEndpoints(this.endpoints, next)) return;
    this.endpoints = Object.freeze([...next]);
    this.published = true;
    try {
      this.opts.onChange(this.endpoints);
    } catch (err) {
      this.emit("discovery.on-change-failed", { error: (err as Error).message });
    }
  }

  private notice(resource: string, n: ListWatchNotice): void {
    if (n.kind === "relist") this.emit("discovery.relist", { resource, reason: n.reason, error: n.error });
    else if (n.kind === "watch-lost") {
      this.emit("discovery.watch-lost", { resource, error: n.error, resourceVersion: n.resourceVersion });
    } else if (n.kind === "request-failed" && n.error.code !== "kube_api_unreachable") {
      this.emit("discovery.request-failed", { resource, error: n.error.describe() });
    }
  }

  /** Emits the transitions of the API server's reachability and of `synced`. */
  private refresh(): void {
    if (this.stopped) return;
    if (this.podsListed) {
      const at = Math.max(this.poolWatch?.status().lastSyncAt ?? 0, this.podWatch?.status().lastSyncAt ?? 0);
      this.lastSyncAt = Math.max(this.lastSyncAt ?? 0, at);
    }
    const s = this.status();
    const failing = !s.connected && (this.poolWatch?.status().lastError ?? this.podWatch?.status().lastError);
    if (failing && this.apiState !== "down") {
      this.apiState = "down";
      this.emit("discovery.api-unreachable", { error: s.error, endpoints: s.endpoints });
    } else if (s.connected && this.apiState !== "up") {
      if (this.apiState === "down") this.emit("discovery.api-back", { endpoints: s.endpoints });
      this.apiState = "up";
    }
    if (s.synced && !this.wasSynced) this.emit("discovery.synced", { endpoints: s.endpoints });
    this.wasSynced = s.synced;
  }

  private settleStart(err: Error | null): void {
    const pending = this.firstList;
    if (!pending) return;
    this.firstList = null;
    clearTimeout(pending.timer);
    if (err) pending.reject(err);
    else pending.resolve();
  }

  private emit(event: string, fields: Record<string, unknown>): void {
    try {
      this.opts.onEvent?.(event, { pool: this.pool, ...fields });
    } catch {
      // A logger's failure is not discovery's.
    }
  }
}
