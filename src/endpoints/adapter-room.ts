// Making room for an adapter that has no slot anywhere. With more adapters wanted than the fleet has
// `--max-loras` slots, one adapter can find every slot busy with adapters that always have a request
// running; vLLM then never schedules it (a waiting request whose adapter would exceed max_loras is
// skipped), and its requests wait in the gateway until they time out while the engines stay busy. So
// once such a request has waited `ROOM_AFTER_MS`, the gateway picks one engine and one adapter there to
// give way: the adapter with the fewest of the gateway's requests running on it, preferring one that
// also runs on another engine (its traffic has somewhere to go). No new request for that adapter goes
// to that engine until the waiting adapter runs there (or `RESERVE_MS` passes); its running requests
// finish, the slot frees, and the waiting adapter is loaded in its place.
//
// The same spreads a hot adapter (GIE's LoRA affinity spreads one whose endpoints queue): when the engine
// a request for it was placed on is predicted `HOT_MARGIN_MS` slower than the least loaded engine that
// lacks it, a slot is freed for it on the least loaded such engine. Without this, an adapter that needs
// two engines' worth of capacity stays on the one it was first loaded on whenever every other slot is
// busy, and that engine's batch grows while the others idle (multi-lora: 42% of requests on one of 4).

import type { EndpointState } from "./endpoint-state.js";

/** How long a request for an adapter waits for a slot before the gateway frees one for it. */
export const ROOM_AFTER_MS = 1000;
/** The longest a slot stays reserved if the adapter never comes to take it. */
export const RESERVE_MS = 15_000;
/** How much slower than the least loaded engine without it an adapter's engine may be before it spreads. */
export const HOT_MARGIN_MS = 500;
/** What waiting out one of the giving-way adapter's running requests is taken to cost, ms. */
const DRAIN_MS_PER_REQUEST = 100;

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
    if (runsOn(ep, adapter, now)) continue;
    // A less loaded engine is a better home; fewer requests to wait out frees the slot sooner; an
    // adapter whose traffic the engines it still runs on can take loses little.
    const wait = ep.predictTtftMs(0, now);
    for (const victim of busyAdapters(ep)) {
      if (victim === adapter) continue;
      const cost =
        wait +
        ep.adapterRecord.inflightOf(victim) * DRAIN_MS_PER_REQUEST +
        lossOf(victim, ep, endpoints, now);
      if (best === null || cost < best.cost) best = { ep, victim, cost };
    }
  }
  if (best === null) return null;
  best.ep.adapterRecord.reserve({ adapter, evicting: best.victim, until: now + RESERVE_MS });
  return { endpoint: best.ep, evicting: best.victim };
}

/**
 * Whether `adapter`, just placed on `on`, should spread: it brings at least half of `on`'s requests in
 * flight, and `on` is predicted HOT_MARGIN_MS slower than the least loaded routable engine that does
 * not run it.
 */
export function isHot(
  adapter: string,
  on: EndpointState,
  endpoints: readonly EndpointState[],
  now: number,
): boolean {
  // Moving an adapter that brings little of the engine's load relieves nothing and costs a swap.
  if (on.adapterRecord.inflightOf(adapter) * 2 < on.inflightRequests) return false;
  const here = on.predictTtftMs(0, now);
  for (const ep of endpoints) {
    if (ep === on || !ep.routable(now) || runsOn(ep, adapter, now)) continue;
    if (here - ep.predictTtftMs(0, now) > HOT_MARGIN_MS) return true;
  }
  return false;
}

/**
 * What `victim` loses by giving up its slot on `ep`: its requests in flight across the pool, shared by
 * the engines it would still run on (a hot adapter's second home is dear, a rare one's cheap), and a
 * fixed price when it would run nowhere (its next request will need a slot of its own).
 */
function lossOf(victim: string, ep: EndpointState, endpoints: readonly EndpointState[], now: number): number {
  let inflight = 0;
  let homes = 0;
  for (const o of endpoints) {
    inflight += o.adapterRecord.inflightOf(victim);
    if (o !== ep && runsOn(o, victim, now)) homes++;
  }
  return (inflight / Math.max(1, homes)) * DRAIN_MS_PER_REQUEST + (homes === 0 ? 10 * HOT_MARGIN_MS : 0);
}

function runsOn(ep: EndpointState, adapter: string, now: number): boolean {
  return (
    ep.routable(now) && (ep.loras?.running.includes(adapter) === true || ep.adapterRecord.isActive(adapter))
  );
}

/** The adapters holding the engine's slots: the scrape's running ones and the gateway's own in flight. */
function busyAdapters(ep: EndpointState): Set<string> {
  const out = new Set<string>(ep.loras?.running ?? []);
  for (const a of ep.adapterRecord.active()) out.add(a);
  return out;
}
