// Hysteresis of the region choice: each stream of requests (one caller region, one model, one residency
// set) has a current region, and traffic leaves it only when it fails (at once) or when another region has
// been clearly better for long enough (dwell and margin), so that a region whose health oscillates does
// not make traffic flap.

import type { HysteresisSettings } from "./director-types.js";
import type { Scored } from "./score.js";

/** Where one stream of requests goes now, and since when. */
export interface HomeState {
  readonly current: string;
  /** When traffic moved to `current`. */
  readonly since: number;
  /** The region traffic last failed over from (probes go to it while half-open); null after a switch. */
  readonly failedFrom: string | null;
  /** Spillover's accumulator (spillover.ts). */
  readonly spill: number;
  /** When each region was last seen filtered out for this stream (not by residency). */
  readonly outAt: ReadonlyMap<string, number>;
}

/** How the home was chosen. */
export type HomeMove = "initial" | "stay" | "switch" | "failover";

export interface HomeChoice {
  readonly home: Scored;
  readonly move: HomeMove;
}

/**
 * Chooses the home among `ranked` (passing regions, best first). Rules:
 * - no state yet: the best region (`initial`);
 * - the current region passes: it stays, unless a *settled* region scores more than `switchMargin` above
 *   it and traffic has been on the current one for at least `dwellMs` (`switch`);
 * - the current region fails a filter: traffic leaves at once (`failover`), to the best settled region,
 *   else the best one.
 * A region is settled when it has been healthy without a break for at least `dwellMs` (`goodSince`):
 * moving back to a region traffic failed over from is a switch like any other, so a region that keeps
 * failing and recovering never gets traffic back until it stays healthy for a dwell.
 */
export function chooseHome(
  state: HomeState | undefined,
  ranked: readonly Scored[],
  goodSince: (region: string) => number | null,
  settings: HysteresisSettings,
  now: number,
): HomeChoice {
  const best = ranked[0]!;
  if (state === undefined) return { home: best, move: "initial" };
  const settled = (s: Scored) => {
    const since = goodSince(s.screened.view.name);
    return since !== null && now - since >= settings.dwellMs;
  };
  const current = ranked.find((s) => s.screened.view.name === state.current);
  if (current === undefined) return { home: ranked.find(settled) ?? best, move: "failover" };
  const challenger = ranked.find((s) => s !== current && settled(s));
  if (
    challenger !== undefined &&
    challenger.score > current.score + settings.switchMargin &&
    now - state.since >= settings.dwellMs
  ) {
    return { home: challenger, move: "switch" };
  }
  return { home: current, move: "stay" };
}

/** The state with `filteredOut` noted as seen out at `now` (a refusal, a kept session: nothing moves). */
export function noteFilteredOut(state: HomeState, filteredOut: readonly string[], now: number): HomeState {
  return { ...state, outAt: outAtAfter(state, filteredOut, now) };
}

/** The state after a choice (spill is set by the caller). */
export function nextHomeState(
  state: HomeState | undefined,
  choice: HomeChoice,
  filteredOut: readonly string[],
  now: number,
): HomeState {
  const outAt = outAtAfter(state, filteredOut, now);
  const region = choice.home.screened.view.name;
  if (state === undefined || choice.move === "initial") {
    return { current: region, since: now, failedFrom: null, spill: 0, outAt };
  }
  switch (choice.move) {
    case "stay":
      return { ...state, outAt };
    case "switch":
      return { current: region, since: now, failedFrom: null, spill: 0, outAt };
    case "failover":
      return { current: region, since: now, failedFrom: state.current, spill: 0, outAt };
  }
}

function outAtAfter(
  state: HomeState | undefined,
  filteredOut: readonly string[],
  now: number,
): Map<string, number> {
  const outAt = new Map(state?.outAt ?? []);
  for (const r of filteredOut) outAt.set(r, now);
  return outAt;
}
