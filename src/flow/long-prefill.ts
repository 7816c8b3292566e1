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

import { DEFAULT_LONG_PREFILL, type LongPrefillSettings } from "../config/saturation-bounds.js";
import type { EndpointState } from "../endpoints/endpoint-state.js";

/** How recently a short prompt must have been placed for long ones to be held back. */
export const SHORT_SEEN_MS = 1000;

export class LongPrefillGuard {
  private lastShortAt = Number.NEGATIVE_INFINITY;

  constructor(public settings: LongPrefillSettings = DEFAULT_LONG_PREFILL) {}

  /**
   * Why a prompt of `uncached` tokens picked onto `chosen`, among `endpoints` (those within the hard
   * bounds), waits instead, or null when it may go. Notes the short prompts it sees.
   */
  holds(
    endpoints: readonly EndpointState[],
    chosen: EndpointState,
    uncached: number,
    now: number,
  ): string | null {
    const { minPrefillMs, shortReserve } = this.settings;
    if (minPrefillMs === null || !chosen.prefill.learned) return null;
    if (chosen.prefill.ownPrefillMs(uncached) < minPrefillMs) {
      this.lastShortAt = now;
      return null;
    }
    const keep = Math.floor(endpoints.length * shortReserve);
    if (keep === 0 || now - this.lastShortAt > SHORT_SEEN_MS || prefillsLong(chosen, minPrefillMs))
      return null;
    let busy = 1;
    for (const e of endpoints) if (e !== chosen && prefillsLong(e, minPrefillMs)) busy++;
    return busy > endpoints.length - keep
      ? `long prefill: ${busy - 1} of ${endpoints.length} endpoints prefill a long prompt, ${keep} kept for short ones`
      : null;
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
