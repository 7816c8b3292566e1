// Pins how the harness's front spreads requests over gateway replicas: in turn, by the prompt's first
// characters (one system prompt, one replica), or by session (else tenant).

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TraceRequest } from "../trace-formats/trace.js";
import type { ChatMessage } from "../workload/messages.js";
import { chooseReplica } from "./replay.js";

const urls = ["http://a", "http://b", "http://c"];
const req = (over: Partial<TraceRequest> = {}): TraceRequest => ({
  t_ms: 0,
  id: "r",
  tenant: "t",
  task: null,
  request_class: "interactive",
  max_tokens: 8,
  stream: false,
  ...over,
});
const msgs = (system: string, user: string): ChatMessage[] => [
  { role: "system", content: system },
  { role: "user", content: user },
];

describe("the bench's front over gateway replicas", () => {
  it("round-robin sends each request to the next replica", () => {
    const got = [0, 1, 2, 3, 4].map((n) => chooseReplica({ urls, front: "round-robin" }, req(), [], n));
    assert.deepEqual(got, ["http://a", "http://b", "http://c", "http://a", "http://b"]);
  });

  it("prefix keeps one system prompt on one replica, and spreads different ones", () => {
    const r = { urls, front: "prefix" as const };
    const system = (g: number) => `You are support assistant ${g}. `.repeat(60);
    for (let g = 0; g < 6; g++) {
      const first = chooseReplica(r, req(), msgs(system(g), "q0"), 0);
      for (let q = 1; q < 5; q++) assert.equal(chooseReplica(r, req(), msgs(system(g), `q${q}`), q), first);
    }
    const used = new Set(
      Array.from({ length: 30 }, (_, g) => chooseReplica(r, req(), msgs(system(g), "x"), 0)),
    );
    assert.equal(used.size, 3, "thirty prompts use every replica");
  });

  it("session keeps a conversation on one replica, the tenant when there is none", () => {
    const r = { urls, front: "session" as const };
    const one = chooseReplica(r, req({ session: "s-1" }), msgs("a", "1"), 0);
    assert.equal(chooseReplica(r, req({ session: "s-1" }), msgs("b", "2"), 7), one);
    assert.equal(
      chooseReplica(r, req({ tenant: "x" }), [], 0),
      chooseReplica(r, req({ tenant: "x" }), [], 9),
    );
  });
});
