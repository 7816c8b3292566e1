// The gateway's Kubernetes discovery: one watcher (src/discovery/) per pool whose config says
// `discovery.kubernetes`, each keeping its pool's engines as the Ready pods of a GIE InferencePool.
// What they find is held here by pool and handed to the gateway, which puts it in force the way a
// reload would (discovered-config.ts). The watchers follow the config: a reload that adds, removes or
// retargets a discovered pool starts and stops them. While the API server is unreachable a watcher
// keeps its last known pods; its status (readiness, `ai_gateway_discovery_*`, `discovery.*` events)
// says so.

import { readFileSync } from "node:fs";
import type { GatewayConfigSet } from "../config/config-set.js";
import type { PoolDiscovery } from "../config/inference-pool.js";
import { type DiscoveryStatus, InferencePoolDiscovery } from "../discovery/inference-pool-discovery.js";
import type { FoundEndpoint } from "./discovered-config.js";

const SA_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
/** How long the gateway's start waits for a pool's first list before it listens anyway (not ready). */
const FIRST_SYNC_MS = 10_000;

interface Watch {
  readonly key: string;
  readonly discovery: InferencePoolDiscovery;
}

/** The namespace a pool without one looks in: the gateway's own pod's, else `default`. */
export function ownNamespace(env: NodeJS.ProcessEnv = process.env, saFile = SA_NAMESPACE): string {
  if (env.POD_NAMESPACE) return env.POD_NAMESPACE;
  try {
    const ns = readFileSync(saFile, "utf8").trim();
    if (ns !== "") return ns;
  } catch {
    // Not in a pod.
  }
  return "default";
}

export class DiscoveryService {
  private readonly watches = new Map<string, Watch>();
  private readonly found = new Map<string, readonly FoundEndpoint[]>();
  private stopped = false;

  constructor(
    /** Something a watcher found changed: put the pools' endpoints in force. */
    private readonly changed: () => void,
    private readonly onEvent: (event: string, fields: Record<string, unknown>) => void,
    private readonly namespace: string = ownNamespace(),
  ) {}

  /** What each discovered pool has found. */
  get endpoints(): ReadonlyMap<string, readonly FoundEndpoint[]> {
    return this.found;
  }

  /**
   * Starts, stops and retargets watchers to match `config`; waits (at most FIRST_SYNC_MS) for the
   * first list of the new ones, so a start finds its engines before it listens.
   */
  async follow(config: GatewayConfigSet): Promise<void> {
    if (this.stopped) return;
    const wanted = new Map<string, PoolDiscovery>();
    for (const [name, pool] of config.pools) if (pool.discovery) wanted.set(name, pool.discovery);
    for (const [pool, w] of this.watches) {
      const d = wanted.get(pool);
      if (d === undefined || this.keyOf(d, config) !== w.key) {
        this.watches.delete(pool);
        this.found.delete(pool);
        await w.discovery.stop();
      }
    }
    const started: Promise<void>[] = [];
    for (const [pool, d] of wanted) {
      if (this.watches.has(pool)) continue;
      const discovery = new InferencePoolDiscovery({
        namespace: d.kubernetes.namespace ?? this.namespace,
        inferencePool: d.kubernetes.inferencePool,
        kubeconfig: config.gateway.kubernetes.kubeconfig,
        onChange: (eps) => {
          if (this.watches.get(pool)?.discovery !== discovery) return;
          this.found.set(pool, eps);
          this.changed();
        },
        // The watcher names its InferencePool `pool` ("ns/name"); the log's `pool` is the config's.
        onEvent: (event, fields) => this.onEvent(event, { ...fields, inference_pool: fields.pool, pool }),
      });
      this.watches.set(pool, { key: this.keyOf(d, config), discovery });
      started.push(
        withTimeout(discovery.start(), FIRST_SYNC_MS).catch((err: unknown) =>
          this.onEvent("discovery.not-synced", {
            pool,
            error: err instanceof Error ? err.message : String(err),
          }),
        ),
      );
    }
    await Promise.all(started);
  }

  /** Each discovered pool's watcher status, for readiness and metrics. */
  status(): Map<string, DiscoveryStatus> {
    return new Map([...this.watches].map(([pool, w]) => [pool, w.discovery.status()]));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const all = [...this.watches.values()];
    this.watches.clear();
    await Promise.all(all.map((w) => w.discovery.stop()));
  }

  private keyOf(d: PoolDiscovery, config: GatewayConfigSet): string {
    return JSON.stringify([d.kubernetes, config.gateway.kubernetes.kubeconfig]);
  }
}

function withTimeout(p: Promise<void>, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no list of the InferencePool's pods within ${ms} ms`)), ms);
    t.unref();
    p.then(
      () => {
        clearTimeout(t);
        resolve();
      },
      (err) => {
        clearTimeout(t);
        reject(err);
      },
    );
  });
}
