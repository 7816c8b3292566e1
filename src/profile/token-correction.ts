// Learns, per model, how far the token estimate is from what the engine counted (usage.prompt_tokens),
// and corrects later estimates by that factor; also tracks the error for the rollout gate of seed 004.

export interface TokenCorrectionOptions {
  /** EWMA weight of a new sample once warmed up; default 0.05 (about the last 20–40 requests). */
  readonly alpha?: number;
  /** Prompts below this many tokens (estimated or actual) are ignored: template overhead dominates them. Default 64. */
  readonly minTokens?: number;
  /** Samples kept per model for the error percentiles; default 256. */
  readonly window?: number;
  /** The factor stays within [minFactor, maxFactor]; default [0.5, 2]. */
  readonly minFactor?: number;
  readonly maxFactor?: number;
}

export interface TokenCorrectionStats {
  readonly model: string;
  /** Multiplier applied to estimates. */
  readonly factor: number;
  /** Samples learned from (after filtering tiny prompts). */
  readonly samples: number;
  /** P90 of |corrected estimate − actual| / actual over the window, each measured before learning from it. */
  readonly p90RelativeError: number;
  /** The same for the uncorrected estimate. */
  readonly p90RawRelativeError: number;
}

interface ModelState {
  factor: number;
  samples: number;
  /** Ring buffers of relative errors. */
  corrected: Float64Array;
  raw: Float64Array;
  next: number;
  filled: number;
}

/**
 * @example
 * const correction = new TokenCorrection();
 * const sent = correction.apply("summary-7b", estimate);
 * // …after the engine replies:
 * correction.observe("summary-7b", estimate, usage.prompt_tokens);
 */
export class TokenCorrection {
  private readonly models = new Map<string, ModelState>();
  private readonly alpha: number;
  private readonly minTokens: number;
  private readonly window: number;
  private readonly minFactor: number;
  private readonly maxFactor: number;

  constructor(options: TokenCorrectionOptions = {}) {
    this.alpha = options.alpha ?? 0.05;
    this.minTokens = options.minTokens ?? 64;
    this.window = options.window ?? 256;
    this.minFactor = options.minFactor ?? 0.5;
    this.maxFactor = options.maxFactor ?? 2;
  }

  /** The corrected estimate (the raw one until the model has samples). */
  apply(model: string, estimate: number): number {
    return Math.round(estimate * this.factor(model));
  }

  factor(model: string): number {
    return this.models.get(model)?.factor ?? 1;
  }

  /** Learns from one request; returns false when the pair was ignored (tiny or invalid). */
  observe(model: string, estimated: number, actual: number): boolean {
    if (!(estimated >= this.minTokens && actual >= this.minTokens) || !Number.isFinite(estimated + actual)) {
      return false;
    }
    let s = this.models.get(model);
    if (!s) {
      s = {
        factor: 1,
        samples: 0,
        corrected: new Float64Array(this.window),
        raw: new Float64Array(this.window),
        next: 0,
        filled: 0,
      };
      this.models.set(model, s);
    }
    // Errors are taken before learning from the sample, so they measure what the gateway would have used.
    s.corrected[s.next] = Math.abs(Math.round(estimated * s.factor) - actual) / actual;
    s.raw[s.next] = Math.abs(estimated - actual) / actual;
    s.next = (s.next + 1) % this.window;
    s.filled = Math.min(s.filled + 1, this.window);
    s.samples++;
    // A running mean for the first 1/alpha samples converges faster than an EWMA started at 1.
    const weight = Math.max(this.alpha, 1 / s.samples);
    const ratio = actual / estimated;
    s.factor = clamp(s.factor + weight * (ratio - s.factor), this.minFactor, this.maxFactor);
    return true;
  }

  /** P90 relative error of corrected estimates; null before any sample. */
  p90RelativeError(model: string): number | null {
    const s = this.models.get(model);
    return s && s.filled > 0 ? p90(s.corrected, s.filled) : null;
  }

  /** One entry per model seen, for metrics (`ai_gateway_token_estimate_*`). */
  stats(): TokenCorrectionStats[] {
    return [...this.models].map(([model, s]) => ({
      model,
      factor: s.factor,
      samples: s.samples,
      p90RelativeError: p90(s.corrected, s.filled),
      p90RawRelativeError: p90(s.raw, s.filled),
    }));
  }
}

function p90(values: Float64Array, count: number): number {
  if (count === 0) return 0;
  const sorted = values.slice(0, count).sort();
  return sorted[Math.min(count - 1, Math.ceil(0.9 * count) - 1)]!;
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(Math.max(x, lo), hi);
}
