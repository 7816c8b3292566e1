// The gateway's connections upstream: one undici Pool per origin (an engine, the legacy service), made on
// first use and kept for the gateway's life.

import { Pool } from "undici";

export class UpstreamPools {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly connectTimeoutMs: () => number) {}

  for(origin: string): Pool {
    let d = this.pools.get(origin);
    if (!d) {
      d = new Pool(origin, {
        connections: 1024,
        pipelining: 1,
        keepAliveTimeout: 60_000,
        connect: { timeout: this.connectTimeoutMs() },
      });
      this.pools.set(origin, d);
    }
    return d;
  }

  async destroy(): Promise<void> {
    await Promise.all([...this.pools.values()].map((d) => d.destroy()));
  }
}
