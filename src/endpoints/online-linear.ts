// An online linear regression: recursive least squares with a forgetting factor, so the fit follows an
// engine whose speed changes (a new profile, a neighbour on the GPU, a longer context) instead of
// averaging its whole history. Each observation costs O(k²) for k features (k is 4 here); nothing is
// stored but the weights and the k×k inverse covariance.

export interface OnlineLinearOptions {
  /** Initial weights, one per feature: the prior the fit starts from. */
  readonly prior: readonly number[];
  /**
   * Weight of the past per observation (0 < λ ≤ 1): observation i ago counts λ^i. 0.98 forgets with a
   * time constant of ~50 observations.
   */
  readonly forgetting: number;
  /** How little the prior is trusted (initial covariance diagonal); larger learns faster at first. */
  readonly priorVariance: number;
}

export class OnlineLinear {
  readonly weights: Float64Array;
  private readonly p: Float64Array;
  private readonly k: number;
  private readonly lambda: number;
  private readonly px: Float64Array;
  private readonly priorVariance: number;
  /** Observations taken since the start (or the last reset). */
  observations = 0;

  constructor(opts: OnlineLinearOptions) {
    const k = opts.prior.length;
    if (k === 0) throw new RangeError("OnlineLinear needs at least one feature");
    if (!(opts.forgetting > 0 && opts.forgetting <= 1)) {
      throw new RangeError(`forgetting must be in (0, 1], got ${opts.forgetting}`);
    }
    this.k = k;
    this.lambda = opts.forgetting;
    this.priorVariance = opts.priorVariance;
    this.weights = Float64Array.from(opts.prior);
    this.p = new Float64Array(k * k);
    this.px = new Float64Array(k);
    this.resetCovariance();
  }

  /** w·x. */
  predict(x: ArrayLike<number>): number {
    let y = 0;
    for (let i = 0; i < this.k; i++) y += this.weights[i]! * x[i]!;
    return y;
  }

  /** Moves the weights toward explaining `y` from `x` (one RLS step). */
  observe(x: ArrayLike<number>, y: number): void {
    if (!Number.isFinite(y)) return;
    const k = this.k;
    const p = this.p;
    const px = this.px;
    let denom = this.lambda;
    for (let i = 0; i < k; i++) {
      let s = 0;
      for (let j = 0; j < k; j++) s += p[i * k + j]! * x[j]!;
      px[i] = s;
      denom += x[i]! * s;
    }
    if (!(denom > 0) || !Number.isFinite(denom)) {
      this.resetCovariance();
      return;
    }
    const err = y - this.predict(x);
    for (let i = 0; i < k; i++) this.weights[i]! += (px[i]! / denom) * err;
    // P ← (P − (Px)(Px)ᵀ / denom) / λ; P is symmetric, so xᵀP = (Px)ᵀ.
    for (let i = 0; i < k; i++) {
      for (let j = 0; j < k; j++) p[i * k + j] = (p[i * k + j]! - (px[i]! * px[j]!) / denom) / this.lambda;
    }
    this.observations++;
    // Forgetting without new information along some direction lets P grow without bound; cap it.
    for (let i = 0; i < k; i++) if (p[i * k + i]! > this.priorVariance * 1e3) this.resetCovariance();
  }

  /**
   * Trusts the weights as little as the prior: the next observations move them as fast as the first
   * ones did (covariance resetting, for when the thing measured has changed, not drifted).
   */
  doubt(): void {
    this.resetCovariance();
  }

  private resetCovariance(): void {
    this.p.fill(0);
    for (let i = 0; i < this.k; i++) this.p[i * this.k + i] = this.priorVariance;
  }
}
