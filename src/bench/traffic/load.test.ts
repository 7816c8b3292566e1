import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { Agent } from "undici";
import { runClosedLoop, runOpenLoop, timedRequest } from "./load.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("open loop", () => {
  it("sends at the offered rate and returns only arrivals after the warm-up", async () => {
    const r = await runOpenLoop({
      ratePerSec: 500,
      warmupMs: 200,
      durationMs: 400,
      maxOutstanding: 1000,
      send: async (seq) => seq,
    });
    assert.equal(r.results.length, 200);
    assert.equal(r.results[0], 100, "the first 100 arrivals were the warm-up");
    assert.equal(r.dropped, 0);
    assert.equal(r.lateMs.length, 200);
  });

  it("does not wait for slow responses, and drops arrivals past maxOutstanding", async () => {
    const started: number[] = [];
    let firstEnded = Number.POSITIVE_INFINITY;
    const r = await runOpenLoop({
      ratePerSec: 200,
      durationMs: 200,
      maxOutstanding: 10,
      send: async () => {
        started.push(performance.now());
        await sleep(300);
        firstEnded = Math.min(firstEnded, performance.now());
      },
    });
    assert.equal(r.results.length, 10);
    assert.equal(r.dropped, 30);
    // Every request went out before any answer came back: nothing waited for a response.
    assert.ok(Math.max(...started) < firstEnded, "the tenth was sent before the first answer");
  });

  it("draws Poisson gaps from the given source", async () => {
    let draws = 0;
    const r = await runOpenLoop({
      ratePerSec: 1000,
      durationMs: 100,
      arrivals: "poisson",
      random: () => {
        draws++;
        return 0.5;
      },
      maxOutstanding: 1000,
      send: async () => 1,
    });
    // A constant draw of 0.5 gives gaps of ln(2) ms.
    assert.equal(r.results.length, Math.ceil(100 / Math.LN2));
    assert.equal(draws, r.results.length);
  });
});

describe("closed loop", () => {
  it("keeps exactly `concurrency` requests outstanding until the duration ends", async () => {
    let outstanding = 0;
    let peak = 0;
    let slowest = 0;
    const r = await runClosedLoop({
      concurrency: 4,
      durationMs: 100,
      send: async () => {
        peak = Math.max(peak, ++outstanding);
        const t = performance.now();
        await sleep(10);
        slowest = Math.max(slowest, performance.now() - t);
        outstanding--;
        return 1;
      },
    });
    assert.equal(peak, 4);
    // Each client sends back to back until 100 ms have passed, so at least 100 / slowest sends each
    // (about 40 in all; a loaded machine's slow timers make fewer, and the bound follows them).
    const atLeast = 4 * Math.floor(100 / slowest);
    assert.ok(
      r.results.length >= atLeast && r.results.length <= 44,
      `${r.results.length} (slowest ${slowest} ms)`,
    );
    assert.ok(r.elapsedMs >= 100);
  });
});

describe("timedRequest", () => {
  it("reads the body, and reports a non-200 status or a refused connection as an error", async () => {
    const server = http.createServer((req, res) => {
      res.writeHead(req.url === "/ok" ? 200 : 503).end("body");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const agent = new Agent();
    try {
      const ok = await timedRequest(`${base}/ok`, "{}", agent);
      assert.deepEqual([ok.status, ok.bytes, ok.error], [200, 4, null]);
      assert.ok(ok.ms > 0);
      const bad = await timedRequest(`${base}/x`, "{}", agent);
      assert.equal(bad.error, "HTTP 503: body");
    } finally {
      await agent.close();
      await new Promise((r) => server.close(r));
    }
    const refused = await timedRequest(base, "{}", new Agent());
    assert.equal(refused.status, 0);
    assert.ok(refused.error);
  });
});
