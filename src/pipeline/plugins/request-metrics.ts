// The request's Prometheus series, once it is over: its count by pool, task and status, and — when it
// reached an engine — its TTFT, duration, the engine's own queue, prefill and decode times, and the
// tokens it used by tenant.

import type { HookFactory } from "./hook-factory.js";

export const requestMetrics: HookFactory = (gw) => ({
  name: "request-metrics",
  settle(rec) {
    const m = gw.metrics;
    const pool = rec.pool ?? "none";
    const task = rec.task && rec.taskKnown ? rec.task : "unknown";
    m.requests.labels(pool, task, rec.status).inc();
    if (rec.pool) m.tasks.labels(rec.taskKnown ? "true" : "false").inc();
    if (!rec.pool || rec.attempts === 0) return;
    if (Number.isFinite(rec.firstTokenAt))
      m.ttftSeconds.labels(pool).observe((rec.firstTokenAt - rec.t0) / 1000);
    m.durationSeconds.labels(pool).observe(rec.elapsedMs() / 1000);
    if (rec.runtimeQueueMs !== null) m.runtimeQueueSeconds.labels(pool).observe(rec.runtimeQueueMs / 1000);
    if (rec.prefillMs !== null) m.runtimePrefillSeconds.labels(pool).observe(rec.prefillMs / 1000);
    if (rec.decodeMs !== null) m.runtimeDecodeSeconds.labels(pool).observe(rec.decodeMs / 1000);
    const tenant = rec.tenant ?? "unknown";
    if (rec.inputTokensActual !== null) m.inputTokens.labels(pool, tenant).inc(rec.inputTokensActual);
    if (rec.outputTokens !== null) m.outputTokens.labels(pool, tenant).inc(rec.outputTokens);
  },
});
