// On one machine the load generator, the simulated engines and the router under test share the CPUs; in
// production the router has cores of its own, the clients and the GPUs are elsewhere. When a burst of the
// harness's own work — hundreds of streams decoding at once after a cold start, each token written by
// the simulator and parsed by the client — takes both cores, the router's one thread waits for the CPU
// and the wait shows up as the router's latency. Measured on shared-prefix (2 cores): the gateway's event
// loop lagged 50–140 ms per turn for a second, two seconds into the run, and the requests of that second
// reached it 1.3 s late; with the router at nice −10 the stall was gone in 3 runs of 3.
//
// So the router under test — tokengate or nginx, treated alike — runs ahead of the harness: nice −10 on
// every thread of its process tree when the bench may raise priorities (root or CAP_SYS_NICE); otherwise
// the simulated engines are lowered to nice 10 instead (any user may lower their own processes). The
// report says which was done. The overhead benchmark does not use it (its instant engines do no simulated
// work, and a raised router preempted them at every streamed token); `overhead-pinned` isolates the
// router on its own CPU instead, given 3+.

import { setPriority } from "node:os";
import { treeTids } from "./child-process.js";

export const ROUTER_NICE = -10;
export const HARNESS_NICE = 10;

/** What was done: the router raised, the harness lowered, or nothing (neither was permitted). */
export type PriorityMode = "router nice -10" | "engines nice 10" | "none";

/**
 * Puts the router under test (`routerPid`'s process tree) ahead of the harness (`harnessPids`' trees).
 * Never throws: a bench on a machine that allows neither still runs, and says so.
 */
export function favorRouter(routerPid: number, harnessPids: readonly number[]): PriorityMode {
  if (process.env.TOKENGATE_BENCH_PRIORITY === "off") return "none";
  if (renice(treeTids(routerPid), ROUTER_NICE)) return "router nice -10";
  const harness = harnessPids.flatMap((p) => treeTids(p));
  return renice(harness, HARNESS_NICE) ? "engines nice 10" : "none";
}

/** One line for reports: what `mode` means. */
export function describePriority(mode: PriorityMode): string {
  switch (mode) {
    case "router nice -10":
      return "the router under test at nice −10, ahead of the client and the simulated engines";
    case "engines nice 10":
      return "the simulated engines at nice 10 (raising the router needs root), the router and the client at 0";
    case "none":
      return "everything at the same priority (TOKENGATE_BENCH_PRIORITY=off, or no renice was permitted)";
  }
}

function renice(tids: readonly number[], nice: number): boolean {
  if (tids.length === 0) return false;
  try {
    for (const tid of tids) setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}
