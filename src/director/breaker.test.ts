import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MIN_WINDOW_REQUESTS, RegionBreaker } from "./breaker.js";

const SETTINGS = { errorRateToOpen: 0.2, failuresToOpen: 3, openMs: 10_000, halfOpenProbes: 3 };
const GOOD = { requests: 100, errorRate: 0.01 };

describe("RegionBreaker", () => {
  it("opens on a summary's error rate only over enough requests", () => {
    const b = new RegionBreaker(SETTINGS);
    b.onSummary({ requests: 2, errorRate: 0.5 }, 0);
    b.onSummary({ requests: MIN_WINDOW_REQUESTS - 1, errorRate: 1 }, 1);
    assert.equal(b.state(1), "closed");
    b.onSummary({ requests: MIN_WINDOW_REQUESTS, errorRate: 0.2 }, 2);
    assert.deepEqual([b.state(2), b.reason], ["open", "error_rate 0.2 ≥ 0.2"]);
  });

  it("opens after failuresToOpen failures in a row; a success in between resets the count", () => {
    const b = new RegionBreaker(SETTINGS);
    b.onPollFailure("timeout", 0);
    b.onOutcome(false, 1);
    b.onOutcome(true, 2);
    b.onPollFailure("timeout", 3);
    b.onPollFailure("timeout", 4);
    assert.equal(b.state(4), "closed");
    b.onOutcome(false, 5);
    assert.deepEqual(
      [b.state(5), b.reason],
      ["open", "3 failures in a row (2 polls, 1 requests; last: request failed)"],
    );
    const polls = new RegionBreaker(SETTINGS);
    for (let i = 0; i < 3; i++) polls.onPollFailure("HTTP 502", i);
    assert.equal(polls.reason, "3 failed polls (last: HTTP 502)");
  });

  it("half-opens after openMs, hands out at most halfOpenProbes probes, and closes on that many successes", () => {
    const b = new RegionBreaker(SETTINGS);
    for (let i = 0; i < 3; i++) b.onOutcome(false, 0);
    assert.equal(b.canProbe(9_999), false);
    assert.equal(b.state(10_000), "half-open");
    for (let i = 0; i < 3; i++) {
      assert.equal(b.canProbe(10_000), true);
      b.takeProbe(10_000);
    }
    assert.equal(b.canProbe(10_000), false);
    b.onOutcome(true, 10_100);
    b.onSummary(GOOD, 10_200); // a good poll counts as well
    assert.equal(b.state(10_200), "half-open");
    assert.equal(b.closedSince(10_200), null);
    b.onOutcome(true, 10_300);
    assert.deepEqual([b.state(10_300), b.closedSince(10_300)], ["closed", 10_300]);
  });

  it("reopens for openMs on any failure while half-open", () => {
    for (const fail of [
      (b: RegionBreaker, t: number) => b.onOutcome(false, t),
      (b: RegionBreaker, t: number) => b.onPollFailure("timeout", t),
      (b: RegionBreaker, t: number) => b.onSummary({ requests: 50, errorRate: 0.4 }, t),
    ]) {
      const b = new RegionBreaker(SETTINGS);
      for (let i = 0; i < 3; i++) b.onPollFailure("timeout", 0);
      b.onSummary(GOOD, 10_000);
      fail(b, 10_500);
      assert.equal(b.state(20_499), "open");
      assert.equal(b.state(20_500), "half-open");
      assert.equal(b.canProbe(20_500), true);
    }
  });

  it("ignores what happens while open", () => {
    const b = new RegionBreaker(SETTINGS);
    for (let i = 0; i < 3; i++) b.onPollFailure("timeout", 0);
    b.onSummary(GOOD, 5_000);
    b.onOutcome(true, 6_000);
    b.onPollFailure("timeout", 7_000);
    assert.equal(b.state(9_999), "open");
    assert.equal(b.state(10_000), "half-open");
  });

  it("does not let a window that still holds the outage's errors reopen it, half-open or closed again", () => {
    const b = new RegionBreaker(SETTINGS);
    const win = (errorRate: number, at: number) => ({
      requests: 100,
      errorRate,
      windowS: 60,
      computedAt: at,
    });
    b.onSummary(win(0.5, 0), 0);
    assert.equal(b.state(0), "open");
    // Half-open at 10 s; the gateway's last minute still counts the outage: no verdict either way on errors.
    b.onSummary(win(0.4, 11_000), 11_000);
    assert.equal(b.state(11_000), "half-open", "an old window does not reopen it");
    for (let i = 0; i < 3; i++) b.onOutcome(true, 12_000 + i);
    assert.equal(b.state(12_002), "closed", "probes close it");
    b.onSummary(win(0.3, 40_000), 40_000);
    assert.equal(b.state(40_000), "closed", "the window (−20 s .. 40 s) reaches back into the outage");
    b.onSummary(win(0.3, 71_000), 71_000);
    assert.equal(b.state(71_000), "open", "a window wholly after the outage counts again");
  });
});
