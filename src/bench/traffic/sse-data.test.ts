import assert from "node:assert/strict";
import { it } from "node:test";
import { SseData } from "./sse-data.js";

it("gives a stream's data payloads as their frames complete, across chunk boundaries", () => {
  const s = new SseData();
  assert.deepEqual(s.push('data: {"a":1}\n\ndata: {"b"'), ['{"a":1}']);
  assert.deepEqual(s.push(Buffer.from(":2}\n\n: comment\n\nevent: x\n\ndata: [DONE]\n\n")), [
    '{"b":2}',
    "[DONE]",
  ]);
  assert.deepEqual(s.push(""), []);
});
