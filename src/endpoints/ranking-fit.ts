// One engine's TTFT fit, the picker's ranking value: TTFT ≈ w₀ + w₁·P + w₂·D + w₃·P·D, with P the
// prefill tokens ahead plus the request's own uncached ones (thousands) and D the sequences decoding
// (hundreds). That is the shape of a chunked-prefill step (β₀ + β₁·prefill tokens + β₂·decode tokens, a
// token budget per step shared with the decodes): prefill time grows with P, and each step is slower,
// and carries fewer prefill tokens, as D grows. Fitted by recursive least squares with forgetting
// (online-linear.ts) from each streamed request's own TTFT against the load it was dispatched into, so a
// slower or busier engine is seen as such. The prefill view (prefill-load.ts) holds one per engine and
// averages its pool's.

import { ChangeWatch } from "./change-watch.js";
import { OnlineLinear } from "./online-linear.js";

/** Observations after which the learned fit is trusted over the prior for predictions. */
const WARM_OBSERVATIONS = 8;
const FORGETTING = 0.98;
/**
 * First tokens in a row the fit missed by more than CHANGE_ERROR on the same side, after which it
 * takes the engine to have changed (throttled, a neighbour on the GPU, a new profile) and relearns at
 * the speed it learned at first instead of forgetting at λ (at 0.98, a 4× slowdown was still learned
 * as 2.9× sixty requests later).
 */
const CHANGE_RUN = 5;
const CHANGE_ERROR = 0.3;

export class RankingFit {
  private readonly fit: OnlineLinear;
  private readonly x = new Float64Array(4);
  private readonly change = new ChangeWatch(CHANGE_RUN, CHANGE_ERROR);

  /** `prior`: the TTFT of an empty prompt on an idle engine (ms), and ms per 1,000 prefill tokens. */
  constructor(private readonly prior: { baseMs: number; msPerKToken: number }) {
    this.fit = new OnlineLinear({
      prior: [prior.baseMs, prior.msPerKToken, 0, 0],
      forgetting: FORGETTING,
      priorVariance: 1e4,
    });
  }

  /** TTFT observations the fit rests on. */
  get observations(): number {
    return this.fit.observations;
  }

  /** Learned from enough first tokens to be trusted over the prior. */
  get learned(): boolean {
    return this.fit.observations >= WARM_OBSERVATIONS;
  }

  /**
   * The fit's slope in P (ms per 1,000 prefill tokens) at D. The fit as it is (clamping a coefficient it
   * found negative biased every prediction upward, ~20 ms in multi-lora), except that more prefill ahead
   * never predicts less: the slope is kept ≥ 0.
   */
  slope(d: number): number {
    const w = this.fit.weights;
    return Math.max(0, w[1]! + w[3]! * d);
  }

  /** The fit's TTFT for P thousand prefill tokens and D hundred decoding, ms (at least 1). */
  predict(p: number, d: number): number {
    const w = this.fit.weights;
    return Math.max(1, w[0]! + w[2]! * d + this.slope(d) * p);
  }

  /** Ms per 1,000 prefill tokens with nothing decoding: the prior until learned. */
  msPerKToken(): number {
    return this.learned ? Math.max(0, this.fit.weights[1]!) : this.prior.msPerKToken;
  }

  /**
   * A first token `actualMs` after dispatch of a request sent into load (P, D); `predicted`: what the
   * engine predicts for that load (read only once learned). A run of misses on the same side makes the
   * fit relearn quickly.
   */
  observe(p: number, d: number, actualMs: number, predicted: () => number): void {
    if (this.learned && this.change.changed(actualMs, predicted())) this.fit.doubt();
    const x = this.x;
    x[0] = 1;
    x[1] = p;
    x[2] = d;
    x[3] = p * d;
    this.fit.observe(x, actualMs);
  }
}
