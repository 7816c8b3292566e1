import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Engine } from "./engine.js";
import { makeEngineConfig } from "./engine-config.js";
import type { EngineRequest, FinishReason } from "./engine-request.js";

interface Done {
  req: EngineRequest;
  reason: FinishReason;
  tokenTimes: number[];
}

/** Submits a request whose prompt tokens are `base + i`, and resolves when the engine finishes it. */
function submit(
  engine: Engine,
  opts: { promptLen: number; maxTokens: number; base?: number; lora?: string | null; id?: string },
): { req: EngineRequest; done: Promise<Done> } {
  const prompt = new Uint32Array(opts.promptLen);
  const base = opts.base ?? Math.floor(Math.random() * 1e6);
  for (let i = 0; i < opts.promptLen; i++) prompt[i] = (base + i) % 100_000;
  const tokenTimes: number[] = [];
  let resolve!: (d: Done) => void;
  const done = new Promise<Done>((r) => {
    resolve = r;
  });
  const req = engine.add({
    id: opts.id ?? `r${base}`,
    promptTokens: prompt,
    maxTokens: opts.maxTokens,
    targetOutputTokens: opts.maxTokens,
    lora: opts.lora ?? null,
    outputTokenId: (i) => 120_000 + i,
    sink: {
      onToken: () => tokenTimes.push(performance.now()),
      onFinish: (r, reason) => resolve({ req: r, reason, tokenTimes }),
    },
  });
  return { req, done };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ttft = (d: Done) => d.req.firstTokenAt - d.req.arrivedAt;

describe("simulated engine step loop", () => {
  it("generates exactly max_tokens and reports finish_reason length", async () => {
    const e = new Engine(makeEngineConfig("instant", "m"));
    const { done } = submit(e, { promptLen: 100, maxTokens: 7 });
    const d = await done;
    assert.equal(d.reason, "length");
    assert.equal(d.req.outputLen, 7);
    assert.equal(d.tokenTimes.length, 7);
    assert.equal(e.kv.usage(), 0, "all blocks are free after the request ends");
    assert.equal(e.stats.promptTokens, 100);
    assert.equal(e.stats.generationTokens, 7);
  });

  it("times steps by the cost model: TTFT of a lone 2,000-token prompt ≈ β0 + β1·2000", async () => {
    const expected = (5753 + 17.25 * 2000) / 1000; // 40.25 ms
    // Wall clock follows the model too (timers may add a little, never much less). A loaded machine can
    // fire one timer late, so the best of three tries is held to the bound.
    let wall = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 3 && !(wall < expected + 40); i++) {
      const e = new Engine(makeEngineConfig("h100-llama8b", "m", { apiServerUs: 0 }));
      const d = await submit(e, { promptLen: 2000, maxTokens: 3 }).done;
      assert.ok(Math.abs(ttft(d) - expected) < 0.5, `engine TTFT ${ttft(d)} vs model ${expected}`);
      const w = d.tokenTimes[0]! - d.req.arrivedAt;
      // Node's timers count from the loop's cached clock, which can trail performance.now() by a
      // millisecond or so: a step may look up to ~1.5 ms short (seen on a busy 2-core machine: 38.96).
      assert.ok(w >= expected - 2, `wall TTFT ${w}`);
      wall = Math.min(wall, w);
    }
    assert.ok(wall < expected + 40, `wall TTFT ${wall}`);
  });

  it("a short request behind a long prefill waits for it (head-of-line blocking)", async () => {
    const e = new Engine(makeEngineConfig("h100-llama8b", "m", { enableChunkedPrefill: false }));
    // Sent together: the API server stage passes the long one to the engine first, on any machine load
    // (a sleep between the two let a slow timer shorten the short one's wait).
    const long = submit(e, { promptLen: 24_000, maxTokens: 2 });
    const short = submit(e, { promptLen: 300, maxTokens: 2 });
    const [dl, ds] = await Promise.all([long.done, short.done]);
    const longPrefill = (5753 + 17.25 * 24_000) / 1000; // ≈ 420 ms
    assert.ok(ttft(ds) > longPrefill - 10, `short TTFT ${ttft(ds)} should include the long prefill`);
    assert.ok(
      ds.req.firstScheduledAt >= dl.req.firstTokenAt,
      "short was scheduled only after the long prefill step",
    );
  });

  it("with chunked prefill and a long-prefill threshold the short request finishes much sooner", async () => {
    const mk = (chunked: boolean) =>
      new Engine(
        makeEngineConfig("h100-llama8b", "m", {
          enableChunkedPrefill: chunked,
          longPrefillTokenThreshold: chunked ? 2048 : 0,
        }),
      );
    // As above, sent together so the order does not hang on a timer.
    const shortMs = async (chunked: boolean) => {
      const e = mk(chunked);
      const long = submit(e, { promptLen: 24_000, maxTokens: 2 });
      const short = submit(e, { promptLen: 300, maxTokens: 2 });
      const [, ds] = await Promise.all([long.done, short.done]);
      return ds.req.finishedAt - ds.req.arrivedAt;
    };
    const unchunked = await shortMs(false);
    // A timer firing late on a loaded machine puts the engine that much behind (~10 ms is enough to
    // miss the bound), so the best of three chunked runs is held to it.
    let chunked = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 3 && !(chunked < unchunked / 3); i++)
      chunked = Math.min(chunked, await shortMs(true));
    assert.ok(chunked < unchunked / 3, `chunked ${chunked} ms vs unchunked ${unchunked} ms`);
  });

  it("a repeated prefix is a cache hit and costs less prefill", async () => {
    // No API-server stage: TTFT here is the engine's queue and prefill alone.
    const e = new Engine(makeEngineConfig("h100-llama8b", "m", { apiServerUs: 0 }));
    const first = await submit(e, { promptLen: 4000, maxTokens: 2, base: 7 }).done;
    const second = await submit(e, { promptLen: 4000, maxTokens: 2, base: 7 }).done;
    assert.equal(first.req.cachedTokens, 0);
    // All full blocks but the one holding the last prompt token are reused (vLLM recomputes the last token).
    assert.equal(second.req.cachedTokens, 4000 - 16);
    assert.ok(ttft(second) < ttft(first) / 5, `cached TTFT ${ttft(second)} vs cold ${ttft(first)}`);
    assert.equal(e.stats.prefixCacheQueries, 8000);
    assert.equal(e.stats.prefixCacheHits, 3984);
  });

  it("prefix hits stop at the first differing block and are salted by LoRA name", async () => {
    const e = new Engine(makeEngineConfig("instant", "m", { maxLoras: 2, loraModules: ["a"] }));
    await submit(e, { promptLen: 320, maxTokens: 1, base: 50 }).done;
    const same = await submit(e, { promptLen: 320, maxTokens: 1, base: 50 }).done;
    assert.equal(same.req.cachedTokens, 304);
    const viaLora = await submit(e, { promptLen: 320, maxTokens: 1, base: 50, lora: "a" }).done;
    assert.equal(viaLora.req.cachedTokens, 0, "an adapter never reuses the base model's blocks");
  });

  it("evicts least recently freed blocks when the cache is full", async () => {
    // 100 blocks; each prompt takes 50. The third prompt must evict the first's blocks, not the second's.
    const e = new Engine(makeEngineConfig("instant", "m", { numGpuBlocks: 100, maxModelLen: 1600 }));
    await submit(e, { promptLen: 800, maxTokens: 1, base: 1 }).done;
    await submit(e, { promptLen: 800, maxTokens: 1, base: 30_000 }).done;
    await submit(e, { promptLen: 800, maxTokens: 1, base: 60_000 }).done;
    assert.equal(e.kv.numCachedBlocks, 100);
    const second = await submit(e, { promptLen: 800, maxTokens: 1, base: 30_000 }).done;
    assert.equal(second.req.cachedTokens, 784, "the second prompt is still cached");
    const first = await submit(e, { promptLen: 800, maxTokens: 1, base: 1 }).done;
    assert.equal(first.req.cachedTokens, 0, "the first prompt's blocks were evicted");
  });

  it("preempts by recompute when blocks run out, and still completes every request", async () => {
    // 40 blocks = 640 tokens; four requests that grow to 200 tokens each cannot all stay resident.
    const e = new Engine(makeEngineConfig("instant", "m", { numGpuBlocks: 40, maxModelLen: 640 }));
    const reqs = [0, 1, 2, 3].map((i) => submit(e, { promptLen: 100, maxTokens: 100, base: i * 1000 }));
    const done = await Promise.all(reqs.map((r) => r.done));
    assert.ok(e.stats.preemptions > 0, "some request was preempted");
    for (const d of done) assert.equal(d.req.outputLen, 100);
    assert.equal(e.kv.usage(), 0);
  });

  it("cancel frees the request's blocks at once", async () => {
    const e = new Engine(makeEngineConfig("h100-llama8b", "m"));
    const { req, done } = submit(e, { promptLen: 3000, maxTokens: 500 });
    await sleep(80);
    assert.equal(req.status, "running");
    assert.ok(e.kv.usage() > 0);
    e.abort(req);
    const d = await done;
    assert.equal(d.reason, "abort");
    assert.equal(e.kv.usage(), 0);
    assert.equal(e.numRunning, 0);
    assert.equal(e.stats.finished.abort, 1);
  });

  it("caps the running set at max_num_seqs and queues the rest", async () => {
    const e = new Engine(makeEngineConfig("h100-llama8b", "m", { maxNumSeqs: 2, apiServerUs: 0 }));
    const reqs = [0, 1, 2, 3].map(() => submit(e, { promptLen: 50, maxTokens: 20 }));
    await sleep(20);
    assert.equal(e.numRunning, 2);
    assert.equal(e.numWaiting, 2);
    await Promise.all(reqs.map((r) => r.done));
  });

  it("holds at most max_loras adapters and charges a load delay", async () => {
    const e = new Engine(
      makeEngineConfig("h100-llama8b", "m", { maxLoras: 1, loraModules: ["a", "b"], loraLoadMs: 30 }),
    );
    const a = submit(e, { promptLen: 50, maxTokens: 30, lora: "a" });
    const b = submit(e, { promptLen: 50, maxTokens: 30, lora: "b" });
    await sleep(45);
    assert.deepEqual(e.lora.runningAdapters(), ["a"], "b waits for a's slot");
    const [da, db] = await Promise.all([a.done, b.done]);
    assert.ok(ttft(da) >= 30, "loading adapter a cost its load delay");
    assert.ok(db.req.firstScheduledAt >= da.req.finishedAt, "b ran only after a freed the slot");
    assert.equal(e.lora.loads, 2);
  });

  it("serializes requests through the API server stage before the engine sees them", async () => {
    const e = new Engine(makeEngineConfig("instant", "m", { apiServerUs: 20_000 }));
    const reqs = [0, 1, 2].map(() => submit(e, { promptLen: 20, maxTokens: 1 }));
    const done = await Promise.all(reqs.map((r) => r.done));
    // 20 ms each, one after another from the first arrival: the third waits for the first two.
    const queued = done.map((d) => d.req.queuedAt - done[0]!.req.arrivedAt);
    assert.ok(
      Math.abs(queued[0]! - 20) < 1 && Math.abs(queued[1]! - 40) < 1 && Math.abs(queued[2]! - 60) < 1,
      `API server waits ${queued}`,
    );
    // The API server took the first request when it arrived, so the third's token comes 60 ms after
    // that arrival (not its own: on a loaded machine the three submits can be milliseconds apart).
    // Node timers may fire up to a millisecond early.
    assert.ok(done[2]!.tokenTimes[0]! - done[0]!.req.arrivedAt >= 58, "the wall clock agrees");
  });

  it("reset aborts everything and empties the cache", async () => {
    const e = new Engine(makeEngineConfig("h100-llama8b", "m"));
    const r = submit(e, { promptLen: 1000, maxTokens: 1000 });
    await sleep(20);
    e.reset();
    assert.equal((await r.done).reason, "abort");
    assert.equal(e.kv.usage(), 0);
    assert.equal(e.kv.numCachedBlocks, 0);
    assert.equal(e.stats.finished.abort, 0);
  });
});
