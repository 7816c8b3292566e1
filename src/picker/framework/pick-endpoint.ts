// One pick: filters in order, weighted scorers, the picker, then the load guard. The result names the
// chosen endpoint, the mode of the degradation order it ran in, and every reason along the way.

import { clamp01, predictedDelayMs } from "./cost-model.js";
import type {
  PickContext,
  PickerEndpoint,
  PickerProfile,
  PickMode,
  PickResult,
  ScoreLine,
  ScoringContext,
  Signals,
} from "./types.js";

type Filtered = PickResult<never>["filtered"];

/**
 * Picks an endpoint of a pool for one request. The caller must count the request against the chosen
 * endpoint (`endpoint.acquire(tokens)`) before the next pick, and `prefixIndex.record()` its blocks.
 * @example
 * const r = pickEndpoint(profile, { request, now: Date.now(), prefixIndex }, pool.endpoints);
 * if (r.endpoint) { lease = r.endpoint.acquire(tokens); prefixIndex.record(r.endpoint.name, request.blockHashes); }
 */
export function pickEndpoint<E extends PickerEndpoint>(
  profile: PickerProfile,
  ctx: PickContext,
  endpoints: readonly E[],
): PickResult<E> {
  const filtered: Filtered = [];
  const notes: string[] = [];
  const fail = (why: string): PickResult<E> =>
    profile.backupPool === null
      ? { ...empty(filtered, notes), mode: "no_endpoint", reason: why }
      : {
          ...empty(filtered, notes),
          mode: "backup_pool",
          backupPool: profile.backupPool,
          reason: `${why}; sending to backup pool ${profile.backupPool}`,
        };

  if (endpoints.length === 0) return fail("pool has no endpoints");
  let set: readonly E[] = endpoints;
  for (const f of profile.filters) {
    const out = f.filter(ctx, set);
    if (out.note) notes.push(out.note);
    if (out.kept.length === 0) {
      const first = out.removed[0];
      const example = first ? ` (e.g. ${first.endpoint.name}: ${first.why})` : "";
      if (f.failOpen ?? profile.failOpen) {
        notes.push(
          `filter ${f.type} would remove all ${set.length} endpoints${example}; fail-open keeps them`,
        );
        continue;
      }
      for (const r of out.removed) filtered.push({ endpoint: r.endpoint.name, filter: f.type, why: r.why });
      return fail(`filter ${f.type} removed every remaining endpoint${example}`);
    }
    for (const r of out.removed) filtered.push({ endpoint: r.endpoint.name, filter: f.type, why: r.why });
    set = out.kept;
  }

  // One source of load signals for the whole cycle, so endpoints are compared like for like.
  let signals: Signals = "metrics";
  for (const e of set) if (!e.metricsFresh(ctx.now)) signals = "predicted";
  const matchedBlocks = matchBlocks(ctx, set);
  const input = ctx.request.inputTokens;
  const sctx: ScoringContext = {
    request: ctx.request,
    now: ctx.now,
    prefixIndex: ctx.prefixIndex ?? null,
    random: ctx.random ?? Math.random,
    signals,
    matchedBlocks,
    delayMs: set.map((e, i) => predictedDelayMs(e, matchedBlocks[i]!, input, signals, profile.cost)),
    cost: profile.cost,
  };

  const n = set.length;
  const { totals, affinity } = scratch(n);
  const raw: number[][] = [];
  for (const { scorer, weight } of profile.scorers) {
    const s = scorer.score(sctx, set);
    for (let i = 0; i < n; i++) {
      const v = s[i]!;
      const c = clamp01(v) * weight;
      totals[i]! += c;
      if (scorer.yieldsToLoad) affinity[i]! += c;
    }
    raw.push(s);
  }

  const choice = profile.picker.pick(sctx, set, totals);
  let index = choice.index;
  let mode: PickMode = choice.how === "p2c" ? "p2c" : signals;
  let reason = `${signals}: ${choice.why}`;
  if (profile.loadGuard && choice.how === "max_score" && affinityDecided(affinity, n, index)) {
    const guard = yieldAffinity(sctx, set, index, profile.loadGuard.marginMs);
    if (guard) {
      index = guard.index;
      mode = "affinity_yielded";
      reason = `${signals}: ${guard.why}`;
    }
  }
  return {
    endpoint: set[index]!,
    mode,
    signals,
    reason,
    backupPool: null,
    topScores: topScores(profile, set, totals, raw),
    filtered,
    notes,
  };
}

// pickEndpoint runs to completion without yielding, so one pair of buffers serves every call; they
// are longer than the candidate list, which is why pickers read only `endpoints.length` totals.
let totalsBuf = new Float64Array(64);
let affinityBuf = new Float64Array(64);

function scratch(n: number): { totals: Float64Array; affinity: Float64Array } {
  if (totalsBuf.length < n) {
    totalsBuf = new Float64Array(n * 2);
    affinityBuf = new Float64Array(n * 2);
  }
  totalsBuf.fill(0, 0, n);
  affinityBuf.fill(0, 0, n);
  return { totals: totalsBuf, affinity: affinityBuf };
}

/** Affinity set the winner apart: some other candidate has less of it. */
function affinityDecided(affinity: Float64Array, n: number, winner: number): boolean {
  for (let i = 0; i < n; i++) if (affinity[i]! < affinity[winner]!) return true;
  return false;
}

function empty(filtered: Filtered, notes: string[]) {
  return { endpoint: null, signals: null, backupPool: null, topScores: [], filtered, notes };
}

function matchBlocks(ctx: PickContext, set: readonly PickerEndpoint[]): number[] {
  const index = ctx.prefixIndex;
  if (!index || ctx.request.blockHashes.length === 0) return new Array<number>(set.length).fill(0);
  const m = index.match(ctx.request.blockHashes);
  return set.map((e) => m.get(e.name) ?? 0);
}

/**
 * The load guard: when the affinity winner's predicted delay exceeds the best alternative's by more
 * than the margin, the request goes to the alternative with the least predicted delay instead.
 */
function yieldAffinity(
  ctx: ScoringContext,
  set: readonly PickerEndpoint[],
  chosen: number,
  marginMs: number,
): { index: number; why: string } | null {
  const delay = ctx.delayMs;
  const random = ctx.random ?? Math.random;
  let alt = -1;
  let ties = 0;
  for (let i = 0; i < set.length; i++) {
    if (i === chosen) continue;
    if (alt === -1 || delay[i]! < delay[alt]!) {
      alt = i;
      ties = 1;
    } else if (delay[i] === delay[alt] && random() * ++ties < 1) alt = i;
  }
  const gap = delay[chosen]! - delay[alt]!;
  if (gap <= marginMs) return null;
  const ms = (v: number) => `${Math.round(v)} ms`;
  return {
    index: alt,
    why:
      `affinity yielded: ${set[chosen]!.name} predicted ${ms(delay[chosen]!)} vs ` +
      `${set[alt]!.name} ${ms(delay[alt]!)} (margin ${ms(marginMs)})`,
  };
}

function topScores(
  profile: PickerProfile,
  set: readonly PickerEndpoint[],
  totals: Float64Array,
  raw: number[][],
): ScoreLine[] {
  const k = Math.min(profile.topScores, set.length);
  if (k <= 0) return [];
  // One pass keeping the k best in order: k is small and the pool may be large, so no sort.
  const picked: number[] = [];
  for (let i = 0; i < set.length; i++) {
    let at = picked.length;
    while (at > 0 && totals[i]! > totals[picked[at - 1]!]!) at--;
    if (at < k) {
      picked.splice(at, 0, i);
      if (picked.length > k) picked.pop();
    }
  }
  return picked.map((i) => {
    const per: Record<string, number> = {};
    profile.scorers.forEach(({ scorer, weight }, s) => {
      const v = raw[s]![i]!;
      per[scorer.type] = round(clamp01(v) * weight);
    });
    return { endpoint: set[i]!.name, total: round(totals[i]!), perScorer: per };
  });
}

function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}
