// Flow control end to end: simulated engines, the gateway, and real HTTP clients (the official openai
// client for streams). Batch work waits in the gateway's queue, times out with a structured error,
// leaves the queue when its client does, and pauses while the live pool's TTFT P95 is too high.

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import OpenAI from "openai";
import { sampleText } from "../sim/sample-text.js";
import { KEYS, type Platform, suitePlatforms } from "../testing/platform.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LIVE = { "x-ai-task": "live_ticket_summary", "x-ai-request-class": "interactive" };
const BATCH = { "x-ai-task": "batch_recompute_summary", "x-ai-request-class": "batch" };

/** One batch request by plain fetch, so a test can abort it; resolves with status and body. */
async function batch(
  p: Platform,
  opts: { words?: number; maxTokens?: number; signal?: AbortSignal; trace?: string } = {},
): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(`${p.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${KEYS.quality}`,
      "x-ai-trace-id": opts.trace ?? `batch-${Math.random().toString(36).slice(2)}`,
      ...BATCH,
    },
    body: JSON.stringify({
      model: "summary-default",
      messages: [{ role: "user", content: sampleText("zh", opts.words ?? 200, 3) }],
      max_tokens: opts.maxTokens ?? 20,
    }),
    signal: opts.signal,
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null, headers: res.headers };
}

async function metric(p: Platform, name: string): Promise<string[]> {
  const text = await (await p.admin("/metrics")).text();
  return text.split("\n").filter((l) => l.startsWith(name));
}

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  for (const until = Date.now() + ms; !cond(); ) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await sleep(10);
  }
}

describe("flow control, end to end", () => {
  const { start, stopAll } = suitePlatforms();
  after(stopAll);

  it("holds batch requests in the gateway queue while the pod is at its bound, and loses none", async () => {
    const p = await start({ profile: "h100-llama8b", batchFlowControl: "{ maxInflight: 1 }" });
    const engine = p.replicas.batch[0]!.engine;
    let mostRunning = 0;
    const probe = setInterval(() => {
      mostRunning = Math.max(mostRunning, engine.numRunning + engine.numWaiting);
    }, 2);
    // q-0 holds the pod for ~1 s, so the other three are surely still queued when the metric is read.
    const replies = [batch(p, { trace: "q-0", maxTokens: 150 })];
    await waitFor(() => p.gateway.pools.get("summary-batch")!.endpoints[0]!.inflightRequests === 1);
    for (let i = 1; i < 4; i++) replies.push(batch(p, { trace: `q-${i}`, maxTokens: 30 }));
    await waitFor(() => p.gateway.flow.pools.get("summary-batch")!.depth === 3);
    const depth = await metric(p, 'ai_gateway_queue_depth{pool="summary-batch",priority="10"}');
    assert.deepEqual(depth, ['ai_gateway_queue_depth{pool="summary-batch",priority="10"} 3']);
    const results = await Promise.all(replies);
    clearInterval(probe);
    assert.deepEqual(
      results.map((r) => r.status),
      [200, 200, 200, 200],
    );
    assert.equal(mostRunning, 1, "the engine never held more than one batch request");
    await waitFor(() => p.lines.filter((l) => l.trace_id.startsWith("q-")).length === 4);
    const waits = p.lines
      .filter((l) => l.trace_id.startsWith("q-"))
      .map((l) => l.gateway_queue_ms ?? -1)
      .sort((a, b) => a - b);
    // One at a time: each waited for the ones before it (~150 ms of engine time each, q-0 ~1 s).
    for (let i = 1; i < 4; i++) assert.ok(waits[i]! > waits[i - 1]! + 50, `waits ${waits.join(", ")} ms`);
    // And why: q-0 went at once; q-1 found the pod at its bound, as did the others when their turn came.
    const reason = (id: string) => p.lines.find((l) => l.trace_id === id)!.gateway_queue_reason;
    assert.equal(reason("q-0"), null);
    assert.equal(reason("q-1"), "saturated");
    for (const id of ["q-2", "q-3"]) assert.ok(["saturated", "queue_order"].includes(reason(id)!), id);
    const ep = p.gateway.pools.get("summary-batch")!.endpoints[0]!;
    assert.equal(ep.inflightRequests, 0);
    assert.deepEqual(
      await metric(p, 'ai_gateway_queue_requests_total{pool="summary-batch",outcome="dispatched"}'),
      ['ai_gateway_queue_requests_total{pool="summary-batch",outcome="dispatched"} 3'],
    );
  });

  it("refuses with queue_timeout after maxQueueMs, and a client leaving the queue leaves at once", async () => {
    const p = await start({
      profile: "h100-llama8b",
      batchFlowControl: "{ maxInflight: 1 }",
      batchMaxQueueMs: 1000,
    });
    const holder = batch(p, { words: 3000, maxTokens: 400 });
    const batchEp = p.gateway.pools.get("summary-batch")!.endpoints[0]!;
    await waitFor(() => batchEp.inflightRequests === 1);
    const late = await batch(p, { trace: "late" });
    assert.equal(late.status, 503);
    assert.equal(late.headers.get("retry-after"), "1");
    assert.equal(late.json.error.code, "queue_timeout");
    assert.equal(late.json.error.route, "summary-batch");
    assert.deepEqual(late.json.error.fallback_options, ["retry_later"]);
    assert.match(late.json.error.message, /maxQueueMs \(1000 ms\)/);

    const ac = new AbortController();
    const gone = batch(p, { trace: "gone", signal: ac.signal });
    await waitFor(() => p.gateway.flow.pools.get("summary-batch")!.depth === 1);
    ac.abort();
    await assert.rejects(gone);
    await waitFor(() => p.gateway.flow.pools.get("summary-batch")!.depth === 0);
    // It left because its client did, not because maxQueueMs ran out (as `late` did).
    assert.deepEqual((await metric(p, 'ai_gateway_queue_requests_total{pool="summary-batch"')).sort(), [
      'ai_gateway_queue_requests_total{pool="summary-batch",outcome="cancelled"} 1',
      'ai_gateway_queue_requests_total{pool="summary-batch",outcome="timed_out"} 1',
    ]);
    assert.equal((await holder).status, 200);
    await waitFor(() => p.lines.some((l) => l.trace_id === "gone"));
    const line = p.lines.find((l) => l.trace_id === "gone")!;
    assert.equal(line.status, "client_cancelled");
    assert.equal(line.endpoint, null, "never sent to an engine");
    assert.equal(p.lines.find((l) => l.trace_id === "late")!.error_code, "queue_timeout");
    assert.equal(p.lines.find((l) => l.trace_id === "late")!.gateway_queue_reason, "saturated");
    assert.equal(
      line.gateway_queue_reason,
      "saturated",
      "a request cancelled in the queue says why it waited",
    );
    assert.equal(p.replicas.batch[0]!.engine.stats.finished.abort, 0);
    assert.equal(p.gateway.pools.get("summary-batch")!.endpoints[0]!.inflightRequests, 0);
  });

  it("shares one endpoint state between pools that list the same engine (batch borrowing the long pod)", async () => {
    const p = await start({
      profile: "h100-llama8b",
      batchBorrowsLong: true,
      batchFlowControl: "{ maxInflight: 1 }",
    });
    const longEp = p.gateway.pools.get("summary-long")!.endpoints[0]!;
    const batchEps = p.gateway.pools.get("summary-batch")!.endpoints;
    assert.equal(batchEps.length, 2);
    assert.ok(batchEps.includes(longEp), "the same object, so in-flight counts and scrapes are shared");
    // Two batch requests at once: one per engine, the borrowed long pod included.
    const replies = await Promise.all([batch(p, { maxTokens: 40 }), batch(p, { maxTokens: 40 })]);
    assert.deepEqual(
      replies.map((r) => r.status),
      [200, 200],
    );
    await waitFor(() => p.lines.length >= 2);
    assert.deepEqual(new Set(p.lines.map((l) => l.endpoint)).size, 2);
    assert.equal(longEp.inflightRequests, 0);
  });

  it("pauses batch while the live pool's TTFT P95 is above the threshold, refuses with the seed's error, and resumes", async () => {
    const p = await start({
      profile: "h100-llama8b",
      batchQueuePolicy:
        "{ pauseWhen: { pool: summary-online, ttftP95MsGt: 60, windowSeconds: 2, minSamples: 3, resumeAfterSeconds: 0, retryAfterSeconds: 900 }, fallbackOptions: [retry_later, short_summary_only] }",
      batchMaxQueueMs: 5000,
    });
    const live = new OpenAI({
      baseURL: `${p.url}/v1`,
      apiKey: KEYS.basic,
      maxRetries: 0,
      defaultHeaders: LIVE,
    });
    // Four live summaries of ~7k tokens: each prefill alone is ~130 ms on this profile, past 60 ms.
    await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        const s = await live.chat.completions.create({
          model: "summary-default",
          messages: [{ role: "user", content: sampleText("en", 5200, 10 + i) }],
          max_tokens: 5,
          stream: true,
        });
        for await (const _ of s);
      }),
    );
    await waitFor(() => p.events.some((e) => e.event === "queue.paused"), 30_000);
    // Sent at once, while the pause holds (it lifts a 2 s window after the last slow first token).
    const t0 = Date.now();
    const heldReply = batch(p, { trace: "held" });
    const paused = p.events.find((e) => e.event === "queue.paused")!.fields;
    assert.equal(paused.pool, "summary-batch");
    assert.equal(paused.rule, "quality-batch");
    assert.equal(paused.watched_pool, "summary-online");
    assert.equal(paused.threshold_ms, 60);
    assert.ok((paused.ttft_p95_ms as number) > 60);
    assert.deepEqual(await metric(p, 'ai_gateway_queue_paused{pool="summary-batch"'), [
      'ai_gateway_queue_paused{pool="summary-batch",rule="quality-batch"} 1',
    ]);

    const held = await heldReply;
    const waited = Date.now() - t0;
    assert.equal(held.status, 200, "paused requests wait; none is dropped");
    assert.ok(p.events.some((e) => e.event === "queue.resumed"));
    await waitFor(() => p.lines.some((l) => l.trace_id === "held"));
    const heldLine = p.lines.find((l) => l.trace_id === "held")!;
    assert.equal(heldLine.gateway_queue_reason, "paused", `it waited for the resume (${waited} ms)`);
    assert.ok(heldLine.gateway_queue_ms! > 0);

    // Paused again, with a queue limit shorter than the pause: the seed's inference_queue_paused.
    const p2 = await start({
      profile: "h100-llama8b",
      batchQueuePolicy:
        "{ pauseWhen: { pool: summary-online, ttftP95MsGt: 60, windowSeconds: 30, minSamples: 3, retryAfterSeconds: 900 }, fallbackOptions: [retry_later, short_summary_only] }",
      batchMaxQueueMs: 200,
    });
    const live2 = new OpenAI({
      baseURL: `${p2.url}/v1`,
      apiKey: KEYS.basic,
      maxRetries: 0,
      defaultHeaders: LIVE,
    });
    for (let i = 0; i < 3; i++) {
      const s = await live2.chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: sampleText("en", 5200, 20 + i) }],
        max_tokens: 5,
        stream: true,
      });
      for await (const _ of s);
    }
    await waitFor(() => p2.gateway.flow.gates.get("quality-batch")!.paused, 30_000);
    const refused = await batch(p2, { trace: "refused" });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get("retry-after"), "900");
    assert.equal(refused.json.error.code, "inference_queue_paused");
    assert.equal(refused.json.error.retry_after_seconds, 900);
    assert.equal(refused.json.error.route, "summary-batch");
    assert.deepEqual(refused.json.error.fallback_options, ["retry_later", "short_summary_only"]);
    await waitFor(() => p2.lines.some((l) => l.trace_id === "refused"));
    const line = p2.lines.find((l) => l.trace_id === "refused")!;
    assert.equal(line.endpoint, null, "never sent to an engine");
    assert.equal(line.error_code, "inference_queue_paused");
    assert.ok((line.gateway_queue_ms ?? 0) >= 190, "the log line shows the wait");
    assert.equal(line.gateway_queue_reason, "paused");
  });
});
