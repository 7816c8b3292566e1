// When the soak benchmark crashes an engine, and which one: every few minutes, rotating over the
// replicas, each crash leaving time for the restart and the gateway's recovery before the load stops;
// a run too short for the regular spacing still gets one crash, in its middle.

export interface CrashScheduleOptions {
  /** Length of the load (ms). */
  durationMs: number;
  replicas: number;
  /** How long a crashed engine stays down before it listens again (the sim's restartAfterMs). */
  restartAfterMs: number;
  /** Spacing of crashes; default a quarter of the run, within [minEveryMs, maxEveryMs]. */
  everyMs?: number;
  minEveryMs?: number;
  maxEveryMs?: number;
  /**
   * Time after a restart the load keeps running, so the report sees the engine back in service (the
   * gateway's health check and, after a reset, its ejection of 30 s by default); default 40 s.
   */
  recoveryMs?: number;
}

export interface ScheduledCrash {
  /** From the start of the load (ms). */
  atMs: number;
  /** Index of the replica that crashes. */
  replica: number;
}

export const DEFAULT_CRASH_SPACING = { minEveryMs: 40_000, maxEveryMs: 180_000, recoveryMs: 40_000 };

/**
 * Crashes at everyMs, 2·everyMs, … (replica 0, 1, 2, 0, …) while the restart and the recovery fit before
 * the end; at least one, at the middle of the run, when none fits.
 * @example crashSchedule({ durationMs: 600_000, replicas: 3, restartAfterMs: 5000 })
 * // [{ atMs: 150000, replica: 0 }, { atMs: 300000, replica: 1 }, { atMs: 450000, replica: 2 }]
 */
export function crashSchedule(opts: CrashScheduleOptions): ScheduledCrash[] {
  if (!(opts.durationMs > 0) || !(opts.replicas >= 1)) return [];
  const minEvery = opts.minEveryMs ?? DEFAULT_CRASH_SPACING.minEveryMs;
  const maxEvery = opts.maxEveryMs ?? DEFAULT_CRASH_SPACING.maxEveryMs;
  const every = opts.everyMs ?? Math.min(maxEvery, Math.max(minEvery, opts.durationMs / 4));
  const recovery = opts.recoveryMs ?? DEFAULT_CRASH_SPACING.recoveryMs;
  const lastAt = opts.durationMs - opts.restartAfterMs - recovery;
  const out: ScheduledCrash[] = [];
  for (let at = every; at <= lastAt; at += every) {
    out.push({ atMs: Math.round(at), replica: out.length % opts.replicas });
  }
  if (out.length === 0) out.push({ atMs: Math.round(opts.durationMs / 2), replica: 0 });
  return out;
}
