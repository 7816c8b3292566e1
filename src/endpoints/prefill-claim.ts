// One request's share of an engine's prefill view (prefill-load.ts), from dispatch to release. For a
// stream the first token moves it from prefill to decode; a non-streaming request shows no first token,
// so it is taken to have left prefill at its estimated TTFT (the step law's, estimatedMs).

import { type EngineProgress, NO_PROGRESS } from "./engine-progress.js";
import type { StepSchedule } from "./step-law.js";

/** What a claim tells the prefill view that holds it. */
export interface ClaimHolder {
  /** Prefill is over for `c` at `now`: its first token when `observed`, else its end or assumed end. */
  leavePrefill(c: PrefillClaim, observed: boolean, now: number): void;
  /** A claim that had left prefill ended at `now`: one sequence fewer decoding. */
  leaveDecode(c: PrefillClaim, now: number): void;
  /** A stream that saw a first token ended with `outputTokens`: its decode teaches the fits. */
  observeDecode(c: PrefillClaim, outputTokens: number): void;
}

/** What the prefill view knew of the request when it was dispatched. */
export interface ClaimInit {
  /** Uncached prompt tokens this request brings. */
  readonly tokens: number;
  readonly startedAt: number;
  /** The ranking fit's TTFT at dispatch, ms: what lateness is measured against (PrefillLoad.lateMs). */
  readonly predictedMs: number;
  /** Features of the load it was dispatched into: P (thousands) and D (hundreds). */
  readonly p: number;
  readonly d: number;
  /** Non-streaming: when it is taken to have left prefill; Infinity for a stream. */
  readonly assumedPrefillEnd: number;
  /** The steps it was scheduled to wait for at dispatch, by the pool's step law (step-law.ts). */
  readonly schedule: StepSchedule;
  /** TTFT from dispatch that schedule gives, ms: the gateway's best estimate, which it records. */
  readonly estimatedMs: number;
  /** The LoRA adapter it runs, null for the base model. */
  readonly adapter: string | null;
}

export class PrefillClaim implements ClaimInit {
  /** Where the claim is: prefill, decoding, or released. */
  stage: "prefill" | "decode" | "done" = "prefill";
  firstTokenAt = Number.NaN;
  endedAt = Number.NaN;
  /** Sequences decoding on the engine when this one got its first token (for the decode fit). */
  decodingAtFirst = 0;
  /**
   * The engine's running totals (engine-progress.ts) when this one left prefill and when it ended:
   * what the engine computed while it decoded, for the step law.
   */
  progressAtFirst: EngineProgress = NO_PROGRESS;
  progressAtEnd: EngineProgress = NO_PROGRESS;
  readonly tokens: number;
  readonly startedAt: number;
  readonly predictedMs: number;
  readonly p: number;
  readonly d: number;
  readonly assumedPrefillEnd: number;
  readonly schedule: StepSchedule;
  readonly estimatedMs: number;
  readonly adapter: string | null;

  constructor(
    private readonly holder: ClaimHolder,
    init: ClaimInit,
  ) {
    this.tokens = init.tokens;
    this.startedAt = init.startedAt;
    this.predictedMs = init.predictedMs;
    this.p = init.p;
    this.d = init.d;
    this.assumedPrefillEnd = init.assumedPrefillEnd;
    this.schedule = init.schedule;
    this.estimatedMs = init.estimatedMs;
    this.adapter = init.adapter;
  }

  /** The first token passed (a stream): prefill is done; the TTFT teaches the engine's fits. */
  firstToken(now: number): void {
    if (this.stage !== "prefill") return;
    this.firstTokenAt = now;
    this.holder.leavePrefill(this, true, now);
  }

  /** The request is over, however it ended; counts once. */
  end(now: number): void {
    if (this.stage === "done") return;
    if (this.stage === "prefill") this.holder.leavePrefill(this, false, now);
    this.stage = "done";
    this.endedAt = now;
    this.holder.leaveDecode(this, now);
  }

  /** After `end`: the output token count, for the decode fits (streams that saw a first token). */
  reportOutput(outputTokens: number): void {
    if (this.stage !== "done" || !Number.isFinite(this.firstTokenAt) || outputTokens < 2) return;
    this.holder.observeDecode(this, outputTokens);
  }
}
