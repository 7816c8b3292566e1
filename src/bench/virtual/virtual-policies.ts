// Routing policies for the virtual fleet (virtual-fleet.ts): the baselines as nginx runs them, and
// the ideal of what tokengate's prefill view aims at — exact pending prefill, no scrape lag — with and
// without a gateway queue, in three orders. They are yardsticks, not tokengate's picker.

import type { VirtualEngineView, VirtualPolicy, VirtualRequest } from "./virtual-fleet.js";

export type QueueOrder = "fifo" | "tenant-fair" | "shortest-first" | "fair-shortest";
export const QUEUE_ORDERS: readonly QueueOrder[] = ["fifo", "tenant-fair", "shortest-first", "fair-shortest"];

export function roundRobin(): VirtualPolicy {
  let i = 0;
  return { name: "round-robin", pick: (_, es) => i++ % es.length, admit: null };
}

/** nginx `least_conn`: fewest requests in flight; ties go round the engines. */
export function leastRequest(): VirtualPolicy {
  let start = 0;
  return {
    name: "least-request",
    pick: (_, es) => {
      let best = -1;
      for (let k = 0; k < es.length; k++) {
        const i = (start + k) % es.length;
        if (best < 0 || es[i]!.inflight < es[best]!.inflight) best = i;
      }
      start = (start + 1) % es.length;
      return best;
    },
    admit: null,
  };
}

/** TTFT a request of `tokens` uncached prompt tokens would see on `e`: the API server, then chunked prefill. */
export function idealTtftMs(e: VirtualEngineView, tokens: number): number {
  const c = e.cfg;
  const prefill = e.pendingPrefillTokens + tokens;
  const steps = Math.ceil(prefill / c.maxNumBatchedTokens) + 1;
  const stepUs = c.beta0Us + c.beta2Us * e.decoding;
  return (c.apiServerUs * (1 + e.inApiServer) + c.beta1Us * prefill + stepUs * steps) / 1000;
}

function leastPredicted(req: VirtualRequest, es: readonly VirtualEngineView[]): number {
  let best = 0;
  let bestMs = Number.POSITIVE_INFINITY;
  for (const e of es) {
    const ms = idealTtftMs(e, req.promptTokens);
    if (ms < bestMs) [best, bestMs] = [e.index, ms];
  }
  return best;
}

/**
 * The least predicted TTFT with exact pending prefill. With `queue`, requests wait in the gateway while
 * every engine's predicted wait is above `boundMs`, and leave in `order`: arrival, the tenant served the
 * fewest tokens first (VTC), the fewest prompt tokens first with ageing (`agingTokensPerMs` a
 * millisecond waited counts as that many tokens fewer, so no request starves), or the fewest prompt
 * tokens (aged, plus its tenant's lead over the least-served one) among the tenants within
 * `fairSlackTokens` of the least-served one, as the gateway's queue orders (flow/fair-queue.ts).
 */
export function predictedTtft(queue?: {
  boundMs: number;
  order: QueueOrder;
  agingTokensPerMs?: number;
  fairSlackTokens?: number;
}): VirtualPolicy {
  if (!queue) return { name: "ideal prefill-aware", pick: leastPredicted, admit: null };
  const served = new Map<string, number>();
  // As the gateway's fair queue does (flow/fair-queue.ts): a tenant that had nothing queued starts again
  // at the least counter of those queued (or of the tenant served last), not at the count it had when it
  // went quiet, so a tenant idle until its burst does not own the queue for the burst's first minute.
  let lastServed = 0;
  const aging = queue.agingTokensPerMs ?? 10;
  const slack = queue.fairSlackTokens ?? 16_384;
  const counter = (v: VirtualRequest) => served.get(v.trace.tenant) ?? 0;
  const aged = (v: VirtualRequest, now: number) => v.promptTokens - (now - v.trace.t_ms) * aging;
  let floor = 0;
  const key = (v: VirtualRequest, now: number) =>
    queue.order === "tenant-fair"
      ? counter(v)
      : queue.order === "shortest-first"
        ? aged(v, now)
        : queue.order === "fair-shortest"
          ? counter(v) > floor + slack
            ? Number.POSITIVE_INFINITY
            : aged(v, now) + counter(v) - floor
          : v.trace.t_ms;
  return {
    name: `ideal prefill-aware, queue ≤ ${queue.boundMs} ms, ${queue.order}`,
    pick: leastPredicted,
    admit: (es) => es.some((e) => idealTtftMs(e, 0) <= queue.boundMs),
    next: (held, now) => {
      floor = Math.min(...held.map(counter));
      let best = 0;
      for (let i = 1; i < held.length; i++) if (key(held[i]!, now) < key(held[best]!, now)) best = i;
      return best;
    },
    queued: (v, held) => {
      const t = v.trace.tenant;
      if (held.some((h) => h.trace.tenant === t)) return;
      let floor = Number.POSITIVE_INFINITY;
      for (const h of held) floor = Math.min(floor, served.get(h.trace.tenant) ?? 0);
      served.set(t, Math.max(served.get(t) ?? 0, Number.isFinite(floor) ? floor : lastServed));
    },
    released: (v) => {
      lastServed = served.get(v.trace.tenant) ?? 0;
      served.set(v.trace.tenant, lastServed + v.promptTokens);
    },
  };
}
