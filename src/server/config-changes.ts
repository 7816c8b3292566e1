// Where a config change comes from and the order it is applied in. Two sources change what the gateway
// runs: a config (the file at start, a reload, the history's rollback) and Kubernetes discovery (pods of
// a pool found or gone). Both end in the gateway's `apply` with the declared config and the discovered
// engines put together (discovered-config.ts), one change at a time, so a reload and a pod turning ready
// never build two generations side by side; discovery's changes in a burst are coalesced into one.

import type { GatewayConfigSet } from "../config/config-set.js";
import type { DiscoveryStatus } from "../discovery/inference-pool-discovery.js";
import { type FoundEndpoint, withDiscovered } from "./discovered-config.js";
import type { DiscoveryService } from "./discovery-service.js";
import type { EngineChanges } from "./generation.js";

type Apply = (config: GatewayConfigSet) => Promise<EngineChanges>;
type OnEvent = (event: string, fields: Record<string, unknown>) => void;

export class ConfigChanges {
  /** Kubernetes discovery; null until a config has a pool that uses it. */
  private discovery: DiscoveryService | null = null;
  private applying: Promise<unknown> = Promise.resolve();
  private rediscovering: Promise<unknown> | null = null;

  constructor(
    /** The config as applied (a file, the history), before discovery puts its engines in. */
    private declared: GatewayConfigSet,
    private readonly apply: Apply,
    private readonly onEvent: OnEvent,
  ) {}

  /** What each discovered pool has found (empty without discovery). */
  get discovered(): ReadonlyMap<string, readonly FoundEndpoint[]> {
    return this.discovery?.endpoints ?? new Map();
  }

  /** Each discovered pool's watcher: synced, the API reachable, what it found (readiness, metrics). */
  status(): ReadonlyMap<string, DiscoveryStatus> {
    return this.discovery?.status() ?? new Map();
  }

  /**
   * At start: the discovered pools' first lists, and their engines in force, before the listener
   * opens. Resolves when every change asked for so far has been applied.
   */
  async start(): Promise<void> {
    await (await this.discoveryFor(this.declared))?.follow(this.declared);
    await this.applying;
  }

  /** Puts `config` in force, with the engines discovery has found for its pools. */
  async reload(config: GatewayConfigSet): Promise<EngineChanges> {
    this.declared = config;
    await (await this.discoveryFor(config))?.follow(config);
    return this.serially(() => this.apply(withDiscovered(config, this.discovered)));
  }

  async stop(): Promise<void> {
    await this.discovery?.stop();
  }

  /**
   * The watcher of the pools whose engines are discovered (created at the first config that has any;
   * its module, and @kubernetes/client-node with it, loaded only then).
   */
  private async discoveryFor(config: GatewayConfigSet): Promise<DiscoveryService | null> {
    if (this.discovery === null && hasDiscovery(config)) {
      const { DiscoveryService } = await import("./discovery-service.js");
      this.discovery = new DiscoveryService(() => void this.rediscover(), this.onEvent);
    }
    return this.discovery;
  }

  /** Discovery found engines come or go: the config in force again, with them (coalesced). */
  private rediscover(): Promise<unknown> {
    if (this.rediscovering) return this.rediscovering;
    this.rediscovering = this.serially(async () => {
      this.rediscovering = null;
      return this.apply(withDiscovered(this.declared, this.discovered));
    }).catch((err: unknown) =>
      this.onEvent("discovery.apply-failed", { error: err instanceof Error ? err.message : String(err) }),
    );
    return this.rediscovering;
  }

  /** Runs config changes one at a time (a reload and a discovery change may come together). */
  private serially<T>(f: () => Promise<T>): Promise<T> {
    const next = this.applying.then(f, f);
    this.applying = next.catch(() => undefined);
    return next;
  }
}

function hasDiscovery(config: GatewayConfigSet): boolean {
  return [...config.pools.values()].some((p) => p.discovery !== null);
}
