// Pins the circuit breaker: it opens on a failure rate over its window (not on a few failures among
// many successes), holds requests while open, probes one at a time when the cool-off ends, closes after
// enough probe successes, and reopens for longer when a probe fails.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CircuitBreaker, type CircuitState } from "./circuit-breaker.js";

const policy = {
  failureRatio: 0.5,
  minRequests: 4,
  windowMs: 1000,
  openMs: 100,
  maxOpenMs: 350,
  closeAfterSuccesses: 2,
};

describe("CircuitBreaker", () => {
  it("stays closed with rare failures and opens once half the window's requests fail", () => {
    const seen: CircuitState[] = [];
    const b = new CircuitBreaker(policy, (s) => seen.push(s));
    for (let i = 0; i < 20; i++) b.record(i % 5 !== 0, i);
    assert.equal(b.state, "closed", "one failure in five");
    const c = new CircuitBreaker(policy, (s) => seen.push(s));
    c.record(true, 0);
    c.record(false, 1);
    c.record(true, 2);
    assert.equal(c.state, "closed", "below minRequests");
    c.record(false, 3);
    assert.equal(c.state, "open");
    assert.deepEqual(seen, ["open"]);
    assert.equal(c.allows(50), false);
    assert.equal(c.openUntil, 103);
  });

  it("probes one request at a time after the cool-off, and closes after two successes", () => {
    const seen: CircuitState[] = [];
    const b = new CircuitBreaker(policy, (s) => seen.push(s));
    for (let i = 0; i < 4; i++) b.record(false, i);
    assert.equal(b.allows(103), true);
    b.dispatched(103);
    assert.equal(b.state, "half_open");
    assert.equal(b.allows(104), false, "one probe at a time");
    b.record(true, 110);
    assert.equal(b.allows(111), true);
    b.dispatched(111);
    b.record(true, 120);
    assert.equal(b.state, "closed");
    assert.deepEqual(seen, ["open", "half_open", "closed"]);
  });

  it("reopens for twice as long when a probe fails, up to the cap; an abandoned probe frees the slot", () => {
    const b = new CircuitBreaker(policy);
    for (let i = 0; i < 4; i++) b.record(false, i);
    b.dispatched(200);
    b.abandon();
    assert.equal(b.allows(201), true);
    b.dispatched(201);
    b.record(false, 210);
    assert.equal(b.state, "open");
    assert.equal(b.openUntil, 410, "200 ms the second time");
    b.dispatched(410);
    b.record(false, 420);
    assert.equal(b.openUntil, 770, "capped at 350 ms");
  });

  it("forgets what the window held once it has passed", () => {
    const b = new CircuitBreaker(policy);
    b.record(false, 0);
    b.record(false, 1);
    b.record(false, 2);
    b.record(true, 2000);
    b.record(false, 2001);
    assert.equal(b.state, "closed");
  });
});
