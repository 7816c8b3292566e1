// Seeded draws for generating workloads: arrival processes and length distributions, each purpose on its
// own random stream so a trace is reproducible from one seed.

import { hashString, seededRandom } from "../../sim/rng.js";
import { poissonGapMs } from "../stats.js";

export type Random = () => number;

/**
 * An independent stream per purpose: changing how many draws one purpose makes (a rate, a count) leaves
 * every other purpose's draws as they were, so calibrating one constant does not reshuffle the trace.
 * @example const sizes = randomStream(7, "live-sizes"); sizes() // 0.31…
 */
export function randomStream(seed: number, purpose: string): Random {
  return seededRandom(hashString(`${seed}:${purpose}`));
}

/** Arrival times (ms, ascending) of a Poisson process of `ratePerSec` in [fromMs, toMs). */
export function poissonArrivals(ratePerSec: number, fromMs: number, toMs: number, random: Random): number[] {
  const out: number[] = [];
  if (ratePerSec <= 0) return out;
  for (let t = fromMs + poissonGapMs(ratePerSec, random); t < toMs; t += poissonGapMs(ratePerSec, random)) {
    out.push(t);
  }
  return out;
}

/**
 * `count` arrival times (ms, ascending) at uniform random points of [fromMs, toMs): a Poisson process
 * conditioned on its count. For sparse streams, whose count must not depend on luck in a short run.
 */
export function arrivalsWithCount(count: number, fromMs: number, toMs: number, random: Random): number[] {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(fromMs + random() * (toMs - fromMs));
  return out.sort((a, b) => a - b);
}

/** A whole number uniform in [min, max]. */
export function uniformInt(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** A standard normal draw (Box–Muller). */
export function standardNormal(random: Random): number {
  const u = 1 - random(); // in (0, 1]: log(0) would be -Infinity
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/** A lognormal of the given median and log-space sigma, truncated to [min, max]. */
export interface Lognormal {
  median: number;
  sigma: number;
  min: number;
  max: number;
}

/**
 * A whole number from a truncated lognormal: out-of-range draws are redrawn (clamping would pile mass on
 * the bounds), and only if 32 draws all miss is the median returned, clamped.
 * @example lognormalInt(random, { median: 600, sigma: 1, min: 16, max: 16_000 }) // 412
 */
export function lognormalInt(random: Random, d: Lognormal): number {
  for (let i = 0; i < 32; i++) {
    const v = Math.round(d.median * Math.exp(d.sigma * standardNormal(random)));
    if (v >= d.min && v <= d.max) return v;
  }
  return Math.min(d.max, Math.max(d.min, Math.round(d.median)));
}

/**
 * Zipf popularity over `n` items: item k (0-based, 0 the most popular) with probability ∝ 1/(k+1)^s.
 * Returns the probabilities and a draw that maps one uniform number to an item (inverse CDF).
 * @example const z = zipf(8, 1); z.draw(random) // 0 about 37% of the time
 */
export function zipf(n: number, s: number): { probabilities: number[]; draw(random: Random): number } {
  if (!Number.isInteger(n) || n < 1) throw new Error(`zipf: expected at least one item, got ${n}`);
  const weights = Array.from({ length: n }, (_, k) => 1 / (k + 1) ** s);
  const total = weights.reduce((a, w) => a + w, 0);
  const probabilities = weights.map((w) => w / total);
  const cdf: number[] = [];
  let acc = 0;
  for (const p of probabilities) {
    acc += p;
    cdf.push(acc);
  }
  return {
    probabilities,
    draw(random: Random): number {
      const u = random();
      for (let k = 0; k < n - 1; k++) if (u < cdf[k]!) return k;
      return n - 1;
    },
  };
}
