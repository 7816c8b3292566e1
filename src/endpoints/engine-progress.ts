// An engine's running totals as this gateway counts them, and what two snapshots of them tell about a
// stream's decode: between its first token and its end the engine ran one step per output token but the
// first, each decoding every sequence then running and computing the prompts that left prefill meanwhile.
// That is one more observation of the step law (step-law.ts), in the steps first tokens see little of.

/** The totals at one moment: differences of two tell what the engine did in between. */
export interface EngineProgress {
  /** Sequence-milliseconds decoding: the integral over time of the sequences decoding. */
  readonly decodeSeqMs: number;
  /** Prompt tokens that have left prefill. */
  readonly prefillTokens: number;
  /** Requests sent for an adapter the engine likely did not hold: each loads it, lengthening a step. */
  readonly adapterLoads: number;
}

export const NO_PROGRESS: EngineProgress = { decodeSeqMs: 0, prefillTokens: 0, adapterLoads: 0 };

/** A stream's decode as the step law reads it: its steps, and the prompt and decode tokens they ran. */
export interface DecodeSteps {
  readonly steps: number;
  /** Prompt tokens computed meanwhile, thousands. */
  readonly prefillK: number;
  /** Decode tokens computed meanwhile, hundreds. */
  readonly decodeH: number;
  readonly ms: number;
}

export class EngineTotals {
  private decodeSeqMs = 0;
  private at = Number.NEGATIVE_INFINITY;
  private prefillTokens = 0;
  private adapterLoads = 0;

  /**
   * Brings the integral up to `now`, `decoding` sequences having decoded since it was last brought up:
   * called before the count changes. A time already passed (a response not streamed taken out of
   * prefill at its estimated end, late) adds nothing.
   */
  advance(decoding: number, now: number): void {
    if (now <= this.at) return;
    if (Number.isFinite(this.at)) this.decodeSeqMs += decoding * (now - this.at);
    this.at = now;
  }

  leftPrefill(tokens: number): void {
    this.prefillTokens += tokens;
  }

  adapterLoad(): void {
    this.adapterLoads++;
  }

  /** The totals as of the last change of the sequences decoding, which is when they move. */
  snapshot(): EngineProgress {
    return {
      decodeSeqMs: this.decodeSeqMs,
      prefillTokens: this.prefillTokens,
      adapterLoads: this.adapterLoads,
    };
  }
}

/**
 * The steps of a decode of `outputTokens` that took `ms` between snapshots `a` (its first token) and `b`
 * (its end), or null when it tells the law nothing: one token, no time, or an adapter likely loaded
 * meanwhile (a load stalls a step for as long as it takes, and the law has no term for it; in
 * multi-lora, 100 ms loads, two slots for eight adapters, leaving those decodes out moved the prediction
 * error no more than noise does, so this rests on the mechanism alone).
 */
export function decodeSteps(
  a: EngineProgress,
  b: EngineProgress,
  outputTokens: number,
  ms: number,
): DecodeSteps | null {
  const steps = outputTokens - 1;
  if (!(ms > 0) || steps < 1 || b.adapterLoads !== a.adapterLoads) return null;
  const meanDecoding = (b.decodeSeqMs - a.decodeSeqMs) / ms;
  return {
    steps,
    prefillK: (b.prefillTokens - a.prefillTokens) / 1000,
    decodeH: (steps * meanDecoding) / 100,
    ms,
  };
}
