// An endpoint for unit tests of flow control and the picker's helpers: healthy, never contacted.

import { EndpointState } from "../endpoints/endpoint-state.js";

export function endpoint(name = "e0"): EndpointState {
  const ep = new EndpointState({
    pool: "p",
    name,
    url: "http://127.0.0.1:1",
    dialect: "vllm",
    metrics: { path: "/metrics", intervalMs: 100 },
    health: { path: "/health", intervalMs: 1000 },
  });
  ep.healthy = true;
  ep.healthStatus = "healthy";
  return ep;
}

/** A fresh scrape at `now` showing `waiting` queued and `kv` KV use. */
export function scraped(ep: EndpointState, now: number, waiting: number, kv: number): void {
  ep.waiting = waiting;
  ep.kvUsage = kv;
  ep.scrapedAt = now;
}
