import assert from "node:assert/strict";
import { test } from "node:test";
import { countTokens } from "../../sim/tokenizer.js";
import type { TraceRequest } from "../trace-formats/trace.js";
import { buildMessages, type ChatMessage, extraHeaders, recordTurn } from "./messages.js";

function req(over: Partial<TraceRequest>): TraceRequest {
  return {
    t_ms: 0,
    id: "r1",
    tenant: "t",
    task: "live_ticket_summary",
    request_class: "interactive",
    input_tokens: 300,
    max_tokens: 10,
    stream: true,
    ...over,
  };
}

test("requests of one prefix group get a byte-identical system prompt of prefix_tokens tokens", () => {
  const a = buildMessages(req({ id: "a", prefix_group: "g1", prefix_tokens: 2048 }));
  const b = buildMessages(req({ id: "b", prefix_group: "g1", prefix_tokens: 2048 }));
  const c = buildMessages(req({ id: "c", prefix_group: "g2", prefix_tokens: 2048 }));
  assert.equal(a[0]!.role, "system");
  assert.equal(a[0]!.content, b[0]!.content);
  assert.notEqual(a[0]!.content, c[0]!.content);
  assert.ok(Math.abs(countTokens(a[0]!.content) - 2048) <= 20);
  assert.notEqual(a[1]!.content, b[1]!.content, "user messages differ by request id");
});

test("the user message is the trace's text or input_tokens generated from the id, in the trace's language", () => {
  assert.deepEqual(buildMessages(req({ input_text: "hello", input_tokens: undefined })), [
    { role: "user", content: "hello" },
  ]);
  const zh = buildMessages(req({ lang: "zh", input_tokens: 2800 }));
  assert.equal(zh.length, 1, "no system prompt without prefix_tokens");
  assert.ok(Math.abs(countTokens(zh[0]!.content) - 2800) <= 28);
  assert.match(zh[0]!.content, /[\u4e00-\u9fff]/);
  assert.equal(buildMessages(req({ lang: "zh", input_tokens: 2800 }))[0]!.content, zh[0]!.content);
});

test("a session's history sits between the system prompt and the new user turn, and grows by recordTurn", () => {
  const history: ChatMessage[] = [];
  const t1 = req({ id: "s-t1", prefix_group: "s", prefix_tokens: 600, session: "s", turn: 1 });
  const sent1 = buildMessages(t1, history);
  recordTurn(history, sent1, "first reply");
  const t2 = req({ id: "s-t2", prefix_group: "s", prefix_tokens: 600, session: "s", turn: 2 });
  const sent2 = buildMessages(t2, history);
  assert.deepEqual(
    sent2.map((m) => m.role),
    ["system", "user", "assistant", "user"],
  );
  assert.deepEqual(sent2.slice(0, 2), sent1, "turn 2 starts with exactly what turn 1 sent");
  assert.equal(sent2[2]!.content, "first reply");
  assert.equal(history.length, 2, "the history never holds the system prompt");
});

test("headers carry tenant, task, class and prefix group", () => {
  assert.deepEqual(extraHeaders(req({ prefix_group: "group-007" })), {
    "X-AI-Tenant": "t",
    "X-AI-Task": "live_ticket_summary",
    "X-AI-Request-Class": "interactive",
    "X-Prefix-Group": "group-007",
  });
  assert.deepEqual(extraHeaders(req({ task: null, tenant: "" })), { "X-AI-Request-Class": "interactive" });
  assert.equal(extraHeaders(req({ tenant: "租户 a" }))["X-AI-Tenant"], encodeURIComponent("租户 a"));
  assert.equal(extraHeaders(req({ prefix_group: "客服" }))["X-Prefix-Group"], encodeURIComponent("客服"));
});
