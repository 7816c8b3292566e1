// Per tenant, where a router's time went between the client and the engine (issue 31): the hop (the
// client's TTFT less the engine's own), the wait in the gateway queue, and how long an engine the
// request could have gone to sat without prefill while the gateway held it (`held_while_idle_ms` on the
// gateway's log line). Work-conserving flow control keeps the last near zero; a router without a
// gateway log (nginx) has only the hop.

import type { TenantFlow } from "../results.js";
import { latencyQuantiles, round } from "../stats.js";
import type { ReplayRecord } from "../traffic/replay.js";

/** By tenant, sorted by name; `engineTtftMs` NaN where the engine kept no record. */
export function tenantFlow(
  records: readonly ReplayRecord[],
  engineTtftMs: (r: ReplayRecord) => number,
  log: readonly Record<string, unknown>[] | null,
): Record<string, TenantFlow> {
  const lines = new Map<string, Record<string, unknown>>();
  for (const l of log ?? []) {
    if (typeof l.trace_id === "string" && String(l.event).startsWith("inference.")) lines.set(l.trace_id, l);
  }
  const groups = new Map<string, ReplayRecord[]>();
  for (const r of records) {
    if (r.result.error) continue;
    const list = groups.get(r.req.tenant);
    if (list) list.push(r);
    else groups.set(r.req.tenant, [r]);
  }
  const out: Record<string, TenantFlow> = {};
  for (const tenant of [...groups.keys()].sort()) {
    const list = groups.get(tenant)!;
    const hop = list.map((r) => r.result.ttftMs - engineTtftMs(r));
    let queue: number[] | null = null;
    let afterQueue: number[] | null = null;
    let idleTotal: number | null = null;
    let idleRequests: number | null = null;
    if (log !== null) {
      queue = [];
      afterQueue = [];
      idleTotal = 0;
      idleRequests = 0;
      for (const r of list) {
        const line = lines.get(r.req.id);
        if (!line) continue;
        if (typeof line.gateway_queue_ms === "number") {
          queue.push(line.gateway_queue_ms);
          afterQueue.push(r.result.ttftMs - engineTtftMs(r) - line.gateway_queue_ms);
        }
        const idle = line.held_while_idle_ms;
        if (typeof idle === "number" && line.gateway_queue_reason !== "paused") {
          idleTotal += idle;
          if (idle > 10) idleRequests++;
        }
      }
    }
    out[tenant] = {
      count: list.length,
      hop_ms: latencyQuantiles(hop),
      hop_after_queue_ms: afterQueue === null ? null : latencyQuantiles(afterQueue),
      gateway_queue_ms: queue === null ? null : latencyQuantiles(queue),
      held_while_idle_ms_total: idleTotal === null ? null : round(idleTotal),
      held_while_idle_requests: idleRequests,
    };
  }
  return out;
}
