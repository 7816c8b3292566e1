// Graceful shutdown end to end: a draining gateway accepts no new connection, lets a stream in
// progress finish, and cuts what outlasts the drain — with the engine request aborted, nothing left
// counted, and one log line that says the gateway cut it.

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { sampleText } from "../sim/sample-text.js";
import { KEYS, type Platform, suitePlatforms } from "../testing/platform.js";

const LIVE = { "x-ai-task": "live_ticket_summary", "x-ai-request-class": "interactive" };

async function openStream(p: Platform, trace: string, maxTokens: number) {
  const res = await fetch(`${p.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${KEYS.basic}`,
      "x-ai-trace-id": trace,
      ...LIVE,
    },
    body: JSON.stringify({
      model: "summary-default",
      messages: [{ role: "user", content: sampleText("en", 40, 1) }],
      max_tokens: maxTokens,
      stream: true,
    }),
  });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value);
  /** The rest of the stream; `error` when the connection broke. */
  const rest = async (): Promise<{ text: string; error: string | null }> => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return { text, error: null };
        text += decoder.decode(value);
      }
    } catch (err) {
      return { text, error: (err as Error).message };
    }
  };
  return { rest };
}

const noLeaks = (p: Platform) => {
  for (const pool of p.gateway.pools.values())
    for (const e of pool.endpoints) assert.equal(e.inflightRequests, 0, `${e.name} in flight`);
};

describe("graceful shutdown, end to end", () => {
  const { start, stopAll } = suitePlatforms();
  after(stopAll);

  it("lets a stream in progress finish, takes no new connection, and says so in readiness", async () => {
    const p = await start({
      profile: "h100-llama8b",
      gatewayExtra: "  admin: { host: 127.0.0.1, port: 0 }\n",
    });
    const stream = await openStream(p, "drain-finish", 150);
    const drained = p.gateway.drain(10_000);
    assert.equal(p.gateway.activeRequests, 1);
    await assert.rejects(fetch(`${p.url}/v1/models`), "a new connection is refused");
    const ready = await fetch(`${p.gateway.adminUrl}/ready`);
    assert.equal(ready.status, 503);
    assert.equal(((await ready.json()) as { draining: boolean }).draining, true);
    const { text, error } = await stream.rest();
    assert.equal(error, null);
    assert.ok(text.trimEnd().endsWith("data: [DONE]"), "the stream ran to its end");
    assert.deepEqual(await drained, { cut: 0 });
    const line = p.lines.find((l) => l.trace_id === "drain-finish")!;
    assert.equal(line.status, "ok");
    noLeaks(p);
  });

  it("cuts a stream that outlasts the drain: the engine sees the abort, one line says shutdown", async () => {
    const p = await start({ profile: "h100-llama8b" });
    // 600 tokens (the pool's output limit) take seconds on this profile: still decoding at 300 ms.
    const stream = await openStream(p, "drain-cut", 600);
    const aborted = () => p.replicas.online.reduce((n, r) => n + r.engine.stats.finished.abort, 0);
    const before = aborted();
    const reading = stream.rest(); // a client reads as frames come
    const { cut } = await p.gateway.drain(300);
    assert.equal(cut, 1);
    const { text, error } = await reading;
    assert.ok(error, "the connection closed mid-stream");
    assert.ok(!text.includes("[DONE]"));
    // Told why before the connection closed, in the error shape the openai client raises.
    const event = text.split("\n").find((l) => l.startsWith('data: {"error"'));
    assert.ok(event, text.slice(-300));
    const err = JSON.parse(event.slice(6)).error;
    assert.equal(err.code, "gateway_shutdown");
    assert.equal(err.trace_id, "drain-cut");
    assert.equal(err.retry_after_seconds, 1);
    assert.equal(p.gateway.activeRequests, 0);
    for (const until = Date.now() + 5000; aborted() === before && Date.now() < until; )
      await new Promise((r) => setTimeout(r, 10));
    assert.equal(aborted(), before + 1, "the engine's request was aborted");
    const lines = p.lines.filter((l) => l.trace_id === "drain-cut");
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.status, "shutdown");
    assert.equal(lines[0]!.error_code, "gateway_shutdown");
    assert.equal(lines[0]!.client_cancelled, false);
    assert.equal(lines[0]!.http_status, 200, "what the client got");
    assert.ok((lines[0]!.ttft_ms ?? 0) > 0, "its first token had passed");
    noLeaks(p);
  });
});
