// The gateway's request log after a soak run, read back to explain its failures.

import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { GatewayLogSummary } from "./soak-figures.js";

/**
 * The gateway's log, read line by line (it is large): the lines of the given trace ids, and a summary
 * of all of it — requests by status, how many were retried and how many failed without a retry, and
 * the log events (endpoint health, ejections, circuit changes, loop stalls) by name.
 */
export async function readGatewayLog(
  file: string,
  traceIds: ReadonlySet<string>,
): Promise<{ lines: Map<string, Record<string, unknown>>; summary: GatewayLogSummary }> {
  const lines = new Map<string, Record<string, unknown>>();
  const summary: GatewayLogSummary = {
    requests: 0,
    by_status: {},
    retried: 0,
    retried_ok: 0,
    failed_without_retry_after_retryable: 0,
    events: {},
  };
  const keep = [
    "status",
    "error_code",
    "http_status",
    "attempts",
    "endpoint",
    "fallback_reason",
    "stream",
    "latency_ms",
  ];
  try {
    const rl = createInterface({
      input: createReadStream(file, "utf8"),
      crlfDelay: Number.POSITIVE_INFINITY,
    });
    for await (const line of rl) {
      if (!line.startsWith("{")) continue;
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue; // not a whole line
      }
      const event = String(rec.event);
      if (event !== "inference.completed" && event !== "inference.rejected") {
        summary.events[event] = (summary.events[event] ?? 0) + 1;
        continue;
      }
      summary.requests++;
      const status = String(rec.status);
      summary.by_status[status] = (summary.by_status[status] ?? 0) + 1;
      const attempts = Number(rec.attempts);
      if (attempts > 1) {
        summary.retried++;
        if (status === "ok") summary.retried_ok++;
      } else if (
        String(rec.fallback_reason ?? "").includes("retry:") &&
        status === "error" &&
        rec.error_code !== "no_healthy_endpoint" // no endpoint left to retry on, not the budget
      )
        summary.failed_without_retry_after_retryable++;
      const id = String(rec.trace_id);
      if (traceIds.has(id)) lines.set(id, Object.fromEntries(keep.map((k) => [k, rec[k] ?? null])));
    }
  } catch {
    // no log: the samples go without it
  }
  return { lines, summary };
}
