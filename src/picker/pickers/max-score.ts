// Pickers: the highest total wins with ties broken at random; when the totals carry no signal at all,
// power of two choices on the gateway's own in-flight tokens (never a silent round-robin).

import type { Picker, PickerChoice, PickerEndpoint, ScoringContext } from "../framework/types.js";

const EPSILON = 1e-9;

/** Two distinct random candidates; the one with fewer in-flight tokens (then requests) wins. */
export function powerOfTwo(endpoints: readonly PickerEndpoint[], random: () => number): PickerChoice {
  const n = endpoints.length;
  if (n === 1) return { index: 0, how: "p2c", why: "one candidate" };
  const a = Math.floor(random() * n);
  const b = (a + 1 + Math.floor(random() * (n - 1))) % n;
  const ea = endpoints[a]!;
  const eb = endpoints[b]!;
  const bWins =
    eb.inflightTokens < ea.inflightTokens ||
    (eb.inflightTokens === ea.inflightTokens && eb.inflightRequests < ea.inflightRequests);
  const [win, lose] = bWins ? [eb, ea] : [ea, eb];
  return {
    index: bWins ? b : a,
    how: "p2c",
    why: `p2c: ${win.name} (${win.inflightTokens} tokens in flight) over ${lose.name} (${lose.inflightTokens})`,
  };
}

export function maxScorePicker(): Picker {
  return {
    type: "max-score",
    pick(ctx: ScoringContext, endpoints: readonly PickerEndpoint[], totals: ArrayLike<number>): PickerChoice {
      const random = ctx.random ?? Math.random;
      let min = Number.POSITIVE_INFINITY;
      let max = Number.NEGATIVE_INFINITY;
      const n = endpoints.length;
      for (let i = 0; i < n; i++) {
        const t = totals[i]!;
        if (t < min) min = t;
        if (t > max) max = t;
      }
      if (endpoints.length > 1 && max - min <= EPSILON) {
        const c = powerOfTwo(endpoints, random);
        return { ...c, why: `scores carry no signal; ${c.why}` };
      }
      let best = 0;
      let ties = 0;
      for (let i = 0; i < n; i++) {
        if (totals[i]! >= max - EPSILON && random() * ++ties < 1) best = i;
      }
      const tie = ties > 1 ? ` (random among ${ties} tied)` : "";
      return { index: best, how: "max_score", why: `max score ${max.toFixed(3)}${tie}` };
    },
  };
}

export function powerOfTwoPicker(): Picker {
  return {
    type: "power-of-two",
    pick: (ctx, endpoints) => powerOfTwo(endpoints, ctx.random ?? Math.random),
  };
}
