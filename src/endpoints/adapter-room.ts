// Making room for an adapter that has no slot anywhere. With more adapters wanted than the fleet has
// `--max-loras` slots, one adapter can find every slot busy with adapters that always have a request
// running; vLLM then never schedules it (a waiting request whose adapter would exceed max_loras is
// skipped), and its requests wait in the gateway until they time out while the engines stay busy. So
// once such a request has waited `ROOM_AFTER_MS`, the gateway picks one engine and one adapter there to
// give way: the adapter with the fewest of the gateway's requests running on it, preferring one that
// also runs on another engine (its traffic has somewhere to go). No new request for that adapter goes
// to that engine until the waiting adapter runs there (or `RESERVE_MS` passes); its running requests
// finish, the slot frees, and the waiting adapter is loaded in its place.

import type { EndpointState } from "./endpoint-state.js";

/** How long a request for an adapter waits for a slot before the gateway frees one for it. */
export const ROOM_AFTER_MS = 1000;
/** The longest a slot stays reserved if the adapter never comes to take it. */
export const RESERVE_MS = 15_000;

export interface RoomMade {
  readonly endpoint: EndpointState;
  readonly evicting: string;
}

/**
 * Reserves a slot for `adapter` on one of `endpoints`, unless one is already being freed for it.
 * Returns the reservation made, or null (one exists, or no engine reports its adapters).
 */
export function makeRoomFor(
  adapter: string,
  endpoints: readonly EndpointState[],
  now: number,
): RoomMade | null {
  let best: { ep: EndpointState; victim: string; cost: number } | null = null;
  for (const ep of endpoints) {
    const r = ep.adapterRecord.reserved(now);
    if (r?.adapter === adapter) return null;
    if (r !== null || !ep.routable(now) || ep.loras === null || ep.loras.max === null) continue;
    for (const victim of busyAdapters(ep)) {
      if (victim === adapter) continue;
      // Fewer of its requests to wait out is better; an adapter that also runs elsewhere loses little.
      const elsewhere = endpoints.some((o) => o !== ep && runsOn(o, victim));
      const cost = ep.adapterRecord.inflightOf(victim) + (elsewhere ? 0 : 1000);
      if (best === null || cost < best.cost) best = { ep, victim, cost };
    }
  }
  if (best === null) return null;
  best.ep.adapterRecord.reserve({ adapter, evicting: best.victim, until: now + RESERVE_MS });
  return { endpoint: best.ep, evicting: best.victim };
}

function runsOn(ep: EndpointState, adapter: string): boolean {
  return (
    ep.routable(Date.now()) &&
    (ep.loras?.running.includes(adapter) === true || ep.adapterRecord.isActive(adapter))
  );
}

/** The adapters holding the engine's slots: the scrape's running ones and the gateway's own in flight. */
function busyAdapters(ep: EndpointState): Set<string> {
  const out = new Set<string>(ep.loras?.running ?? []);
  for (const a of ep.adapterRecord.active()) out.add(a);
  return out;
}
