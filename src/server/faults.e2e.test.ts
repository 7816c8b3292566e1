// The fault suite: real simulated engines behind a real gateway, the official openai client, and each
// fault with the expectation a user of the gateway holds it to — above all, no request fails while a
// healthy endpoint remains, and nothing stays counted after a failure.

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import OpenAI from "openai";
import type { SimReplica } from "../sim/replica.js";
import { sampleText } from "../sim/sample-text.js";
import { openaiClient, type Platform, suitePlatforms } from "../testing/platform.js";

const LIVE = { "x-ai-task": "live_ticket_summary", "x-ai-request-class": "interactive" };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, ms = 10_000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(10)) if (cond()) return true;
  return cond();
}

const ask = (p: Platform, headers: Record<string, string> = {}) =>
  openaiClient(p, { ...LIVE, ...headers })
    .chat.completions.create({
      model: "summary-default",
      messages: [{ role: "user", content: "summarise" }],
      max_tokens: 8,
    })
    .withResponse();

/** Sends `n` live requests, `width` at a time; returns how many failed, with the first error. */
async function burst(
  p: Platform,
  n: number,
  width = 5,
): Promise<{ failed: number; first: unknown; endpoints: string[] }> {
  let failed = 0;
  let first: unknown = null;
  const endpoints: string[] = [];
  for (let i = 0; i < n; i += width) {
    await Promise.all(
      Array.from({ length: Math.min(width, n - i) }, async () => {
        try {
          const { response } = await ask(p);
          endpoints.push(response.headers.get("x-ai-endpoint") ?? "?");
        } catch (err) {
          failed++;
          first ??= err;
        }
      }),
    );
  }
  return { failed, first, endpoints };
}

/** Nothing left counted: no request in flight on any endpoint, nothing queued, no retry held. */
async function assertNothingHeld(p: Platform): Promise<void> {
  const pools = [...p.gateway.pools.values()];
  const held = () =>
    pools
      .flatMap((pool) => pool.endpoints)
      .some((e) => e.inflightRequests !== 0 || e.inflightTokens !== 0 || e.prefill.held() !== null) ||
    pools.some((pool) => pool.retryBudget.active !== 0 || pool.retryBudget.retrying !== 0) ||
    [...p.gateway.flow.pools.values()].some((f) => f.depth !== 0);
  await until(() => !held(), 5000);
  assert.equal(held(), false, "in-flight counters, prefill views, retry budget and queues are back to 0");
}

const endpointOf = (p: Platform, r: SimReplica) =>
  [...p.gateway.pools.get("summary-online")!.endpoints].find((e) => e.url === r.url)!;

describe("faults: no request fails while healthy capacity remains", () => {
  const platforms = suitePlatforms();
  after(platforms.stopAll);

  it("an engine crashed mid-stream: the stream raises within 1 s, the next 100 requests all succeed", async () => {
    const p = await platforms.start({ online: 3, profile: "h100-llama8b" });
    const stream = await openaiClient(p, LIVE).chat.completions.create({
      model: "summary-default",
      messages: [{ role: "user", content: "summarise" }],
      max_tokens: 500,
      stream: true,
    });
    const it = stream[Symbol.asyncIterator]();
    await it.next();
    const serving = p.replicas.online.find(
      (r) => r.engine.running.length > 0 || r.engine.waiting.length > 0,
    )!;
    assert.ok(serving, "one engine holds the stream");
    const crashedAt = performance.now();
    serving.crash();
    let raised: unknown = null;
    try {
      for (;;) if ((await it.next()).done) break;
    } catch (err) {
      raised = err;
    }
    assert.ok(raised, "the client's stream raised instead of ending cleanly");
    assert.ok(
      performance.now() - crashedAt < 1000,
      `raised ${Math.round(performance.now() - crashedAt)} ms after the crash`,
    );
    const r = await burst(p, 100);
    assert.equal(r.failed, 0, `failed: ${String(r.first)}`);
    assert.ok(!r.endpoints.includes(endpointOf(p, serving).name), "nothing went to the crashed engine");
    await assertNothingHeld(p);
  });

  it("an engine crashed mid-prefill: the request is retried elsewhere before any byte and succeeds", async () => {
    const p = await platforms.start({ online: 3, profile: "h100-llama8b" });
    // ~6,000 prompt tokens: a prefill of some 100 ms on this profile, long enough to crash inside it.
    const prompt = sampleText("en", 6000, 9);
    const pending = openaiClient(p, LIVE)
      .chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: prompt }],
        max_tokens: 8,
        stream: true,
      })
      .then(async (stream) => {
        let text = "";
        for await (const c of stream) text += c.choices[0]?.delta?.content ?? "";
        return text;
      });
    let victim: SimReplica | undefined;
    await until(() => {
      victim = p.replicas.online.find((r) => r.engine.running.some((q) => q.outputLen === 0));
      return victim !== undefined;
    }, 5000);
    assert.ok(victim, "an engine is prefilling the request");
    victim.crash();
    assert.ok((await pending).length > 0, "the caller got its answer from another engine");
    const r = await burst(p, 100);
    assert.equal(r.failed, 0, `failed: ${String(r.first)}`);
    await assertNothingHeld(p);
  });

  it("an engine crashed as a request reached it: the request is retried elsewhere, the engine marked down at once", async () => {
    const p = await platforms.start({ online: 3 });
    const victim = p.replicas.online[0]!;
    victim.setFaults({ crashAfterRequests: 1 });
    const r = await burst(p, 100);
    assert.equal(r.failed, 0, `failed: ${String(r.first)}`);
    const ep = endpointOf(p, victim);
    assert.equal(ep.routable(Date.now()), false);
    // Out at once by the request that found it dead: marked down (connection refused) or ejected (reset
    // before any byte), whichever the crash looked like; the health checker's own verdict may come later.
    assert.ok(
      p.events.some(
        (e) =>
          (e.event === "endpoint.unhealthy" || e.event === "endpoint.ejected") &&
          e.fields.endpoint === ep.name,
      ),
      "the endpoint's fall is logged",
    );
    const retried = p.lines.filter((l) => l.attempts > 1);
    assert.ok(
      retried.length <= 2,
      `${retried.length} requests needed a retry: the engine was learned at once`,
    );
    assert.equal(
      p.gateway.pools.get("summary-online")!.picker.index.blocksOf(ep.name),
      0,
      "its prefix claims are gone",
    );
    await assertNothingHeld(p);
  });

  it("every endpoint of a pool down: 503 with a code, fast, and served again within a health interval of recovery", async () => {
    const p = await platforms.start({ online: 2 });
    for (const r of p.replicas.online) r.crash();
    const first = await ask(p).catch((e: unknown) => e);
    assert.ok(first instanceof OpenAI.APIError && first.status === 503, String(first));
    const again = await ask(p, { "x-ai-trace-id": "all-down" }).catch((e: unknown) => e);
    assert.ok(again instanceof OpenAI.APIError);
    assert.equal(again.status, 503);
    assert.equal((again.error as { code?: string }).code, "no_healthy_endpoint");
    // Measured by the gateway itself (arrival to reply), so a busy test machine's client does not count.
    await until(() => p.lines.some((l) => l.trace_id === "all-down"));
    const ms = p.lines.find((l) => l.trace_id === "all-down")!.latency_ms ?? Number.POSITIVE_INFINITY;
    // At once: no connect attempt (connectMs 500) and no wait in the queue, however busy the machine.
    assert.ok(ms < 400, `answered in ${ms} ms`);
    for (const r of p.replicas.online) await r.start();
    const back = performance.now();
    await until(() => p.gateway.pools.get("summary-online")!.endpoints.some((e) => e.routable(Date.now())));
    const { response } = await ask(p);
    assert.equal(response.status, 200);
    assert.ok(performance.now() - back < 2000, "back within a few health intervals (100 ms here)");
    await assertNothingHeld(p);
  });

  it("an engine slow to its first byte: the request is retried elsewhere within firstByteMs", async () => {
    const p = await platforms.start({
      online: 2,
      timeouts: "{ connectMs: 500, firstByteMs: 400, idleMs: 2000, totalMs: 20000 }",
    });
    const slow = p.replicas.online[0]!;
    slow.setFaults({ stallAfterTokens: 0, stallMs: null });
    const client = openaiClient(p, LIVE);
    for (let i = 0; i < 6; i++) {
      const t0 = performance.now();
      const stream = await client.chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: `summarise ${i}` }],
        max_tokens: 8,
        stream: true,
      });
      let text = "";
      for await (const c of stream) text += c.choices[0]?.delta?.content ?? "";
      assert.ok(text.length > 0);
      assert.ok(performance.now() - t0 < 400 + 1500, "no longer than firstByteMs and one more attempt");
    }
    const retried = p.lines.filter((l) => l.fallback_reason?.includes(":timeout"));
    assert.ok(retried.length >= 1, "some request met the stalled engine and was retried");
    assert.ok(retried.every((l) => l.status === "ok" && l.attempts === 2));
    slow.setFaults({ stallAfterTokens: null });
    await assertNothingHeld(p);
  });

  it("metrics stale, slow or garbage: requests are served, the degraded mode is logged, nothing crashes", async () => {
    const p = await platforms.start({ online: 3 });
    const [stale, slow, garbage] = p.replicas.online as [SimReplica, SimReplica, SimReplica];
    stale.setFaults({ metricsStale: true });
    slow.setFaults({ metricsDelayMs: 2000 });
    garbage.setFaults({ metricsGarbage: true });
    await until(() => p.events.some((e) => e.event === "endpoint.metrics-stale"), 5000);
    const r = await burst(p, 40);
    assert.equal(r.failed, 0, `failed: ${String(r.first)}`);
    assert.ok(
      p.events.some((e) => e.event === "endpoint.metrics-stale"),
      "stale metrics are logged",
    );
    const ep = endpointOf(p, garbage);
    assert.equal(ep.waiting, null, "a garbage page gives no figures, not invented ones");
    assert.ok(
      p.lines.some((l) => l.pick_mode === "predicted"),
      "some picks ran on the gateway's own accounting",
    );
    await assertNothingHeld(p);
  });

  it("health flapping: every request is served, and traffic follows the health state only", async () => {
    const p = await platforms.start({ online: 2 });
    const flappy = p.replicas.online[0]!;
    let fail = false;
    const timer = setInterval(() => {
      fail = !fail;
      flappy.setFaults({ healthFail: fail });
    }, 150);
    try {
      const r = await burst(p, 80, 4);
      assert.equal(r.failed, 0, `failed: ${String(r.first)}`);
    } finally {
      clearInterval(timer);
      flappy.setFaults({ healthFail: false });
    }
    const ep = endpointOf(p, flappy);
    assert.equal(ep.ejectedUntil, 0, "a flapping health check is not a request failure: no ejection");
    await assertNothingHeld(p);
  });

  it("an engine answering 429 with Retry-After: not ejected, requests go elsewhere, it is left alone that long", async () => {
    const p = await platforms.start({ online: 2 });
    const full = p.replicas.online[0]!;
    full.setFaults({ maxWaiting: 0, retryAfterSeconds: 5 });
    const r = await burst(p, 40);
    assert.equal(r.failed, 0, `failed: ${String(r.first)}`);
    const ep = endpointOf(p, full);
    assert.equal(ep.ejectedUntil, 0, "backpressure is not a failure");
    assert.equal(ep.health.outliers.consecutiveFailures, 0);
    assert.ok(ep.health.backoffUntil > Date.now(), "held back for its Retry-After");
    const sentThere = p.lines.filter((l) =>
      l.fallback_reason?.includes(`retry:${ep.name}:status=429`),
    ).length;
    assert.ok(sentThere <= 3, `the full engine got ${sentThere} requests during its Retry-After`);
    await assertNothingHeld(p);
  });

  it("an engine failing most requests though healthy: its circuit opens and traffic goes elsewhere", async () => {
    const p = await platforms.start({ online: 2 });
    const bad = p.replicas.online[0]!;
    bad.setFaults({ errorRate: 0.7, errorStatus: 500 });
    const r = await burst(p, 80, 4);
    assert.equal(r.failed, 0, `failed: ${String(r.first)}`);
    const ep = endpointOf(p, bad);
    const opened = p.events.some((e) => e.event === "endpoint.circuit-open" && e.fields.endpoint === ep.name);
    const ejected = ep.health.outliers.ejections > 0;
    assert.ok(opened || ejected, "the failing engine was taken out by its breaker or by ejection");
    const snap = (await (await p.admin("/admin/endpoints")).json()) as {
      endpoints: { name: string; circuit: { state: string } }[];
    }[];
    const listed = snap.flatMap((x) => x.endpoints).find((e) => e.name === ep.name)!;
    assert.ok(
      ["closed", "open", "half_open"].includes(listed.circuit.state),
      "the breaker is in /admin/endpoints",
    );
    await assertNothingHeld(p);
  });

  it("SIGTERM-style drain under streaming load: every stream ends with [DONE] or an error event", async () => {
    const p = await platforms.start({ online: 2, profile: "h100-llama8b" });
    const client = openaiClient(p, LIVE);
    const outcomes = Array.from({ length: 12 }, async (_, i) => {
      try {
        const stream = await client.chat.completions.create({
          model: "summary-default",
          messages: [{ role: "user", content: `summarise ${i}` }],
          max_tokens: i % 2 ? 20 : 600,
          stream: true,
        });
        for await (const _c of stream) {
          /* read to the end */
        }
        return "done";
      } catch (err) {
        return err instanceof OpenAI.APIError
          ? `error:${(err.error as { code?: string })?.code}`
          : `broken:${String(err)}`;
      }
    });
    await until(() => p.gateway.activeRequests === 12, 5000);
    const { cut } = await p.gateway.drain(500);
    const results = await Promise.all(outcomes);
    assert.ok(cut > 0, "some long streams outlasted the drain");
    for (const r of results) assert.ok(r === "done" || r === "error:gateway_shutdown", r);
    assert.equal(results.filter((r) => r === "done").length, 12 - cut);
    await assertNothingHeld(p);
  });

  it("a bug in one request's cleanup is logged and answered, and the gateway serves the next one", async () => {
    const p = await platforms.start({ online: 1 });
    const log = p.gateway.log;
    const keep = log.listener;
    let thrown = false;
    log.listener = (l) => {
      if (!thrown) {
        thrown = true;
        throw new Error("a bug in settling");
      }
      keep?.(l);
    };
    await ask(p).catch(() => {});
    await until(() => p.events.some((e) => e.event === "gateway.internal-error"));
    assert.ok(p.events.some((e) => e.event === "gateway.internal-error"));
    const { response } = await ask(p);
    assert.equal(response.status, 200, "the process lives on");
    await assertNothingHeld(p);
  });

  it("every engine answering 429: the caller gets 429 upstream_overloaded with the engines' Retry-After", async () => {
    const p = await platforms.start({ online: 2 });
    for (const r of p.replicas.online) r.setFaults({ maxWaiting: 0, retryAfterSeconds: 7 });
    const err = await ask(p).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 429);
    assert.equal((err.error as { code?: string }).code, "upstream_overloaded");
    assert.equal(err.headers?.get("retry-after"), "7");
    await assertNothingHeld(p);
  });
});
