// Settings the overhead benchmark and its report share.

import { fileURLToPath } from "node:url";
import { writeOnePoolGateway } from "../harness/one-pool-gateway.js";

/** `bare-node`: the least a proxy on tokengate's stack does (bare-proxy.ts), the stack's own price. */
export type PathName = "direct" | "tokengate" | "bare-node" | "nginx";

export const RATE = 1000;

/** A measurement during which other work used more than this many cores is repeated (at most twice). */
export const MAX_OTHER_CORES = 0.25;

export const CONCURRENCY = 64;

export const RELAY_TOKENS = 2000;

export const PATHS: PathName[] = ["direct", "tokengate", "bare-node", "nginx"];

/** The bare Node proxy's script, run as a child process. */
export const BARE_PROXY = fileURLToPath(new URL("./bare-proxy.js", import.meta.url));

/** The served model the benchmark's engines and routes use, and the alias callers send. */
export const MODEL = "m";
/**
 * Keep-alive connections per origin, as a real client's pool has. An unbounded pool turns any stall of
 * the path into a burst of new connections that overflows the listen queue (SYNs dropped, retried after
 * 1, 3, 7 s), which then measures the kernel's SYN back-off rather than the path; with a bound, requests
 * wait in the client's queue instead, and that wait is counted in their latency.
 */
export const CLIENT_CONNECTIONS = 128;
/**
 * The fixed-rate measurements alternate between the paths in this many slices (the order rotating),
 * so that other work on the machine — builds, tests, other benchmarks — falls on every path alike
 * instead of on whichever path happened to run during it; each path's samples are pooled. Each slice
 * starts with SLICE_WARMUP_MS of arrivals that are not counted (the path was idle meanwhile).
 */
export const SLICES = 20;
export const SLICE_WARMUP_MS = 300;
export const PROMPT = [
  { role: "user", content: "Summarize: the printer on floor 3 is out of toner again, third time." },
];
export const SMALL = JSON.stringify({ model: MODEL, messages: PROMPT, max_tokens: 16 });
/** As the undici stream client sends it (usage asked for, so the relay's usage path is exercised). */
export const STREAM = JSON.stringify({
  model: MODEL,
  messages: PROMPT,
  max_tokens: 16,
  stream: true,
  stream_options: { include_usage: true },
});

/** The gateway config every overhead run puts in front of `engines`: one pool, generous deadlines. */
export function writeOverheadGateway(dir: string, engines: string[]): void {
  writeOnePoolGateway(dir, {
    name: "bench",
    model: MODEL,
    engines,
    maxInputTokens: 100000,
    maxQueueMs: 10000,
    gatewaySpec:
      "  timeouts: { connectMs: 1000, firstByteMs: 30000, idleMs: 30000, totalMs: 600000 }\n  retry: { maxAttempts: 2, budgetPercent: 10 }\n",
  });
}
