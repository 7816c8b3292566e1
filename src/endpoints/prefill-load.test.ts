// Pins the prefill view: every exit path returns pending prefill (and decoding) to zero; a stream's
// first token moves it from prefill to decode and teaches the TTFT fit; a non-streaming request leaves
// prefill at its predicted TTFT; a scrape that shows more waiting than the gateway sent adds their work;
// and the learned fit converges on a simulated engine whose speed changes mid-run.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { seededRandom } from "../testing/fake-endpoint.js";
import { Lease } from "./lease.js";
import { PrefillLoad } from "./prefill-load.js";

const counters = () => ({ inflightRequests: 0, inflightTokens: 0, onCapacity: null });

describe("the prefill view's accounting", () => {
  it("a stream: pending until its first token, decoding until release, then nothing", () => {
    const load = new PrefillLoad();
    const c = load.begin(3000, true, 0, null);
    assert.equal(load.pendingTokens, 3000);
    assert.equal(load.pendingRequests, 1);
    c.firstToken(120);
    assert.equal(load.pendingTokens, 0);
    assert.equal(load.decoding, 1);
    c.end(900);
    assert.equal(load.held(), null);
    assert.equal(load.observations, 1, "its TTFT was observed");
  });

  it("a stream kept past its predicted TTFT delays the next prediction by as much, until it leaves", () => {
    const load = new PrefillLoad();
    const stuck = load.begin(200, true, 0, null);
    assert.equal(load.lateMs(stuck.predictedMs), 0, "on time: no correction");
    // 800 ms past its prediction with no first token: the engine is queueing what the fit cannot see.
    const at = stuck.predictedMs + 800;
    assert.equal(load.lateMs(at), 800);
    // The picker's ranking counts only what is past twice the prediction: 800 − predicted.
    const unstuck = load.poolPredictAt(0.4, 0);
    const ranked = load.predictTtftMs(200, at, null);
    assert.ok(Math.abs(ranked - (unstuck + 800 - stuck.predictedMs)) < 1e-9, `ranked at ${ranked}`);
    const next = load.begin(100, true, at, null);
    assert.ok(next.predictedMs >= 800, `the next request's prediction ${next.predictedMs} counts the delay`);
    stuck.end(at + 10);
    // The next one is now the oldest: it is judged by its own prediction, which already held the delay.
    assert.equal(load.lateMs(at + 10), 0);
    next.end(at + 20);
    assert.equal(load.held(), null);
  });

  it("the wait is the queued prefill's: none on an idle or only decoding engine, the fit's share of a prompt", () => {
    const load = new PrefillLoad({
      prefillMsPerToken: 0.1,
      baseMs: 40,
      frontendMsPerRequest: 10,
      stepTokens: 8192,
    });
    assert.equal(load.waitMs(0, null), 0, "the intercept (API server, one step) is not waiting");
    const first = load.begin(3000, true, 0, null);
    assert.ok(Math.abs(load.waitMs(0, null) - 300) < 1e-9, "3,000 tokens ahead at 0.1 ms each");
    assert.ok(
      Math.abs(load.predictTtftMs(0, 0, null) - 350) < 1e-9,
      "the ranking keeps its intercept, and the API server's 10 ms on the request sent before",
    );
    assert.equal(load.frontendWaitMs(4), 6);
    assert.equal(load.frontendWaitMs(10), 0);
    first.firstToken(300);
    assert.equal(load.decoding, 1);
    assert.equal(load.waitMs(300, null), 0, "a decoding sequence is not a queue to drain");
    first.end(900);
  });

  it("the API server's backlog is at most the requests still waiting for their first token", () => {
    const load = new PrefillLoad({
      prefillMsPerToken: 0.1,
      baseMs: 40,
      frontendMsPerRequest: 10,
      stepTokens: 8192,
    });
    // An engine whose API server is much faster than the prior's 10 ms a request: 1,000 requests, 1 ms
    // apart, each answered 1 ms after it was sent.
    for (let i = 0; i < 1000; i++) load.begin(20, true, i, null).firstToken(i + 1);
    assert.ok(load.frontendWaitMs(1000) <= 10, `no backlog piles up (${load.frontendWaitMs(1000)} ms)`);
    // Sent at once and none answered yet: they queue in the API server, 10 ms each.
    const burst = Array.from({ length: 5 }, () => load.begin(20, true, 2000, null));
    assert.equal(load.frontendWaitMs(2000), 50);
    burst[0]!.firstToken(2001);
    assert.equal(load.frontendWaitMs(2001), 40, "one passed on: four shares at most");
  });

  it("the oldest prompt drains at the fit's rate once its intercept passed, never below the prompts ahead", () => {
    // The prior: 20 ms, then 0.1 ms a token (10 tokens a ms).
    const load = new PrefillLoad();
    const long = load.begin(6000, true, 0, null);
    const short = load.begin(400, true, 0, null);
    assert.equal(load.aheadTokens(20, null), 6400, "the API server and a step first: nothing done yet");
    assert.equal(load.aheadTokens(320, null), 3400, "300 ms in: 3,000 of the 6,000 done");
    assert.ok(Math.abs(load.waitMs(320, null) - 340) < 1e-9, "the wait falls with it");
    assert.equal(load.aheadTokens(5000, null), 400, "the oldest is credited at most its own tokens");
    assert.equal(load.pendingTokens, 6400, "the accounting itself is untouched");
    // The engine took longer: its first token at 900 ms. The next one is then the head, from that moment.
    long.firstToken(900);
    assert.equal(load.aheadTokens(900, null), 400);
    assert.equal(load.aheadTokens(920, null), 200);
    // A cancel at the head hands the engine to the next one as well.
    const third = load.begin(1000, true, 930, null);
    short.end(940);
    assert.equal(load.aheadTokens(990, null), 500, "the third's 50 ms at the head: 500 of its 1,000");
    third.end(1000);
    long.end(1000);
    assert.equal(load.held(), null);
    assert.equal(load.aheadTokens(2000, null), 0);
  });

  it("a claim leaving out of order does not move the head's clock", () => {
    const load = new PrefillLoad();
    const head = load.begin(4000, true, 0, null);
    const cached = load.begin(100, true, 0, null);
    cached.firstToken(50);
    assert.equal(load.aheadTokens(120, null), 3000, "100 ms past the intercept: 1,000 of the head's done");
    head.end(200);
    cached.end(200);
    assert.equal(load.held(), null);
  });

  it("released before its first token (cancel, error, timeout): nothing held, nothing learned", () => {
    const load = new PrefillLoad();
    const c = load.begin(5000, true, 0, null);
    c.end(50);
    c.end(60);
    c.firstToken(70);
    assert.equal(load.held(), null);
    assert.equal(load.observations, 0);
  });

  it("a non-streaming request leaves prefill at its estimated TTFT, and release ends it either way", () => {
    const load = new PrefillLoad();
    const a = load.begin(2000, false, 0, null);
    const b = load.begin(2000, false, 0, null);
    assert.equal(load.pendingRequests, 2);
    assert.ok(b.estimatedMs > a.estimatedMs, "the second waits behind the first");
    assert.equal(a.assumedPrefillEnd, a.estimatedMs);
    load.aheadTokens(a.assumedPrefillEnd, null);
    assert.equal(load.pendingTokens, 2000, "the first left prefill at its estimated TTFT");
    assert.equal(load.decoding, 1);
    b.end(1);
    a.end(b.assumedPrefillEnd + 1000);
    assert.equal(load.held(), null);
  });

  it("counts waiting requests a fresh scrape shows beyond its own, at the average size", () => {
    const load = new PrefillLoad();
    load.begin(1000, true, 0, null);
    assert.equal(load.aheadTokens(0, null), 1000);
    assert.equal(load.aheadTokens(0, 1), 1000, "the one waiting is ours");
    assert.ok(load.aheadTokens(0, 3) > 1000, "two more waiting than we sent");
  });

  it("a lease releases its claim on every path once, and a first token tells flow control", () => {
    const load = new PrefillLoad();
    let told = 0;
    const c = { ...counters(), onCapacity: () => told++ };
    c.inflightRequests = 1;
    const lease = new Lease(c, 10, load.begin(800, true, 0, null));
    lease.firstToken(40);
    lease.firstToken(41);
    assert.equal(told, 1, "told once when prefill ended");
    assert.equal(lease.release(90), true);
    assert.equal(lease.release(91), false);
    lease.firstToken(92);
    assert.equal(told, 2);
    assert.equal(load.held(), null);
    assert.equal(c.inflightRequests, 0);
  });
});

/**
 * An engine with chunked prefill, first come first served: each step carries up to `budget` tokens,
 * decodes first, and takes β₀ + β₁·prefill + β₂·decode µs (the simulator's law).
 */
function engineTtft(
  beta: { b0: number; b1: number; b2: number },
  aheadPlusOwn: number,
  decoding: number,
): number {
  const budget = 8192;
  const perStep = budget - decoding;
  const steps = Math.ceil(aheadPlusOwn / perStep);
  const stepUs = (tokens: number) => beta.b0 + beta.b1 * tokens + beta.b2 * decoding;
  const full = Math.max(0, steps - 1) * stepUs(perStep);
  const last = stepUs(aheadPlusOwn - Math.max(0, steps - 1) * perStep);
  return (full + last) / 1000 + 2; // ms, plus the API server
}

it("the TTFT fit converges on an engine, and again after its speed changes mid-run", () => {
  const h100 = { b0: 5753, b1: 17.25, b2: 6.0 };
  const a100 = { b0: 16_442, b1: 47.84, b2: 18.21 };
  const random = seededRandom(3);
  const load = new PrefillLoad();
  let t = 0;
  const serve = (beta: typeof h100, n: number) => {
    const errors: number[] = [];
    for (let i = 0; i < n; i++) {
      // A busy engine: prefill pending ahead, and sequences decoding.
      const ahead = Array.from({ length: Math.floor(random() * 4) }, () =>
        load.begin(Math.floor(random() * 6000), true, t, null),
      );
      load.decoding = Math.floor(random() * 60);
      const c = load.begin(200 + Math.floor(random() * 3000), true, t, null);
      const actual = engineTtft(beta, load.pendingTokens, load.decoding);
      errors.push(Math.abs(c.predictedMs - actual) / actual);
      for (const e of ahead) e.end(t + actual);
      c.firstToken(t + actual);
      c.end(t + actual + 10);
      load.decoding = 0;
      t += actual + 20;
    }
    assert.equal(load.held(), null);
    errors.sort((x, y) => x - y);
    return errors[Math.floor(errors.length / 2)]!;
  };
  serve(h100, 150);
  const settled = serve(h100, 100);
  assert.ok(settled < 0.1, `median error on the h100 law ${(settled * 100).toFixed(1)}% < 10%`);
  serve(a100, 100);
  const again = serve(a100, 100);
  assert.ok(again < 0.1, `median error after it slowed ${(again * 100).toFixed(1)}% < 10%`);
  assert.ok(
    load.prefillMsPerKToken() > 40,
    `learned ${load.prefillMsPerKToken().toFixed(1)} ms per 1k tokens`,
  );
});

it("an engine not yet learned borrows its pool's learned engines' fit, not the prior", () => {
  const warm = new PrefillLoad();
  const other = new PrefillLoad();
  const cold = new PrefillLoad();
  const alone = new PrefillLoad();
  for (const l of [warm, other, cold]) l.peers = [warm, other, cold];
  // Before anyone has learned: the prior (20 ms + 0.1 ms a token).
  assert.equal(cold.predictAt(2, 0), 220);
  // `warm` learns an engine at 30 ms per 1,000 tokens plus 15 ms; `other` at 50 plus 25.
  let t = 0;
  const teach = (l: PrefillLoad, perK: number, base: number) => {
    for (let i = 0; i < 20; i++) {
      const tokens = 500 + ((i * 377) % 3000);
      const c = l.begin(tokens, true, t, null);
      c.firstToken(t + base + (perK * tokens) / 1000);
      c.end(t + 100);
      t += 200;
    }
  };
  teach(warm, 30, 15);
  teach(other, 50, 25);
  assert.ok(warm.learned && other.learned && !cold.learned);
  const mean = (warm.predictAt(2, 0) + other.predictAt(2, 0)) / 2;
  assert.ok(Math.abs(mean - 100) < 5, `the learned fits predict ~75 and ~125 ms (mean ${mean.toFixed(1)})`);
  assert.equal(cold.predictAt(2, 0), mean, "the cold engine borrows their mean");
  assert.equal(alone.predictAt(2, 0), 220, "an engine with no learned peer keeps the prior");
  // Its own load still counts: prefill queued on the cold engine raises its prediction.
  const queued = cold.begin(3000, true, t, null);
  assert.ok(cold.predictTtftMs(1000, t, null) > cold.predictAt(1, 0));
  queued.end(t + 1);
});

it("the picker ranks engines by the pool's fit over the prefill queued on each, not by each one's own fit", () => {
  const a = new PrefillLoad();
  const b = new PrefillLoad();
  for (const l of [a, b]) l.peers = [a, b];
  // Two engines of one pool whose fits came out apart (30 and 60 ms per 1,000 tokens): noise, on
  // identical engines, as often as a real difference.
  let t = 0;
  const teach = (l: PrefillLoad, perK: number) => {
    for (let i = 0; i < 20; i++) {
      const tokens = 500 + ((i * 377) % 3000);
      const c = l.begin(tokens, true, t, null);
      c.firstToken(t + 20 + (perK * tokens) / 1000);
      c.end(t + 100);
      t += 200;
    }
  };
  teach(a, 30);
  teach(b, 60);
  assert.equal(a.predictTtftMs(2000, t, null), b.predictTtftMs(2000, t, null), "equal queues rank equal");
  assert.ok(Math.abs(a.predictTtftMs(2000, t, null) - a.poolPredictAt(2, 0)) < 1e-9);
  // 1,000 tokens queued on the engine whose own fit is faster rank it behind the other.
  const queued = a.begin(1000, true, t, null);
  assert.ok(a.predictTtftMs(2000, t, null) > b.predictTtftMs(2000, t, null));
  assert.equal(a.queuedTokens(t + 5000, null), 1000, "queued as sent: no credit for time passing");
  assert.equal(a.queuedTokens(t, 1), 1000, "the one a scrape shows waiting is ours");
  assert.ok(a.queuedTokens(t, 3) > 1000, "two more waiting than we sent, at the average size");
  queued.end(t + 10);
  assert.equal(a.held(), null);
});

it("counts the time nothing of ours is in prefill: the clock flow control's held_while_idle reads", () => {
  const load = new PrefillLoad(undefined, 0);
  assert.equal(load.idleMsUntil(100), 100, "idle from the start");
  const a = load.begin(1000, true, 100, null);
  const b = load.begin(1000, false, 150, null);
  assert.equal(load.idleMsUntil(400), 100, "busy while anything is in prefill");
  a.firstToken(300);
  assert.equal(load.idleMsUntil(400), 100, "the non-streaming one is still in prefill");
  b.end(500);
  assert.equal(load.idleMsUntil(800), 400, "idle again from its end: 100 + 300");
  a.end(900);
  assert.equal(load.idleMsUntil(1000), 600, "decoding is not prefill");
});

describe("the recorded estimate (the step law's schedule)", () => {
  const law = [5.75, 17.25, 0.6];

  it("counts the queue ahead less what its head computed since it reached the head, at the law's rate", () => {
    const load = new PrefillLoad(undefined, 0);
    load.begin(50_000, false, 0, null);
    assert.equal(load.stepQueueTokens(5, null, law), 50_000, "still in the API server");
    // 500 ms into its prefill: full steps of 8,192 tokens at 5.75 + 141.3 ms each.
    const drained = (490 * 8192) / (5.75 + 17.25 * 8.192);
    assert.ok(Math.abs(load.stepQueueTokens(500, null, law) - (50_000 - drained)) < 1e-6);
    assert.equal(load.stepQueueTokens(60_000, null, law), 0, "never below nothing");
  });

  it("passes over prompts whose adapter the engine cannot run now, as vLLM's scheduler does", () => {
    const load = new PrefillLoad(undefined, 0);
    load.begin(8000, true, 0, null, { adapter: "cold", skipped: () => false });
    load.begin(600, true, 0, null, { adapter: "warm", skipped: () => false });
    const lora = (adapter: string | null) => ({ adapter, skipped: (a: string) => a === "cold" });
    assert.equal(load.stepQueueTokens(0, null, law, lora("warm")), 600, "cold's 8,000 are not ahead");
    assert.equal(load.stepQueueTokens(0, null, law, lora("cold")), 8600, "its own adapter's are");
    assert.equal(load.stepQueueTokens(0, null, law, lora(null)), 600, "nor ahead of the base model");
  });

  it("records a TTFT estimate from dispatch, learned from first tokens", () => {
    const load = new PrefillLoad(undefined, 0);
    load.peers = [load];
    let t = 0;
    for (let i = 0; i < 40; i++) {
      const tokens = 500 + ((i * 733) % 5000);
      const c = load.begin(tokens, true, t, null);
      // An H100's step law: 10 ms in the API server, then one step.
      c.firstToken(t + 10 + 5.75 + (17.25 * tokens) / 1000);
      c.end(t + 50);
      t += 1000;
    }
    const c = load.begin(3000, true, t, null);
    const truth = 10 + 5.75 + 17.25 * 3;
    assert.ok(Math.abs(c.estimatedMs / truth - 1) < 0.05, `estimated ${c.estimatedMs} for ${truth}`);
    assert.equal(c.schedule.steps, 1);
    c.end(t + 1);
  });

  it("a stream's decode tells the step law its steps, the prompts computed and the decodes meanwhile", () => {
    const load = new PrefillLoad(undefined, 0);
    const seen: number[][] = [];
    load.stepLaw.observeSteps = (...args: number[]) => void seen.push(args);
    const a = load.begin(1000, true, 0, null);
    a.firstToken(50);
    const b = load.begin(2000, true, 60, null);
    b.firstToken(100);
    // a decodes 50 → 250 ms: alone for 50 ms, beside b for 150: 1.75 sequences on average.
    a.end(250);
    a.reportOutput(21);
    assert.deepEqual(seen, [[20, 2, (20 * 1.75) / 100, 200]]);
    // A non-streamed request taken out of prefill at an assumed time already past: no time runs back.
    load.begin(10, false, 260, null);
    b.end(100_000);
    b.reportOutput(1001);
    const [steps, prefillK, decodeH = 0, ms] = seen[1]!;
    assert.equal(steps, 1000);
    assert.equal(prefillK, 0.01, "the request not streamed left prefill meanwhile");
    assert.equal(ms, 99_900);
    // Beside a for 150 ms, then beside the request not streamed: nearly 2 sequences throughout.
    assert.ok(decodeH > 19 && decodeH < 20.01, `decodes ${decodeH * 100} over 1,000 steps`);
  });

  it("a decode during which an adapter was likely loaded teaches the step law nothing", () => {
    const load = new PrefillLoad(undefined, 0);
    let calls = 0;
    load.stepLaw.observeSteps = () => void calls++;
    const held = new Set(["warm"]);
    const lora = (adapter: string) => ({ adapter, skipped: (a: string) => !held.has(a) });
    const a = load.begin(500, true, 0, null, lora("warm"));
    a.firstToken(40);
    // Sent for an adapter not held: the engine loads it, and a's steps wait for that.
    load.begin(500, true, 50, null, lora("cold"));
    a.end(400);
    a.reportOutput(30);
    assert.equal(calls, 0);
    assert.ok(load.tpotMs() !== null, "the decode-speed fit still learns from it");
    const b = load.begin(500, true, 500, null, lora("warm"));
    b.firstToken(540);
    b.end(900);
    b.reportOutput(30);
    assert.equal(calls, 1, "a decode without a load does");
  });

  it("a response not streamed, or of one token, teaches no decode", () => {
    const load = new PrefillLoad(undefined, 0);
    let calls = 0;
    load.stepLaw.observeSteps = () => void calls++;
    const quiet = load.begin(500, false, 0, null);
    quiet.end(400);
    quiet.reportOutput(50);
    const one = load.begin(500, true, 500, null);
    one.firstToken(520);
    one.end(521);
    one.reportOutput(1);
    assert.equal(calls, 0);
  });
});
