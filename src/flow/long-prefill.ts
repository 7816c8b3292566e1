// Keeping some of a pool's endpoints free of long prefills while short prompts arrive. An engine runs
// its queue first come first served through chunked prefill: a short prompt sent behind a long one waits
// for it whole (on an A100 a 6,000-token prompt holds a 2,048-token step budget for ~350 ms). When every
// endpoint of the pool is prefilling a long prompt, a short one has nowhere to go but behind one. So a
// long prompt that would take the last endpoints still free of them waits in the gateway queue instead,
// until a long prefill ends somewhere, and short prompts go past it; vLLM's scheduler does the same inside
// one engine (`--max-long-partial-prefills`). Only while short prompts are arriving: a pool of long
// prompts alone is never held below its full width. Off by default: it trades long prompts' TTFT for
// short ones'. In noisy-neighbor (seed 1, one run each against the same code without it) short prompts'
// P99 went 353 → 303 ms (0.44× → 0.40× least-request's), P90 223 → 218, but P99 600 → 629 ms and the
// steady tenants' P99 in the burst 682 → 712 ms, their long prompts now waiting up to ~500 ms here.
//
// Across pools it is on whenever a pool shares engines with a pool of higher route priority (its rivals,
// flow-control.ts shareEngines): the queue's priority ends at dispatch, and an engine prefills first come
// first served, so a batch pool's 50,000-token prompt sent to every engine makes the live pool's requests
// wait a second each wherever they go. While a rival has traffic, this pool's long prompts leave it enough
// endpoints free of long prefills to carry what it is sending: its placed prefill time per unit of time
// (an occupancy, decayed over DEMAND_TAU_MS) over RIVAL_RESERVE_UTILIZATION, rounded up, at least one,
// never every endpoint. Decode is not held: a prompt past its first token frees its endpoint for the next.

import {
  DEFAULT_LONG_PREFILL,
  LONG_PREFILL_ON_MS,
  type LongPrefillSettings,
} from "../config/saturation-bounds.js";
import type { EndpointState } from "../endpoints/endpoint-state.js";

/** How recently a short prompt (or a rival's request) must have been placed for long ones to be held back. */
export const SHORT_SEEN_MS = 1000;
/** The time over which a pool's placed prefill time is averaged (exponential decay). */
export const DEMAND_TAU_MS = 5000;
/**
 * How busy a rival's reserve may be kept by the rival's own prefills: at one half, an M/D/1 queue of
 * equal prompts waits half a prompt's prefill on average before its own.
 */
export const RIVAL_RESERVE_UTILIZATION = 0.5;

export class LongPrefillGuard {
  private lastShortAt = Number.NEGATIVE_INFINITY;
  private lastPlacedAt = Number.NEGATIVE_INFINITY;
  /** Prefill ms placed, decayed to `demandAt` (DEMAND_TAU_MS). */
  private demandMs = 0;
  private demandAt = 0;
  /** The guards of pools of higher priority on the same engines (PoolFlow.addRival). */
  readonly rivals: LongPrefillGuard[] = [];
  /** A pool of lower priority on the same engines reads this one's demand: noted even when off. */
  watched = false;

  constructor(public settings: LongPrefillSettings = DEFAULT_LONG_PREFILL) {}

  /**
   * Why a prompt of `uncached` tokens picked onto `chosen`, among `endpoints` (all the request's
   * candidates, whatever their bounds: one this pool may not fill is still free for the others' prompts
   * or not), waits instead, or null when it may go. Notes the prompts that go: short ones, and the
   * prefill time placed (what a lower-priority pool reserves endpoints for).
   */
  holds(
    endpoints: readonly EndpointState[],
    chosen: EndpointState,
    uncached: number,
    now: number,
  ): string | null {
    const own = this.settings.minPrefillMs;
    const judges = own !== null || this.rivals.length > 0;
    if (!judges && !this.watched) return null;
    // Until the engine's fit is learned: its learned peers' slope, else the cost model's prior (0.1 ms
    // per token by default, slower than the GPUs it meets), so a cold gateway leans towards the
    // higher-priority pool.
    const learned = chosen.prefill.learned;
    const ms = chosen.prefill.ownPrefillMs(uncached);
    if (!judges || (!learned && this.rivals.length === 0)) return this.goes(ms, now);
    const minMs = own ?? LONG_PREFILL_ON_MS;
    if (ms < minMs) {
      this.lastShortAt = now;
      return this.goes(ms, now);
    }
    if (prefillsLong(chosen, minMs)) return this.goes(ms, now);
    const { keep, forWhom } = this.reserve(endpoints.length, learned, now);
    if (keep === 0) return this.goes(ms, now);
    let busy = 1;
    for (const e of endpoints) if (e !== chosen && prefillsLong(e, minMs)) busy++;
    return busy > endpoints.length - keep
      ? `long prefill: ${busy - 1} of ${endpoints.length} endpoints prefill a long prompt, ${keep} kept for ${forWhom}`
      : this.goes(ms, now);
  }

  /** This pool's placed prefill time per ms of the last DEMAND_TAU_MS or so; 0 when it has been quiet. */
  demand(now: number): number {
    if (now - this.lastPlacedAt > SHORT_SEEN_MS) return 0;
    return (this.demandMs * Math.exp(-(now - this.demandAt) / DEMAND_TAU_MS)) / DEMAND_TAU_MS;
  }

  /** A prompt with `ms` of prefill on its endpoint goes: noted. */
  private goes(ms: number, now: number): null {
    this.demandMs = this.demandMs * Math.exp(-(now - this.demandAt) / DEMAND_TAU_MS) + ms;
    this.demandAt = now;
    this.lastPlacedAt = now;
    return null;
  }

  /** How many of `n` endpoints to keep free of long prefills now, and for whom (its own rule: once learned). */
  private reserve(n: number, learned: boolean, now: number): { keep: number; forWhom: string } {
    const own =
      learned && this.settings.minPrefillMs !== null && now - this.lastShortAt <= SHORT_SEEN_MS
        ? Math.floor(n * this.settings.shortReserve)
        : 0;
    let rival = 0;
    for (const r of this.rivals) rival += r.demand(now);
    const forRivals =
      rival > 0 ? Math.min(n - 1, Math.max(1, Math.ceil(rival / RIVAL_RESERVE_UTILIZATION))) : 0;
    return forRivals > own
      ? { keep: forRivals, forWhom: `higher-priority pools (prefill occupancy ${rival.toFixed(2)})` }
      : { keep: own, forWhom: "short ones" };
  }
}

/**
 * `e` holds a prompt of at least minPrefillMs of prefill not yet first-tokened. Counted whole until its
 * first token: crediting the oldest one's progress (drainedTokens) released held prompts earlier and in
 * noisy-neighbor gave back most of what holding gained short prompts (their P99 348 ms against 303).
 */
function prefillsLong(e: EndpointState, minPrefillMs: number): boolean {
  const p = e.prefill;
  return p.ownPrefillMs(p.largestPendingTokens()) >= minPrefillMs;
}
