// What a soak run asks of the processes it drives: that the gateway routes to every engine before the
// load starts, an engine's fault injection (its crashes), and what stays counted once the load stopped.

import { request } from "undici";
import type { EndState } from "./soak-figures.js";
import { adminEndpoints, type EngineRef, procFdCount, procFdKinds, scrapeGateway } from "./soak-watch.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the gateway routes to every engine; returns them by the gateway's names. */
export async function routableEndpoints(adminUrl: string, urls: readonly string[]): Promise<EngineRef[]> {
  const until = performance.now() + 20_000;
  for (;;) {
    const eps = await adminEndpoints(adminUrl).catch(() => []);
    if (eps.length === urls.length && eps.every((e) => e.routable))
      return urls.map((u) => {
        const e = eps.find((x) => x.url === u);
        if (!e) throw new Error(`soak: no gateway endpoint for ${u}`);
        return { name: e.name, url: u };
      });
    if (performance.now() > until)
      throw new Error(`soak: the gateway did not route to every engine: ${JSON.stringify(eps)}`);
    await sleep(200);
  }
}

export async function postFault(engineUrl: string, fault: Record<string, unknown>): Promise<boolean> {
  try {
    const res = await request(`${engineUrl}/admin/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(fault),
      headersTimeout: 2000,
      bodyTimeout: 2000,
    });
    await res.body.dump();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}

/** What stays counted once the load stopped: the in-flight gauge, each endpoint's lease count, the queues. */
export async function endState(adminUrl: string, pid: number, settleMs: number): Promise<EndState> {
  const metrics = await scrapeGateway(adminUrl).catch(() => null);
  const eps = await adminEndpoints(adminUrl).catch(() => null);
  return {
    settle_ms: settleMs,
    inflight_metric: metrics?.inflight ?? null,
    inflight_by_endpoint: eps ? Object.fromEntries(eps.map((e) => [e.name, e.inflight.requests])) : null,
    queued_metric: metrics?.queued ?? null,
    fds: procFdCount(pid),
    fd_kinds: procFdKinds(pid),
    fds_before_load: null,
    fds_after_idle: null,
    idle_wait_s: null,
  };
}
