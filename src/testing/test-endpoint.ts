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
  ep.health.status = "healthy";
  return ep;
}

/** A fresh scrape at `now` showing `waiting` queued and `kv` KV use. */
export function scraped(ep: EndpointState, now: number, waiting: number, kv: number): void {
  ep.scrape.waiting = waiting;
  ep.scrape.kvUsage = kv;
  ep.scrape.scrapedAt = now;
}

/**
 * `n` endpoints sharing one pool's prefill view, whose fits have learned 50 ms per 1,000 prompt tokens
 * (+ 20 ms), as on an A100.
 */
export function learnedPool(n = 4): EndpointState[] {
  const eps = Array.from({ length: n }, (_, i) => endpoint(`e${i}`));
  for (const ep of eps) ep.prefill.peers = eps.map((e) => e.prefill);
  let t = 0;
  for (const ep of eps) {
    for (let i = 0; i < 20; i++) {
      const tokens = 300 + ((i * 577) % 6000);
      const lease = ep.acquire(tokens, { uncached: tokens, stream: true }, t);
      lease.firstToken(t + 20 + (50 * tokens) / 1000);
      lease.release();
      t += 100;
    }
  }
  return eps;
}
