import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import { Lease } from "../endpoints/lease.js";
import type { RequestPlan } from "../plan/request-plan.js";
import { HookSet, type RequestHook } from "./hooks.js";
import type { PoolRuntime } from "./pool-runtime.js";
import { RequestRecord } from "./request-record.js";

const pool = {} as PoolRuntime;
const plan = {} as RequestPlan;
const endpoint = {} as EndpointState;

/** A lease on counters that records when it is released, into `events`. */
function leaseInto(events: string[]): Lease {
  const counters = {
    inflightRequests: 1,
    inflightTokens: 10,
    onCapacity: () => events.push("lease released"),
  };
  return new Lease(counters, 10);
}

/** A hook that records each call into `events`, its undo too. */
function recording(name: string, events: string[]): RequestHook {
  return {
    name,
    attempt: () => {
      events.push(`${name} attempt`);
      return () => events.push(`${name} undo`);
    },
    attemptEnd: (_a, end) => events.push(`${name} end ${end.kind}`),
    settle: () => events.push(`${name} settle`),
  };
}

describe("request hooks", () => {
  it("runs attempt hooks in order, undoes them in reverse before the lease goes, then attemptEnd", () => {
    const events: string[] = [];
    const hooks = new HookSet([recording("a", events), recording("b", events)]);
    const attempt = hooks.begin(pool, plan, new RequestRecord("t"), endpoint, leaseInto(events));
    attempt.end({ kind: "cancelled" });
    assert.deepEqual(events, [
      "a attempt",
      "b attempt",
      "b undo",
      "a undo",
      "lease released",
      "a end cancelled",
      "b end cancelled",
    ]);
  });

  it("ends an attempt once however often it is told", () => {
    const events: string[] = [];
    const hooks = new HookSet([recording("a", events)]);
    const lease = leaseInto(events);
    const attempt = hooks.begin(pool, plan, new RequestRecord("t"), endpoint, lease);
    attempt.end({ kind: "timed_out" });
    attempt.end({ kind: "cancelled" });
    assert.deepEqual(events, ["a attempt", "a undo", "lease released", "a end timed_out"]);
    assert.equal(lease.released, true);
  });

  it("hands each hook the attempt it began and how it ended", () => {
    const seen: unknown[] = [];
    const hooks = new HookSet([
      { name: "x", attemptEnd: (a, end) => seen.push(a.endpoint, a.plan, a.pool, end) },
    ]);
    const end = { kind: "backpressure", retryAfterMs: 2000 } as const;
    hooks.begin(pool, plan, new RequestRecord("t"), endpoint, leaseInto([])).end(end);
    assert.deepEqual(seen, [endpoint, plan, pool, end]);
  });

  it("settles in registration order, skipping hooks without a settle", () => {
    const events: string[] = [];
    const hooks = new HookSet([
      recording("a", events),
      { name: "quiet", attempt: () => undefined },
      recording("b", events),
    ]);
    hooks.settle(new RequestRecord("t"));
    assert.deepEqual(events, ["a settle", "b settle"]);
    assert.deepEqual(hooks.names, ["a", "quiet", "b"]);
  });

  it("refuses a hook registered twice", () => {
    assert.throws(
      () => new HookSet([{ name: "twice" }, { name: "twice" }]),
      /request hook twice is registered twice/,
    );
  });
});
