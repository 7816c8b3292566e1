// A request's time to first token as the engine's scheduler will give it, step by step: what the
// gateway records as its prediction (`predicted_ttft_ms`) and scores against the first token.
//
// vLLM's continuous batching runs steps of at most `max_num_batched_tokens` tokens: every decoding
// sequence's one token first, then queued prompt tokens first come first served (chunked prefill), and
// each step lasts β₀ + β₁·prefill tokens + β₂·decode tokens (the law the simulator follows, fitted to
// measured H100 and A100 engines). A request sent now reaches the scheduler once the engine's API
// server is through with it and the ones sent before it; from then its prompt shares the steps' budget
// after the prefill queued ahead of it. So its first token comes after N whole steps: the budget left by
// the decodes decides N, and the time is N·β₀ + β₁·(prompt tokens of those steps) + β₂·N·D.
//
// A straight line in queued tokens misses that shape: a short prompt behind 6,000 queued tokens is done
// in the same step as they are, and one behind 9,000 waits a second step; requests decoding cost every
// step, not every token. Over ten generated workloads in virtual time the prediction error P90 of the
// gateway's earlier straight-line fit was 29–113% (its ranking value, which it recorded, 62–942%); this
// schedule with the engines' true β had 14–37%, and with β learned as here 12–42%. The rest is what no
// gateway sees: where the engine is inside its current step (knowing that too gave 11–36%).
//
// β is learned from the first tokens, by recursive least squares weighted by 1/TTFT, since what is
// judged is the relative error: a 20 ms miss on a 40 ms first token matters, on a 2 s one it does not.

import { ChangeWatch } from "./change-watch.js";
import { OnlineLinear } from "./online-linear.js";

/** Where a request sent now would get its first token, as the step law schedules it. */
export interface StepSchedule {
  /**
   * Ms until the request reaches the engine's scheduler that no prefill step fills: the engine idles,
   * or runs decode steps the request joins the first of after it arrives (half a short step early or
   * late on average, not walked one by one).
   */
  readonly waitMs: number;
  /** Steps until the request's last prompt token is computed. */
  readonly steps: number;
  /** Prompt tokens those steps compute (the queue ahead and the request's own), thousands. */
  readonly prefillK: number;
  /** Decode tokens those steps compute, hundreds (N·D). */
  readonly decodeH: number;
}

/** The step law's coefficients: ms per step, per 1,000 prompt tokens, per 100 decode tokens. */
export type StepLawWeights = ArrayLike<number>;

/** Observations after which the learned law is trusted over the prior. */
const WARM_OBSERVATIONS = 8;
/** Slower to forget than the ranking's fit (0.98): β is the engine's, not the moment's. */
const FORGETTING = 0.995;
/** A TTFT under this counts as this in the relative weighting (ms): one step and the API server. */
const WEIGHT_FLOOR_MS = 5;
/**
 * First tokens in a row the law missed by more than CHANGE_ERROR on the same side, after which it takes
 * the engine to have changed (a throttled GPU, a neighbour) and relearns as fast as it learned at first;
 * at λ = 0.995 alone a 4× slowdown would take hundreds of requests to be seen.
 */
const CHANGE_RUN = 5;
const CHANGE_ERROR = 0.5;
/**
 * How much a stream's decode counts beside a first token (a weight on its squared relative error).
 * Decodes tell the engine's steps; a first token seen by the gateway also carries what is not a step
 * (its API server, the hops, a busy host), and that is what the estimate is judged on. Refitting one
 * quick shared-prefix run over HTTP offline, first tokens and decodes alike raised the first tokens'
 * error P90 from 33% to 46% (the decodes fitted within 5%: the engine's law, 5.7 ms a step; first
 * tokens wanted 10 ms); over HTTP, seven rounds of each build in two orders, 39 → 52%. First tokens
 * alone leave the law unidentified where they are few or alike (support-incident: −18 ms per 100
 * decodes). At a tenth, the decodes steady it and cost first tokens nothing: fitted on the first half
 * of each run and judged on the second, P90 24 → 21% (shared-prefix), 18 → 16% (support-incident),
 * 19%, 41% (multi-turn, multi-lora) as first tokens alone.
 */
const DECODE_WEIGHT = 0.1;
const DECODE_SCALE = Math.sqrt(DECODE_WEIGHT);
/** More steps than this are not walked one by one (a queue of 8M tokens); the rest are added whole. */
const MAX_WALKED_STEPS = 1000;

/**
 * The steps a request of `uncached` prompt tokens waits for, sent now to an engine with `ahead` prompt
 * tokens queued before it and `decoding` sequences decoding, that reaches the scheduler in `readyInMs`
 * (its API server's backlog and its own turn there), with steps of at most `stepTokens` tokens lasting as
 * `w` says. Decode-only steps run meanwhile while sequences decode; an engine with nothing to run waits.
 */
export function scheduleSteps(
  ahead: number,
  uncached: number,
  decoding: number,
  readyInMs: number,
  stepTokens: number,
  w: StepLawWeights,
): StepSchedule {
  const budget = Math.max(1, stepTokens - decoding);
  const stepMs = (prefill: number) =>
    Math.max(0, w[0]! + (w[1]! * prefill) / 1000 + (w[2]! * decoding) / 100);
  let t = 0;
  let waitMs = 0;
  let queued = Math.max(0, ahead);
  let own = Math.max(1, uncached);
  let steps = 0;
  let prefill = 0;
  while (own > 0 && steps < MAX_WALKED_STEPS) {
    let room = budget;
    const fromQueue = Math.min(queued, room);
    queued -= fromQueue;
    room -= fromQueue;
    const ready = t >= readyInMs;
    const fromOwn = ready ? Math.min(own, room) : 0;
    own -= fromOwn;
    const tokens = fromQueue + fromOwn;
    if (tokens === 0) {
      // No prompt tokens to run until the request arrives.
      waitMs += readyInMs - t;
      t = readyInMs;
      continue;
    }
    t += stepMs(tokens);
    steps++;
    prefill += tokens;
  }
  if (own > 0) {
    // A queue past the walk: the remaining steps are full ones.
    const more = Math.ceil((queued + own) / budget);
    steps += more;
    prefill += queued + own;
  }
  return { waitMs, steps, prefillK: prefill / 1000, decodeH: (steps * decoding) / 100 };
}

export class StepLaw {
  private readonly fit: OnlineLinear;
  private readonly x = new Float64Array(3);
  private readonly change = new ChangeWatch(CHANGE_RUN, CHANGE_ERROR);
  /** First tokens observed: what the law is judged on, and trusted after WARM_OBSERVATIONS of. */
  private firstTokens = 0;

  /** `prior`: ms per step, per 1,000 prompt tokens, per 100 decode tokens, until first tokens teach it. */
  constructor(prior: readonly [number, number, number]) {
    this.fit = new OnlineLinear({ prior, forgetting: FORGETTING, priorVariance: 1e4 });
  }

  get weights(): StepLawWeights {
    return this.fit.weights;
  }

  get learned(): boolean {
    return this.firstTokens >= WARM_OBSERVATIONS;
  }

  /**
   * The schedule's time to first token by the law `w`, ms. The fit's coefficients are not held
   * positive (one that is alone can be: every request needs a step, so steps and tokens are near
   * collinear, and a coefficient clamped at zero biased the rest: error P90 over ten generated workloads
   * went 34% → 44% on average); the sum is, at least the wait and a millisecond.
   */
  static estimateMs(s: StepSchedule, w: StepLawWeights): number {
    const steps = s.steps * w[0]! + s.prefillK * w[1]! + s.decodeH * w[2]!;
    return s.waitMs + Math.max(1, steps);
  }

  /**
   * A stream's decode, from its first token to its last: `steps` steps (its output tokens but the
   * first) took `ms`, while the engine computed `prefillK` thousand prompt tokens and `decodeH` hundred
   * decode tokens (each step decodes every running sequence once). The same law as a first token, seen
   * where first tokens see little: a first token rests on one to a few steps, nearly all prompt, so
   * the per-step cost and the decode cost are hardly apart from the prompt's (session 20 found β learned
   * at 38 ms a step and −36 ms per 100 decodes where the engine's are 5.8 and 0.6), and a stream's
   * decode is many steps of mostly decode tokens. Counted at DECODE_WEIGHT beside a first token.
   */
  observeSteps(steps: number, prefillK: number, decodeH: number, ms: number): void {
    if (!(steps > 0) || !Number.isFinite(ms) || ms <= 0) return;
    const scale = DECODE_SCALE / Math.max(WEIGHT_FLOOR_MS, ms);
    const x = this.x;
    x[0] = steps * scale;
    x[1] = prefillK * scale;
    x[2] = decodeH * scale;
    this.fit.observe(x, ms * scale);
  }

  /** A first token `actualMs` after dispatch, for a request scheduled as `s`: the law moves toward it. */
  observe(s: StepSchedule, actualMs: number): void {
    if (!Number.isFinite(actualMs) || actualMs <= 0) return;
    if (this.learned && this.change.changed(actualMs, StepLaw.estimateMs(s, this.weights))) {
      this.fit.doubt();
    }
    const scale = 1 / Math.max(WEIGHT_FLOOR_MS, actualMs);
    const x = this.x;
    x[0] = s.steps * scale;
    x[1] = s.prefillK * scale;
    x[2] = s.decodeH * scale;
    this.fit.observe(x, (actualMs - s.waitMs) * scale);
    this.firstTokens++;
  }
}
