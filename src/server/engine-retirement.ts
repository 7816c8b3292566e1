// Engines a reload removed: drained — no new request, what is on them finishes — and dropped from the
// endpoint monitor once nothing is in flight on them, each step a log event.

import type { EndpointState } from "../endpoints/endpoint-state.js";
import type { EndpointMonitor } from "../endpoints/scraper.js";
import type { RequestLog } from "../telemetry/request-log.js";

/** How often a draining engine is looked at. */
const CHECK_MS = 100;

export class EngineRetirement {
  private readonly draining = new Set<EndpointState>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly monitor: EndpointMonitor,
    private readonly log: RequestLog,
  ) {}

  /** Drains `ep` for good: it is never routable again, and leaves the monitor when idle. */
  retire(ep: EndpointState): void {
    ep.draining = true;
    ep.retired = true;
    this.draining.add(ep);
    this.log.event("endpoint.draining", { pool: ep.pool, endpoint: ep.name, in_flight: ep.inflightRequests });
    this.timer ??= setInterval(() => this.check(), CHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private check(): void {
    for (const e of this.draining) {
      if (e.inflightRequests > 0) continue;
      this.draining.delete(e);
      this.monitor.remove(e);
      this.log.event("endpoint.removed", { pool: e.pool, endpoint: e.name });
    }
    if (this.draining.size === 0) this.stop();
  }
}
