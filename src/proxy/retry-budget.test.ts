// Pins the retry budget: retries in flight are capped at a share of the requests in flight, with a floor
// of concurrent retries that a single crash among few requests cannot exhaust.

import assert from "node:assert/strict";
import { it } from "node:test";
import { RetryBudget } from "./retry-budget.js";

it("allows the floor of concurrent retries whatever the load, then a share of the requests in flight", () => {
  const b = new RetryBudget(10, 3);
  b.begin();
  assert.equal(b.tryRetry(), true);
  assert.equal(b.tryRetry(), true);
  assert.equal(b.tryRetry(), true);
  assert.equal(b.tryRetry(), false, "floor of 3 reached with 1 request in flight");
  b.retryDone();
  assert.equal(b.tryRetry(), true, "a finished retry gives its place back");
  for (let i = 0; i < 99; i++) b.begin();
  assert.equal(b.tryRetry(), true, "10% of 100 in flight: 10 retries");
  for (let i = 0; i < 6; i++) b.tryRetry();
  assert.equal(b.retrying, 10);
  assert.equal(b.tryRetry(), false);
  assert.equal(new RetryBudget(0, 3).tryRetry(), false, "0% disables retries");
});
