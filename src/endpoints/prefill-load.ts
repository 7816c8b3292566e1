// What an engine has to do before a new request's first token, from the gateway's own accounting at
// decision time: prompt tokens it was sent and has not yet answered with a first token (pending prefill),
// and the sequences it is decoding. A scrape is 250 ms old and vLLM's `num_requests_waiting` stays low
// while long prompts run through chunked prefill, so neither sees a prefill backlog; this does, exactly,
// for the requests this gateway sent.
//
// From that, a predicted time to first token per candidate, learned online per engine rather than only
// configured (ranking-fit.ts, the picker's ranking value; averaged over the pool's learned engines here),
// and the engine's step schedule (step-law.ts, the estimate the log records). Decode speed (time per
// output token against the sequences decoding) is learned the same way.

import { decodeSteps, EngineTotals } from "./engine-progress.js";
import { OnlineLinear } from "./online-linear.js";
import { type ClaimHolder, PrefillClaim } from "./prefill-claim.js";
import { RankingFit } from "./ranking-fit.js";
import { StepLaw, type StepLawWeights, type StepSchedule, scheduleSteps } from "./step-law.js";

/** The cost model's prior, used until an engine's own requests have taught it better. */
export interface PrefillPrior {
  /** Prefill cost of one uncached prompt token, in ms. */
  readonly prefillMsPerToken: number;
  /** Time to first token of an empty prompt on an idle engine: the API server and one step, ms. */
  readonly baseMs: number;
  /**
   * CPU time the engine's API server spends on each request before the scheduler sees it, ms, one
   * request after another: vLLM's OpenAI server is one Python process (parsing, tokenizing, streaming),
   * and a replica saturated near 101 req/s on short requests (the simulator's 9.5 ms per request is
   * fitted to the same measurement, src/sim/profiles.ts).
   */
  readonly frontendMsPerRequest: number;
  /**
   * Prompt tokens the engine prefills in one step at most (vLLM's `max_num_batched_tokens`; 8,192 is its
   * default for online serving on H100-class GPUs): what its queue must hold for every step to be full.
   */
  readonly stepTokens: number;
}

export const DEFAULT_PREFILL_PRIOR: PrefillPrior = {
  prefillMsPerToken: 0.1,
  baseMs: 20,
  frontendMsPerRequest: 10,
  stepTokens: 8192,
};

/** Forgetting of the decode-speed fit. */
const FORGETTING = 0.98;
/**
 * Prior ms per 100 decode tokens in a step, until first tokens teach the step law: the BLIS fit of
 * Llama-3.1-8B on an H100 (6 µs a decode token) that the simulator's profile uses.
 */
const PRIOR_DECODE_MS_PER_100 = 0.6;
/** A request's adapter (null: the base model), and the adapters its engine would pass over now. */
export interface StepLora {
  readonly adapter: string | null;
  skipped(adapter: string): boolean;
}

const NO_LORA: StepLora = { adapter: null, skipped: () => false };

/** Weight of the running average of a request's uncached tokens (for requests seen only by a scrape). */
const SIZE_EWMA = 0.05;

export class PrefillLoad implements ClaimHolder {
  /** Uncached prompt tokens sent and not yet first-tokened. */
  pendingTokens = 0;
  /** Requests those tokens belong to. */
  pendingRequests = 0;
  /** Requests in flight past their first token (or past their assumed prefill end). */
  decoding = 0;
  /** Running average of a request's uncached tokens here (for the ones only a scrape shows). */
  meanTokens = 0;
  /** The engine's own TTFT fit: the picker's ranking value (ranking-fit.ts). */
  readonly fit: RankingFit;
  /** The engine's step law, learned from first tokens: what the recorded estimate rests on. */
  readonly stepLaw: StepLaw;
  private readonly tpot: OnlineLinear;
  private readonly prior: PrefillPrior;
  /** Non-streaming claims still counted as prefill, and the earliest time one of them leaves it. */
  private assumed: PrefillClaim[] = [];
  private nextAssumedEnd = Number.POSITIVE_INFINITY;
  private readonly stepMean = new Float64Array(3);
  /** Streams still waiting for their first token, oldest first (a Set keeps insertion order). */
  private readonly waitingStreams = new Set<PrefillClaim>();
  /** Every claim still in prefill, streams or not, in the order sent: the engine's queue as we sent it. */
  private readonly inPrefill = new Set<PrefillClaim>();
  /** When the oldest claim in prefill reached the head of the engine's queue: the last head's exit. */
  private headSince = Number.NEGATIVE_INFINITY;
  /** Ms this engine had none of this gateway's prefill, up to `idleFrom` (flow control's idle check). */
  private idleMs = 0;
  /** Since when nothing sent here is in prefill; NaN while something is. */
  private idleFrom: number;
  /** When a claim last left prefill here (idleSince). */
  private lastPrefillEnd = Number.NEGATIVE_INFINITY;
  /** When the engine's API server is through with the requests sent here so far (frontendWaitMs). */
  private frontendFreeAt = Number.NEGATIVE_INFINITY;
  /** What the engine has computed so far, as counted here: what a stream's decode is read against. */
  private readonly totals = new EngineTotals();
  /**
   * The engines of its pool (itself among them), whose learned fits stand in for its own until it has
   * learned; set by the pool each generation.
   */
  peers: readonly PrefillLoad[] = [];

  constructor(prior: PrefillPrior = DEFAULT_PREFILL_PRIOR, now = Date.now()) {
    this.prior = prior;
    this.idleFrom = now;
    this.fit = new RankingFit({ baseMs: prior.baseMs, msPerKToken: prior.prefillMsPerToken * 1000 });
    this.tpot = new OnlineLinear({ prior: [10, 5], forgetting: FORGETTING, priorVariance: 1e3 });
    this.stepLaw = new StepLaw([
      Math.max(1, prior.baseMs - prior.frontendMsPerRequest),
      prior.prefillMsPerToken * 1000,
      PRIOR_DECODE_MS_PER_100,
    ]);
  }

  /**
   * Prefill tokens ahead of a request sent now: the gateway's own pending prefill, plus, when a fresh
   * scrape shows more requests waiting than the gateway has pending (another gateway's, or ones it
   * cannot see), those at the average size.
   */
  aheadTokens(now: number, scrapedWaiting: number | null): number {
    if (now >= this.nextAssumedEnd) this.sweep(now);
    let ahead = this.pendingTokens - this.drainedTokens(now);
    if (scrapedWaiting !== null && scrapedWaiting > this.pendingRequests) {
      ahead += (scrapedWaiting - this.pendingRequests) * this.meanTokens;
    }
    return ahead;
  }

  /**
   * What the picker ranks this engine by for a request of `uncached` prompt tokens sent now, in ms: the
   * pool's fit (the mean of its learned engines' fits) at the prefill queued here as sent plus the
   * request's own, with nothing decoding; and, when the oldest stream here has waited more than twice
   * its prediction, that excess (the engine is stuck on what no fit sees).
   *
   * Not this engine's own fit, nor its drain credit, decode term or lateness at face value: each is
   * noise beside the token count. On identical engines the per-engine fits' slopes differ by more than
   * 30% from each other and their prediction error P90 is 40–78%; ranking by them, tokengate's TTFT P99
   * was 1.15× the best other router's (median of 10 generated workloads in virtual time), where ranking
   * by the pool's fit over queued tokens made it 0.98× (and P90 1.27× → 0.99×). Using an engine's own
   * fit only where it differs from the pool's by 2× or more still lost (P99 1.39×). An engine slower
   * than its pool drains its queue slower, and so ranks worse by its queued tokens alone.
   *
   * Plus the engine's API server's backlog (frontendWaitMs): requests it has not yet handed to its
   * scheduler wait their turn there whatever their length, a cost queued tokens do not show. Without
   * it tokengate sent short prompts to engines with 1.1 requests in the API server on average (round-
   * robin: 0.06), and its TTFT P50 was 1.05× the best other router's (median of 10 workloads, virtual
   * time), round-robin's among them; with it 1.01×, tails unchanged.
   */
  predictTtftMs(uncached: number, now: number, scrapedWaiting: number | null): number {
    const p = (this.queuedTokens(now, scrapedWaiting) + uncached) / 1000;
    return this.poolPredictAt(p, 0) + this.frontendWaitMs(now) + this.lateMs(now, 2);
  }

  /**
   * How long a request sent now waits for the engine's API server to finish the ones sent before it,
   * ms: the requests this gateway sent, at the prior's frontendMsPerRequest each, one after another —
   * at most one such share for each request still waiting for its first token.
   */
  frontendWaitMs(now: number): number {
    return Math.max(0, this.frontendFreeAt - now);
  }

  /**
   * Prefill tokens queued here as sent: the gateway's own pending prefill, plus, when a scrape shows
   * more requests waiting than that, those at the average size. No credit for what the head has drained.
   */
  queuedTokens(now: number, scrapedWaiting: number | null): number {
    if (now >= this.nextAssumedEnd) this.sweep(now);
    const unseen = scrapedWaiting !== null ? scrapedWaiting - this.pendingRequests : 0;
    return this.pendingTokens + (unseen > 0 ? unseen * this.meanTokens : 0);
  }

  /**
   * How long the prefill queued here keeps the engine busy, in ms: the prefill ahead (the head's drain
   * credited) at the pool's rate. Only queued prefill drains faster for holding traffic back; the fit's
   * intercept (the API server, a step) is not waiting, and its decode term, fitted from few first
   * tokens, extrapolates: in support-incident's split pools it read two batch recomputes decoding on the
   * long-context pod as a wait past the bound and held every long-context request until one of them
   * ended (TTFT P90 ~1 s → 12.9 s). The pool's rate, not this engine's own fit's, whose slope is noise
   * on identical engines (see predictTtftMs): a slope read 2× too high holds a request while the engine
   * runs dry.
   */
  waitMs(now: number, scrapedWaiting: number | null): number {
    const ahead = this.aheadTokens(now, scrapedWaiting);
    return ahead === 0 ? 0 : (ahead * this.poolSlopeAt(this.decoding / 100)) / 1000;
  }

  /**
   * How much queued prefill the engine needs to stay busy while the gateway holds what is left, in ms:
   * one full step's prompt tokens (stepTokens) at the pool's rate, plus twice the pool's time to first
   * token of an empty prompt at its decode load now (the API server and a step, measured: one passes
   * before a request sent now starts its prefill, the other covers the gateway seeing the engine's last
   * first token and reacting). Chunked prefill takes up to a step's budget of the queue at once, so a
   * queue shorter than that is emptied in one step and the engine's next steps have no prefill: with
   * twice the empty prompt's TTFT alone (~40 ms on an H100, a fifth of a step's 8,192 tokens) the gateway
   * held requests while engines ran dry, and tokengate met the P99 target on 17 of 60 generated workloads
   * (seeds 1 and 2, virtual time); with the step added, 27 (P90 33 → 37, P50 38 → 39; the other tenants'
   * protection during bursts 27 → 24 of 34). The work-conserving bound of flow control's hold: it follows
   * what the engines are measured to do, not a number of milliseconds.
   */
  refillMs(): number {
    const d = this.decoding / 100;
    return 2 * this.poolPredictAt(0, d) + (this.prior.stepTokens * this.poolSlopeAt(d)) / 1000;
  }

  /** Some engine of the pool (or this one) has learned its fit: its predictions may hold traffic. */
  get poolLearned(): boolean {
    if (this.learned) return true;
    for (const peer of this.peers) if (peer.learned) return true;
    return false;
  }

  /**
   * Prefill the engine has likely done already on the oldest request still waiting for its first token:
   * the time since that request reached the head of the queue (the one before it left prefill, or it
   * was sent and the pool fit's intercept passed) at the pool's rate, at most its own tokens. Counting a
   * prompt whole until its first token made an engine 300 ms into a 6,000-token prefill look as busy as
   * one just sent it; in virtual time an ideal router with exact remaining prefill reached P99 0.57×
   * least-request's on noisy-neighbor where whole prompts gave 0.62×. Chunked prefill serves the queue
   * first come first served, so only the head is credited; a head the engine is slower on than the fit
   * shows as lateness.
   */
  drainedTokens(now: number): number {
    const head = first(this.inPrefill);
    if (head === undefined) return 0;
    const d = this.decoding / 100;
    // Sent to an idle queue, it passes the API server and waits for a step first: the fit's intercept.
    const since =
      this.headSince >= head.startedAt ? this.headSince : head.startedAt + this.poolPredictAt(0, d);
    const msPerKToken = this.poolSlopeAt(d);
    if (now <= since || msPerKToken <= 0) return 0;
    return Math.min(head.tokens, ((now - since) * 1000) / msPerKToken);
  }

  /**
   * Prompt tokens queued ahead of a request sent now, as the step law sees them: the gateway's pending
   * prefill (and a fresh scrape's unseen waiting requests), less what the head has computed since it
   * reached the queue's head, at the law's rate of full steps. Not drainedTokens's credit, which runs at
   * the ranking fit's slope: until the ranking fit has learned, that is its prior (0.1 ms a token, six
   * times an H100's), and on support-incident's shared pods a 51,000-token batch prompt 840 ms into its
   * prefill still counted 43,000 tokens ahead of the live summaries sent behind it; estimated 1.2–1.4 s,
   * they got 150–310 ms.
   *
   * Claims for an adapter the engine cannot run now (`lora.skipped`: not resident, its slots held by
   * others) are not ahead: vLLM's scheduler passes over a waiting request whose adapter has no slot and
   * runs the ones behind it. In multi-lora, requests for a resident adapter behind 8,000 such tokens
   * were estimated at ~300 ms and got 30–45 ms.
   */
  stepQueueTokens(
    now: number,
    scrapedWaiting: number | null,
    law: StepLawWeights,
    lora: StepLora = NO_LORA,
  ): number {
    let queued = this.queuedTokens(now, scrapedWaiting);
    let head: PrefillClaim | undefined;
    for (const c of this.inPrefill) {
      if (c.adapter !== null && c.adapter !== lora.adapter && lora.skipped(c.adapter)) {
        queued -= c.tokens;
        continue;
      }
      head ??= c;
    }
    queued = Math.max(0, queued);
    if (head === undefined) return queued;
    // Sent to an idle queue, it first passes the API server.
    const since = Math.max(this.headSince, head.startedAt + this.prior.frontendMsPerRequest);
    if (now <= since) return queued;
    const budget = Math.max(1, this.prior.stepTokens - this.decoding);
    const stepMs = law[0]! + (law[1]! * budget) / 1000 + (law[2]! * this.decoding) / 100;
    if (!(stepMs > 0)) return queued;
    const drained = Math.min(head.tokens, ((now - since) * budget) / stepMs);
    return Math.max(0, queued - drained);
  }

  /** Ms this engine's fit gives `tokens` prefill tokens of their own, at its decode load now. */
  ownPrefillMs(tokens: number): number {
    return (tokens * this.slopeAt(this.decoding / 100)) / 1000;
  }

  /** Tokens of the largest prompt still in prefill here, as sent (0 when none). */
  largestPendingTokens(): number {
    let most = 0;
    for (const c of this.inPrefill) if (c.tokens > most) most = c.tokens;
    return most;
  }

  /**
   * How far past its predicted TTFT the oldest stream still without a first token is. An engine that
   * queues requests for what the fit cannot see (its max_num_seqs reached, a KV cache full, an adapter
   * loading, a GPU slowing down) shows it here first: in noisy-neighbor, engine 1 held a dozen short
   * prompts 0.7–0.9 s in its queue while their predictions said ~50 ms and the picker kept choosing it.
   * A request sent behind them waits at least that long too. `times`: past that multiple of its
   * prediction (the picker's ranking counts only waits past twice it, predictTtftMs).
   */
  lateMs(now: number, times = 1): number {
    const oldest = first(this.waitingStreams);
    return oldest === undefined ? 0 : Math.max(0, now - oldest.startedAt - times * oldest.predictedMs);
  }

  /**
   * The fit's prediction for P thousand prefill tokens and D hundred decoding sequences. An engine not
   * yet learned borrows the mean prediction of its pool's learned engines for the same load, and only
   * when none is learned the configured prior: the prior is a guess (0.1 ms a token where an H100 does
   * ~0.03), and an engine predicted slower for want of data gets no traffic to learn from — after a
   * restart in batch-day, the first engine to learn took 202 of the next 221 live summaries while three
   * stayed on the prior, its queue P95 59 ms against 15 ms on the others.
   */
  predictAt(p: number, d: number): number {
    if (this.learned) return this.fit.predict(p, d);
    return this.fromPeers(
      (fit) => fit.predict(p, d),
      () => this.prior.baseMs + p * 1000 * this.prior.prefillMsPerToken,
    );
  }

  /** The mean prediction of the pool's learned fits, this engine's among them; the prior when none is. */
  poolPredictAt(p: number, d: number): number {
    let sum = 0;
    let n = 0;
    for (const peer of this.peers) {
      if (!peer.learned) continue;
      sum += peer.fit.predict(p, d);
      n++;
    }
    if (n > 0) return sum / n;
    return this.learned
      ? this.fit.predict(p, d)
      : this.prior.baseMs + p * 1000 * this.prior.prefillMsPerToken;
  }

  /**
   * The step law the pool's engines have learned, their coefficients' mean (this engine's among them);
   * this engine's own (its prior, until learned) when none has.
   */
  poolStepLaw(): StepLawWeights {
    const mean = this.stepMean;
    mean.fill(0);
    let n = 0;
    for (const peer of this.peers) {
      if (!peer.stepLaw.learned) continue;
      const w = peer.stepLaw.weights;
      for (let i = 0; i < mean.length; i++) mean[i]! += w[i]!;
      n++;
    }
    if (n === 0) return this.stepLaw.weights;
    for (let i = 0; i < mean.length; i++) mean[i]! /= n;
    return mean;
  }

  /** The mean slope (ms per 1,000 prefill tokens) of the pool's learned fits at D; else as slopeAt. */
  poolSlopeAt(d: number): number {
    let sum = 0;
    let n = 0;
    for (const peer of this.peers) {
      if (!peer.learned) continue;
      sum += peer.fit.slope(d);
      n++;
    }
    return n > 0 ? sum / n : this.slopeAt(d);
  }

  /** Ms per 1,000 prefill tokens at D hundred decoding, from the same fit `predictAt` uses. */
  private slopeAt(d: number): number {
    if (this.learned) return this.fit.slope(d);
    return this.fromPeers(
      (fit) => fit.slope(d),
      () => 1000 * this.prior.prefillMsPerToken,
    );
  }

  /** For an engine not yet learned: the mean of `read` over its learned peers' fits, else the prior. */
  private fromPeers(read: (fit: RankingFit) => number, prior: () => number): number {
    let sum = 0;
    let n = 0;
    for (const peer of this.peers) {
      if (peer === this || !peer.learned) continue;
      sum += read(peer.fit);
      n++;
    }
    return n > 0 ? sum / n : prior();
  }

  /**
   * The TTFT a request of `uncached` prompt tokens sent here now would get, ms from dispatch, by the
   * pool's step law (step-law.ts): the steps it waits for, behind the engine's API server's backlog and
   * the prefill queued ahead of it. What the log records; changes nothing.
   */
  estimateTtft(
    uncached: number,
    now: number,
    scrapedWaiting: number | null,
    lora: StepLora = NO_LORA,
  ): { schedule: StepSchedule; estimatedMs: number } {
    const law = this.poolStepLaw();
    const schedule = scheduleSteps(
      this.stepQueueTokens(now, scrapedWaiting, law, lora),
      Math.max(0, uncached),
      this.decoding,
      this.frontendWaitMs(now) + this.prior.frontendMsPerRequest,
      this.prior.stepTokens,
      law,
    );
    return { schedule, estimatedMs: StepLaw.estimateMs(schedule, law) };
  }

  /**
   * Counts a request of `uncached` prompt tokens as dispatched here now; `lora`: its adapter, and which
   * adapters the engine would pass over now (stepQueueTokens).
   */
  begin(
    uncached: number,
    stream: boolean,
    now: number,
    scrapedWaiting: number | null,
    lora: StepLora = NO_LORA,
  ): PrefillClaim {
    const tokens = Math.max(0, uncached);
    const ahead = this.aheadTokens(now, scrapedWaiting);
    const p = (ahead + tokens) / 1000;
    const d = this.decoding / 100;
    // What a stream's lateness is measured against: this engine's own fit, with the head's drain
    // credit, the decode load and lateness (lateMs, the picker's ranking).
    const predicted = this.predictAt(p, d) + this.lateMs(now);
    const { schedule, estimatedMs: estimated } = this.estimateTtft(tokens, now, scrapedWaiting, lora);
    const claim = new PrefillClaim(this, {
      tokens,
      startedAt: now,
      predictedMs: predicted,
      p,
      d,
      // A response not streamed shows no first token: it is taken to leave prefill when the step law
      // says. By the fit above, not yet learned from few streams on support-incident's shared pods (its
      // prior: 0.1 ms a token), a 51,000-token batch prompt stayed in prefill 5 s where it took 1.1 s,
      // and live summaries avoided or waited behind a pod that had finished it. Five rounds each, quick:
      // TTFT P90 880 → 426 ms, P99 1,723 → 758 ms (medians), split pools unchanged.
      assumedPrefillEnd: stream ? Infinity : now + estimated,
      schedule,
      estimatedMs: estimated,
      adapter: lora.adapter,
    });
    if (stream) this.waitingStreams.add(claim);
    this.inPrefill.add(claim);
    if (lora.adapter !== null && lora.skipped(lora.adapter)) this.totals.adapterLoad();
    const perRequest = this.prior.frontendMsPerRequest;
    // Never more backlog than the requests it could hold: those still waiting for their first token.
    this.frontendFreeAt = Math.min(
      Math.max(now, this.frontendFreeAt) + perRequest,
      now + (this.pendingRequests + 1) * perRequest,
    );
    this.pendingTokens += tokens;
    if (this.pendingRequests++ === 0 && !Number.isNaN(this.idleFrom)) {
      this.idleMs += Math.max(0, now - this.idleFrom);
      this.idleFrom = Number.NaN;
    }
    this.meanTokens += SIZE_EWMA * (tokens - this.meanTokens);
    if (!stream) {
      this.assumed.push(claim);
      if (claim.assumedPrefillEnd < this.nextAssumedEnd) this.nextAssumedEnd = claim.assumedPrefillEnd;
    }
    return claim;
  }

  /**
   * Prefill over for `c` at `now` (its first token, its end, or its assumed end); `observed`: a real
   * first token.
   */
  leavePrefill(c: PrefillClaim, observed: boolean, now: number): void {
    this.pendingTokens = Math.max(0, this.pendingTokens - c.tokens);
    this.pendingRequests = Math.max(0, this.pendingRequests - 1);
    // A request the API server has passed on is no longer its backlog: an engine whose server is faster
    // than the prior's frontendMsPerRequest (several API server processes, a lighter frontend) would
    // otherwise seem to fall further behind with every request, without bound (at 1,000 req/s on two
    // fast engines, a predicted TTFT of 40 s after 10 s).
    const bound = now + this.pendingRequests * this.prior.frontendMsPerRequest;
    if (this.frontendFreeAt > bound) this.frontendFreeAt = bound;
    if (this.pendingRequests === 0 && Number.isNaN(this.idleFrom)) this.idleFrom = now;
    this.lastPrefillEnd = now;
    this.waitingStreams.delete(c);
    // The head left: the engine turns to the next one now (whatever it did on it before is not known).
    if (first(this.inPrefill) === c) this.headSince = now;
    this.inPrefill.delete(c);
    c.stage = "decode";
    c.decodingAtFirst = this.decoding;
    this.totals.leftPrefill(c.tokens);
    this.setDecoding(this.decoding + 1, now);
    c.progressAtFirst = this.totals.snapshot();
    if (observed) {
      const actual = c.firstTokenAt - c.startedAt;
      this.fit.observe(c.p, c.d, actual, () => this.predictAt(c.p, c.d));
      this.stepLaw.observe(c.schedule, actual);
    }
  }

  leaveDecode(c: PrefillClaim, now: number): void {
    if (now >= this.nextAssumedEnd) this.sweep(now);
    this.totals.advance(this.decoding, now);
    c.progressAtEnd = this.totals.snapshot();
    this.setDecoding(Math.max(0, this.decoding - 1), now);
  }

  /**
   * A stream's decode: its time per output token for the decode-speed fit, and its steps for the step
   * law (engine-progress.ts).
   */
  observeDecode(c: PrefillClaim, outputTokens: number): void {
    const ms = c.endedAt - c.firstTokenAt;
    if (!(ms > 0) || outputTokens < 2) return;
    this.tpot.observe([1, c.decodingAtFirst / 100], ms / (outputTokens - 1));
    const d = decodeSteps(c.progressAtFirst, c.progressAtEnd, outputTokens, ms);
    if (d !== null) this.stepLaw.observeSteps(d.steps, d.prefillK, d.decodeH, d.ms);
  }

  /** Sets the sequences decoding from `now`, the engine's totals brought up to it. */
  private setDecoding(n: number, now: number): void {
    this.totals.advance(this.decoding, now);
    this.decoding = n;
  }

  /** Learned ms per 1,000 prefill tokens on an engine with nothing decoding (the prior until warm). */
  prefillMsPerKToken(): number {
    return this.fit.msPerKToken();
  }

  /** Learned ms per output token at the current decode load; null until a stream taught it. */
  tpotMs(): number | null {
    if (this.tpot.observations === 0) return null;
    return Math.max(0, this.tpot.predict([1, this.decoding / 100]));
  }

  /** What is still counted, e.g. "pending 1,200 tokens of 2 requests, 1 decoding"; null when nothing is. */
  held(): string | null {
    if (this.pendingTokens === 0 && this.pendingRequests === 0 && this.decoding === 0) return null;
    return `pending ${this.pendingTokens} tokens of ${this.pendingRequests} requests, ${this.decoding} decoding`;
  }

  /**
   * Ms so far, up to `now`, that nothing this gateway sent here was in prefill: the engine's prefill
   * sat idle as far as this gateway knows. Differences of it over a request's wait in the gateway queue
   * are the time this engine idled while the request was held (flow control's `held_while_idle_ms`).
   */
  idleMsUntil(now: number): number {
    return this.idleMs + (Number.isNaN(this.idleFrom) ? 0 : Math.max(0, now - this.idleFrom));
  }

  /**
   * Nothing this gateway sent here is in prefill, and has not been since before `t`: a scrape taken at
   * `t` that showed requests waiting showed ones that have left the queue since (when they were ours).
   */
  idleSince(t: number): boolean {
    return this.pendingRequests === 0 && this.lastPrefillEnd > t;
  }

  /** TTFT observations the fit rests on. */
  get observations(): number {
    return this.fit.observations;
  }

  /**
   * The fit has learned this engine (from streamed first tokens); until then predictions are the
   * configured prior's, good for ranking endpoints but not for holding traffic back.
   */
  get learned(): boolean {
    return this.fit.learned;
  }

  /** Moves non-streaming claims past their assumed prefill end to decode. */
  private sweep(now: number): void {
    let next = Number.POSITIVE_INFINITY;
    const keep: PrefillClaim[] = [];
    for (const c of this.assumed) {
      if (c.stage !== "prefill") continue;
      if (c.assumedPrefillEnd <= now) this.leavePrefill(c, false, c.assumedPrefillEnd);
      else {
        keep.push(c);
        if (c.assumedPrefillEnd < next) next = c.assumedPrefillEnd;
      }
    }
    this.assumed = keep;
    this.nextAssumedEnd = next;
  }
}

/** The oldest member of an insertion-ordered set. */
function first<T>(set: ReadonlySet<T>): T | undefined {
  for (const x of set) return x;
  return undefined;
}
