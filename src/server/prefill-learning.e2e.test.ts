// The prefill view learns an engine's speed from what its requests show, end to end: a simulated A100
// behind the gateway, streamed requests from the official openai client, and mid-run the engine told
// to run four times slower (POST /admin/faults {"slowdown": 4}, a throttled GPU). The learned rate must
// follow, and the predictions logged for the last requests must be close to the TTFTs they got.
//
// Everything shares this process's event loop, so a busy machine adds its stalls to every TTFT the gateway
// sees. The A100's prefill (~48 µs a token, not the H100's ~17) makes each TTFT 30–600 ms, so those stalls
// stay small beside what is learned.

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { sampleText } from "../sim/sample-text.js";
import { openaiClient, type Platform, suitePlatforms } from "../testing/platform.js";

const LIVE = { "x-ai-task": "live_ticket_summary", "x-ai-request-class": "interactive" };

/**
 * One streamed request of about `tokens` prompt tokens, read to its end; one at a time, so TTFT is its
 * own prefill. `seed` makes the text: a prompt sent before would be found in the engine's prefix cache.
 */
async function stream(p: Platform, tokens: number, seed: number, trace: string): Promise<void> {
  const client = openaiClient(p, { ...LIVE, "x-ai-trace-id": trace });
  const s = await client.chat.completions.create({
    model: "summary-default",
    messages: [{ role: "user", content: sampleText("en", tokens, seed) }],
    max_tokens: 3,
    stream: true,
  });
  for await (const _ of s);
}

/** Median of |predicted − actual| / actual over the logged lines whose trace id `pick` accepts. */
function medianError(p: Platform, pick: (trace: string) => boolean): number {
  const errors = p.lines
    .filter((l) => pick(l.trace_id) && l.predicted_ttft_ms !== null && l.ttft_ms)
    .map((l) => Math.abs(l.predicted_ttft_ms! - l.ttft_ms!) / l.ttft_ms!)
    .sort((a, b) => a - b);
  assert.ok(errors.length >= 10, `${errors.length} lines with a prediction`);
  return errors[Math.floor(errors.length / 2)]!;
}

describe("the prefill rate, learned from a real engine", () => {
  const { start, stopAll } = suitePlatforms();
  after(stopAll);

  it("follows an engine that slows down mid-run, and predicts its TTFT again", async () => {
    const p = await start({ profile: "a100-llama8b", online: 1 });
    const view = p.gateway.pools.get("summary-online")!.endpoints[0]!.prefill;
    // Prompts from ~300 to ~3,000 tokens, so the fit sees the slope, not only the intercept.
    const tokens = (i: number) => 300 + ((i * 373) % 2700);
    for (let i = 0; i < 40; i++) await stream(p, tokens(i), i, `fast-${i}`);
    const fast = view.prefillMsPerKToken();
    assert.ok(view.learned, "the fit is trusted after 40 first tokens");
    // The profile's step law: 47.84 µs a prefill token, so ~48 ms per 1,000 (the gateway counts its own
    // token estimate, not the engine's, so allow for the difference).
    assert.ok(fast > 30 && fast < 80, `learned ${fast.toFixed(1)} ms per 1k tokens on the A100`);

    const res = await fetch(`${p.replicas.online[0]!.url}/admin/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ slowdown: 4 }),
    });
    assert.equal(res.status, 200);
    for (let i = 0; i < 40; i++) await stream(p, tokens(i), 1000 + i, `slow-${i}`);
    const slow = view.prefillMsPerKToken();
    assert.ok(
      slow / fast > 3 && slow / fast < 5,
      `learned ${slow.toFixed(1)} ms per 1k tokens after the 4× slowdown (${(slow / fast).toFixed(2)}×)`,
    );
    await waitForLines(p, 80);
    const late = (t: string) => t.startsWith("slow-") && Number(t.slice(5)) >= 20;
    const err = medianError(p, late);
    assert.ok(err < 0.25, `median prediction error over the last slow requests ${(err * 100).toFixed(1)}%`);
    assert.equal(view.held(), null, "nothing left pending or decoding");
  });
});

async function waitForLines(p: Platform, n: number): Promise<void> {
  for (const until = Date.now() + 5000; p.lines.length < n; ) {
    if (Date.now() > until) throw new Error(`${p.lines.length} of ${n} log lines`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
