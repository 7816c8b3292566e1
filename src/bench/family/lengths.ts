// Prompt-length mixes of the generated workload family, as quantile functions: a length is Q(u) for a
// uniform u, so a mix's mean is computable and a stream of n lengths can be drawn stratified (one u in
// each 1/n band, in random order). Stratified draws keep a heavy tail's share exact in a 20-s run, so
// the prompt tokens a workload offers are what its `load` says, not what a lucky draw gave.

import type { Random } from "../workload/distributions.js";

/** A symmetric triangular law on [mean·(1 − spread), mean·(1 + spread)]: light-tailed around its mean. */
export interface Triangular {
  mean: number;
  /** Half-width as a fraction of the mean, in (0, 1). */
  spread: number;
}

/**
 * How long a workload's prompts are (the user message, without any shared prefix), in tokens:
 * - `light`: triangular around a mean, nothing far from it;
 * - `heavy`: a bounded Pareto, most prompts near `min` and a few up to `max`;
 * - `bimodal`: short interactive prompts plus a `longShare` of long documents.
 */
export type PromptMix =
  | ({ kind: "light" } & Triangular)
  | { kind: "heavy"; min: number; alpha: number; max: number }
  | { kind: "bimodal"; short: Triangular; long: Triangular; longShare: number };

export type PromptKind = PromptMix["kind"];

function triangularQuantile(t: Triangular, u: number): number {
  const a = t.mean * (1 - t.spread);
  const w = 2 * t.mean * t.spread;
  return u < 0.5 ? a + w * Math.sqrt(u / 2) : a + w - w * Math.sqrt((1 - u) / 2);
}

/** The mix's length at quantile u ∈ [0, 1), before rounding. */
export function promptQuantile(mix: PromptMix, u: number): number {
  switch (mix.kind) {
    case "light":
      return triangularQuantile(mix, u);
    case "heavy": {
      // Bounded Pareto on [min, max] with tail index alpha, by inverting its CDF.
      const tail = 1 - (mix.min / mix.max) ** mix.alpha;
      return mix.min * (1 - u * tail) ** (-1 / mix.alpha);
    }
    case "bimodal": {
      const cut = 1 - mix.longShare;
      return u < cut
        ? triangularQuantile(mix.short, u / cut)
        : triangularQuantile(mix.long, (u - cut) / mix.longShare);
    }
  }
}

/** The largest length the mix can give. */
export function promptMax(mix: PromptMix): number {
  switch (mix.kind) {
    case "light":
      return Math.ceil(mix.mean * (1 + mix.spread));
    case "heavy":
      return mix.max;
    case "bimodal":
      return Math.ceil(
        Math.max(mix.short.mean * (1 + mix.short.spread), mix.long.mean * (1 + mix.long.spread)),
      );
  }
}

/** One length, whole tokens, at least 1. */
export function promptLength(mix: PromptMix, u: number): number {
  return Math.max(1, Math.round(promptQuantile(mix, u)));
}

const MEAN_POINTS = 20_000;

/** The mix's mean length (midpoint rule over its quantile function; within a token of exact). */
export function promptMean(mix: PromptMix): number {
  let sum = 0;
  for (let k = 0; k < MEAN_POINTS; k++) sum += promptLength(mix, (k + 0.5) / MEAN_POINTS);
  return sum / MEAN_POINTS;
}

/** Fisher–Yates, in place; returns `items`. */
export function shuffle<T>(items: T[], random: Random): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/**
 * `n` lengths of the mix, stratified: the k-th smallest band of quantiles [k/n, (k+1)/n) gets one draw,
 * and the bands come in random order.
 * @example stratifiedLengths({ kind: "light", mean: 600, spread: 0.5 }, 4, random) // [712, 388, 930, 561]
 */
export function stratifiedLengths(mix: PromptMix, n: number, random: Random): number[] {
  const bands = shuffle(
    Array.from({ length: n }, (_, k) => k),
    random,
  );
  return bands.map((k) => promptLength(mix, (k + random()) / n));
}

/**
 * Whole counts summing to `n` in proportion to `weights` (largest remainder): a quota per category, so a
 * short run gives each tenant and prefix group its share rather than a draw's luck.
 * @example allocate(10, [0.5, 0.3, 0.2]) // [5, 3, 2]
 */
export function allocate(n: number, weights: readonly number[]): number[] {
  const total = weights.reduce((a, w) => a + w, 0);
  const exact = weights.map((w) => (total > 0 ? (n * w) / total : 0));
  const counts = exact.map(Math.floor);
  let left = n - counts.reduce((a, c) => a + c, 0);
  const order = exact.map((x, i) => ({ i, r: x - Math.floor(x) })).sort((a, b) => b.r - a.r || a.i - b.i);
  for (const { i } of order) {
    if (left <= 0) break;
    counts[i]!++;
    left--;
  }
  return counts;
}

/** `n` labels, label i `counts[i]` times (allocate's quotas), in random order. */
export function quotaLabels<T>(labels: readonly T[], counts: readonly number[], random: Random): T[] {
  const out: T[] = [];
  labels.forEach((label, i) => {
    for (let c = 0; c < (counts[i] ?? 0); c++) out.push(label);
  });
  return shuffle(out, random);
}
