// Stream heartbeats end to end (`streaming.heartbeatMs`): a stream that waits — for its first token, or
// in the gateway's queue — gets its headers and SSE comments; the official openai client reads the
// stream as usual, and a failure after the heartbeat started reaches it as an error event it raises.

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import OpenAI from "openai";
import { sampleText } from "../sim/sample-text.js";
import { KEYS, openaiClient, type Platform, suitePlatforms } from "../testing/platform.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LIVE = { "x-ai-task": "live_ticket_summary", "x-ai-request-class": "interactive" };
const BATCH = { "x-ai-task": "batch_recompute_summary", "x-ai-request-class": "batch" };
const HEARTBEAT = "  streaming: { heartbeatMs: 100 }\n";

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !cond(); ) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await sleep(10);
  }
}

const client = openaiClient;

/** A streaming request by fetch; the whole body as text. */
async function rawStream(
  p: Platform,
  headers: Record<string, string>,
  key: string,
  trace: string,
  maxTokens = 8,
): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${p.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${key}`,
      "x-ai-trace-id": trace,
      ...headers,
    },
    body: JSON.stringify({
      model: "summary-default",
      messages: [{ role: "user", content: sampleText("en", 40, 1) }],
      max_tokens: maxTokens,
      stream: true,
    }),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const noLeaks = (p: Platform) => {
  for (const pool of p.gateway.pools.values())
    for (const e of pool.endpoints) assert.equal(e.inflightRequests, 0, `${e.name} in flight`);
  for (const [name, f] of p.gateway.flow.pools) assert.equal(f.depth, 0, `${name} queue`);
};

describe("stream heartbeats, end to end", () => {
  const { start, stopAll } = suitePlatforms();
  after(stopAll);

  it("a stream waiting for its first token gets headers and comments, then its frames", async () => {
    const p = await start({ gatewayExtra: HEARTBEAT });
    for (const r of p.replicas.online) r.setFaults({ stallAfterTokens: 0, stallMs: 700 });
    const res = await rawStream(p, LIVE, KEYS.basic, "hb-wait");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-ai-route-pool"), "summary-online");
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const comments = res.text.match(/^: tokengate: waiting for the first token, \d+ s\n\n/gm) ?? [];
    assert.ok(comments.length >= 2, `heartbeats during a 700 ms stall: ${comments.length}\n${res.text}`);
    // Comments only before the first frame; the stream then ends as usual.
    const firstFrame = res.text.indexOf("data: ");
    assert.ok(firstFrame > res.text.lastIndexOf(": tokengate:"));
    assert.ok(res.text.trimEnd().endsWith("data: [DONE]"));

    // The official client skips the comments and reads the text.
    const stream = await client(p, LIVE, KEYS.basic).chat.completions.create({
      model: "summary-default",
      messages: [{ role: "user", content: sampleText("en", 40, 2) }],
      max_tokens: 8,
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
    assert.ok(text.length > 0);
    for (const r of p.replicas.online) r.setFaults({ stallAfterTokens: null, stallMs: null });

    await until(() => p.lines.filter((l) => l.trace_id === "hb-wait").length === 1);
    const line = p.lines.find((l) => l.trace_id === "hb-wait")!;
    assert.equal(line.status, "ok");
    assert.equal(line.http_status, 200);
    noLeaks(p);
  });

  it("a stream that never waits sends no comment; heartbeats are off by default", async () => {
    // Heartbeats on, at an interval no quick stream reaches however busy the machine.
    const p = await start({ gatewayExtra: "  streaming: { heartbeatMs: 5000 }\n" });
    const quick = await rawStream(p, LIVE, KEYS.basic, "hb-quick");
    assert.equal(quick.status, 200);
    assert.ok(!quick.text.includes(": tokengate:"), quick.text);
    assert.ok(quick.headers.get("x-ai-endpoint"), "the endpoint is named when the frame starts the reply");

    const off = await start({});
    for (const r of off.replicas.online) r.setFaults({ stallAfterTokens: 0, stallMs: 400 });
    const quiet = await rawStream(off, LIVE, KEYS.basic, "hb-off");
    assert.ok(!quiet.text.includes(": tokengate:"), quiet.text);
    assert.ok(quiet.text.trimEnd().endsWith("data: [DONE]"));
  });

  it("a queued stream times out as an error event the openai client raises, leaving nothing behind", async () => {
    const p = await start({
      profile: "h100-llama8b",
      batchFlowControl: "{ maxInflight: 1 }",
      batchMaxQueueMs: 600,
      gatewayExtra: HEARTBEAT,
    });
    const batchEp = p.gateway.pools.get("summary-batch")!.endpoints[0]!;
    // The holder keeps the pod (maxInflight 1) for 2.5 s: its stream stalls after one token.
    p.replicas.batch[0]!.setFaults({ stallAfterTokens: 1, stallMs: 2500 });
    const holder = rawStream(p, BATCH, KEYS.quality, "hb-holder", 20);
    await until(() => batchEp.inflightRequests === 1);

    const raw = await rawStream(p, BATCH, KEYS.quality, "hb-late");
    assert.equal(raw.status, 200, "the heartbeat answered before the queue gave up");
    assert.match(raw.text, /^: tokengate: queued, \d+ s\n\n/m);
    const event = raw.text.split("\n").find((l) => l.startsWith("data: "))!;
    const err = JSON.parse(event.slice(6)).error;
    assert.equal(err.code, "queue_timeout");
    assert.equal(err.route, "summary-batch");
    assert.equal(err.trace_id, "hb-late");
    assert.equal(err.retry_after_seconds, 1);

    await assert.rejects(
      (async () => {
        const s = await client(p, BATCH, KEYS.quality).chat.completions.create({
          model: "summary-default",
          messages: [{ role: "user", content: sampleText("en", 40, 3) }],
          max_tokens: 8,
          stream: true,
        });
        for await (const _ of s) {
          // nothing arrives before the error
        }
      })(),
      (e: unknown) => e instanceof OpenAI.APIError && e.code === "queue_timeout",
    );
    assert.equal((await holder).status, 200);
    await until(() => p.lines.filter((l) => l.trace_id?.startsWith("hb-")).length === 2);
    const line = p.lines.find((l) => l.trace_id === "hb-late")!;
    assert.equal(line.error_code, "queue_timeout");
    assert.equal(line.http_status, 200, "what the client got");
    assert.equal(line.endpoint, null);
    noLeaks(p);
  });

  it("a client leaving while its stream is queued with heartbeats leaves nothing behind", async () => {
    const p = await start({
      profile: "h100-llama8b",
      batchFlowControl: "{ maxInflight: 1 }",
      gatewayExtra: HEARTBEAT,
    });
    p.replicas.batch[0]!.setFaults({ stallAfterTokens: 1, stallMs: 1500 });
    const batchEp = p.gateway.pools.get("summary-batch")!.endpoints[0]!;
    const holder = rawStream(p, BATCH, KEYS.quality, "hb-holder", 20);
    await until(() => batchEp.inflightRequests === 1);
    const ac = new AbortController();
    const res = await fetch(`${p.url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${KEYS.quality}`,
        "x-ai-trace-id": "hb-gone",
        ...BATCH,
      },
      body: JSON.stringify({
        model: "summary-default",
        messages: [{ role: "user", content: "x" }],
        max_tokens: 8,
        stream: true,
      }),
      signal: ac.signal,
    });
    // The headers came from the heartbeat: the request is still in the gateway's queue.
    assert.equal(res.status, 200);
    assert.equal(p.gateway.flow.pools.get("summary-batch")!.depth, 1);
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /^: tokengate: queued/);
    ac.abort();
    await until(() => p.gateway.flow.pools.get("summary-batch")!.depth === 0);
    await until(() => p.lines.some((l) => l.trace_id === "hb-gone"));
    const line = p.lines.find((l) => l.trace_id === "hb-gone")!;
    assert.equal(line.status, "client_cancelled");
    assert.equal(line.endpoint, null, "never sent to an engine");
    assert.equal((await holder).status, 200);
    noLeaks(p);
    p.replicas.batch[0]!.setFaults({ stallAfterTokens: null, stallMs: null });
  });

  it("an engine's refusal after the heartbeat started is the stream's error event", async () => {
    const p = await start({
      profile: "h100-llama8b",
      batchFlowControl: "{ maxInflight: 1 }",
      gatewayExtra: HEARTBEAT,
    });
    const batchEp = p.gateway.pools.get("summary-batch")!.endpoints[0]!;
    // The holder keeps the pod (maxInflight 1) for 1 s: its stream stalls after one token.
    p.replicas.batch[0]!.setFaults({ stallAfterTokens: 1, stallMs: 1000 });
    const holder = rawStream(p, BATCH, KEYS.quality, "hb-holder", 20);
    const engine = p.replicas.batch[0]!.engine;
    await until(() => batchEp.inflightRequests === 1 && engine.numRunning + engine.numWaiting === 1);
    // The engine is serving the holder already; the next request to arrive at it is refused.
    // (The stall stays set: it is read as tokens come, and the refused request gets none.)
    p.replicas.batch[0]!.setFaults({ errorRate: 1, errorStatus: 400 });
    const refused = await rawStream(p, BATCH, KEYS.quality, "hb-refused");
    p.replicas.batch[0]!.setFaults({ errorRate: 0, errorStatus: 503, stallAfterTokens: null, stallMs: null });
    assert.equal(refused.status, 200);
    assert.match(refused.text, /^: tokengate: queued, \d+ s\n\n/m);
    const event = refused.text.split("\n").find((l) => l.startsWith("data: "))!;
    const err = JSON.parse(event.slice(6)).error;
    assert.equal(err.code, 400);
    assert.equal(typeof err.message, "string");
    assert.equal(err.trace_id, "hb-refused");
    assert.equal((await holder).status, 200);
    await until(() => p.lines.some((l) => l.trace_id === "hb-refused"));
    const line = p.lines.find((l) => l.trace_id === "hb-refused")!;
    assert.equal(line.status, "engine_rejected");
    assert.equal(line.error_code, "engine_400");
    assert.equal(line.http_status, 200);
    noLeaks(p);
  });
});
