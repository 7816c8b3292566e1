// What paused a router inside the windows a path was measured in, from its pause probe's file
// (pause-probe.ts): its garbage collections and its event-loop stalls.

import { existsSync, readFileSync } from "node:fs";
import { round } from "../stats.js";

export interface PauseEvent {
  readonly kind: "gc" | "stall";
  /** Wall-clock ms it began. */
  readonly at: number;
  readonly ms: number;
}

export interface RouterPauses {
  /** Collections and the time they paused the router, ms, and the longest. */
  gc_count: number;
  gc_ms: number;
  gc_max_ms: number;
  /** Event-loop stalls of 10 ms or more (whatever the cause: a collection, work, or no CPU to run on). */
  stalls: number;
  stall_max_ms: number;
}

export function readPauseEvents(file: string): PauseEvent[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as PauseEvent);
}

/** The pauses that began inside any of `windows` ([start, end] wall-clock ms). */
export function pausesWithin(
  events: readonly PauseEvent[],
  windows: readonly (readonly [number, number])[],
): RouterPauses {
  const inside = events.filter((e) => windows.some(([a, b]) => e.at >= a && e.at <= b));
  const gc = inside.filter((e) => e.kind === "gc");
  const stalls = inside.filter((e) => e.kind === "stall");
  return {
    gc_count: gc.length,
    gc_ms: round(
      gc.reduce((s, e) => s + e.ms, 0),
      1,
    ),
    gc_max_ms: round(Math.max(0, ...gc.map((e) => e.ms)), 1),
    stalls: stalls.length,
    stall_max_ms: round(Math.max(0, ...stalls.map((e) => e.ms)), 1),
  };
}
