// Loaded into the overhead benchmark's routers (tokengate and the bare Node proxy) with `node --import`,
// nothing of their own code changed: appends to the file TOKENGATE_PAUSE_PROBE names, as JSON lines,
// each garbage collection (its start on the wall clock and its pause) and each event-loop stall of
// STALL_MS or more (a STEP_MS timer firing that late), so that the benchmark can say what paused a
// router while it measured the router's latency (router-pauses.ts). A timer 50 times a second and an
// observer of collections: a fraction of a microsecond per request at the benchmark's rate.

import { appendFileSync } from "node:fs";
import { PerformanceObserver } from "node:perf_hooks";

const STEP_MS = 20;
const STALL_MS = 10;

const file = process.env.TOKENGATE_PAUSE_PROBE;
if (file) {
  const lines: string[] = [];
  const flush = () => {
    if (lines.length === 0) return;
    try {
      appendFileSync(file, `${lines.join("\n")}\n`);
    } catch {
      // The benchmark removed its folder: nothing more to report.
    }
    lines.length = 0;
  };
  const origin = performance.timeOrigin;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      lines.push(JSON.stringify({ kind: "gc", at: Math.round(origin + e.startTime), ms: e.duration }));
  }).observe({ entryTypes: ["gc"] });
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const late = now - last - STEP_MS;
    if (late >= STALL_MS)
      lines.push(JSON.stringify({ kind: "stall", at: Math.round(origin + last), ms: late }));
    last = now;
  }, STEP_MS).unref();
  setInterval(flush, 250).unref();
  process.on("exit", flush);
}
