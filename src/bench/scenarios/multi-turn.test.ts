import assert from "node:assert/strict";
import { test } from "node:test";
import type { TraceRequest } from "../trace-formats/trace.js";
import { buildMessages, type ChatMessage, recordTurn } from "../workload/messages.js";
import { multiTurn as s } from "./multi-turn.js";

const full = s.generate({ seed: 9, quick: false });

function sessions(trace: TraceRequest[]): Map<string, TraceRequest[]> {
  const out = new Map<string, TraceRequest[]>();
  for (const r of trace) out.set(r.session!, [...(out.get(r.session!) ?? []), r]);
  return out;
}

test("every session has its turns in order, each after the previous by its think time", () => {
  const bySession = sessions(full);
  assert.equal(bySession.size, 192);
  for (const turns of bySession.values()) {
    assert.deepEqual(
      turns.map((r) => r.turn),
      [1, 2, 3, 4, 5, 6],
    );
    assert.equal(turns[0]!.think_ms, undefined);
    for (let i = 1; i < turns.length; i++) {
      const think = turns[i]!.think_ms!;
      assert.ok(think >= 500 && think <= 2000);
      assert.ok(Math.abs(turns[i]!.t_ms - turns[i - 1]!.t_ms - think) <= 1);
    }
  }
});

test("a session is its own prefix group with a 600-token system prompt; turns are sized as chat", () => {
  for (const r of full) {
    assert.equal(r.prefix_group, r.session);
    assert.equal(r.prefix_tokens, 600);
    assert.ok(r.input_tokens! >= 80 && r.input_tokens! <= 300);
    assert.ok(r.max_tokens >= 100 && r.max_tokens <= 250);
    assert.equal(r.request_class, "interactive");
  }
});

test("sessions start spread over the run", () => {
  const starts = full.filter((r) => r.turn === 1).map((r) => r.t_ms);
  const end = s.phases({ seed: 9, quick: false })[0]!.endS * 1000;
  assert.ok(Math.min(...starts) < end * 0.1 && Math.max(...starts) > end * 0.8);
});

test("replayed with the replies, each turn's prompt extends the previous one", () => {
  const turns = sessions(full).values().next().value!;
  const history: ChatMessage[] = [];
  let previous: ChatMessage[] = [];
  for (const r of turns) {
    const sent = buildMessages(r, history);
    assert.deepEqual(sent.slice(0, previous.length), previous);
    assert.equal(sent.length, 2 * r.turn!);
    recordTurn(history, sent, `reply to ${r.id}`);
    previous = [...sent, { role: "assistant", content: `reply to ${r.id}` }];
  }
});
