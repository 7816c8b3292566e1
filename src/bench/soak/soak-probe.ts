// Loaded into the soak benchmark's gateway process with `node --import` (nothing of the gateway's own
// changes): every TOKENGATE_SOAK_PROBE_MS it appends the process's memory figures to the file named by
// TOKENGATE_SOAK_PROBE, and on SIGUSR2 it runs a full GC first (when started with --expose-gc) and
// appends the figures after it, so the benchmark can compare heaps without garbage waiting to be freed.

import { appendFileSync } from "node:fs";

export interface ProbeSample {
  /** Wall-clock ms. */
  at: number;
  /** Whether a full GC ran just before (SIGUSR2). */
  gc: boolean;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

const file = process.env.TOKENGATE_SOAK_PROBE;
if (file) {
  const write = (gc: boolean) => {
    const m = process.memoryUsage();
    const s: ProbeSample = {
      at: Date.now(),
      gc,
      rss: m.rss,
      heapUsed: m.heapUsed,
      heapTotal: m.heapTotal,
      external: m.external,
      arrayBuffers: m.arrayBuffers,
    };
    try {
      appendFileSync(file, `${JSON.stringify(s)}\n`);
    } catch {
      // The benchmark removed its folder: nothing more to report.
    }
  };
  const ms = Number(process.env.TOKENGATE_SOAK_PROBE_MS ?? 5000);
  setInterval(() => write(false), ms > 0 ? ms : 5000).unref();
  process.on("SIGUSR2", () => {
    (globalThis as { gc?: () => void }).gc?.();
    write(true);
  });
}
