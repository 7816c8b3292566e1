// Pins session affinity: one endpoint per session key, stable, moving only when its endpoint leaves.

import assert from "node:assert/strict";
import { it } from "node:test";
import { fakeEndpoint } from "../../../testing/fake-endpoint.js";
import { scoringContext } from "../../../testing/scoring-context.js";
import { sessionAffinityScorer } from "./session-affinity.js";

const eps = Array.from({ length: 8 }, (_, i) => fakeEndpoint(`e${i}`));
const winner = (key: string, set = eps) => {
  const s = Array.from(sessionAffinityScorer().score(scoringContext({ request: { sessionKey: key } }), set));
  assert.equal(s.filter((v) => v === 1).length, 1);
  return set[s.indexOf(1)]!.name;
};

it("session-affinity sends a session key to the same endpoint every time", () => {
  assert.equal(winner("user-42"), winner("user-42"));
  const spread = new Set(Array.from({ length: 64 }, (_, i) => winner(`s${i}`)));
  assert.ok(spread.size >= 5, `64 sessions should spread over most of 8 endpoints, got ${spread.size}`);
});

it("session-affinity moves only the sessions of an endpoint that left", () => {
  const keys = Array.from({ length: 64 }, (_, i) => `s${i}`);
  const before = keys.map((k) => winner(k));
  const gone = before[0]!;
  const after = keys.map((k) =>
    winner(
      k,
      eps.filter((e) => e.name !== gone),
    ),
  );
  keys.forEach((_, i) => {
    if (before[i] !== gone) assert.equal(after[i], before[i]);
  });
});

it("session-affinity gives no preference without a session key", () => {
  assert.deepEqual(sessionAffinityScorer().score(scoringContext(), eps.slice(0, 3)), [0, 0, 0]);
});
