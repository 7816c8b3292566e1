import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SOAK_MIX, soakWorkload } from "./soak-workload.js";

describe("soak workload", () => {
  it("is the same for the same seed, and each user message is its own", () => {
    const a = soakWorkload(SOAK_MIX, 1);
    const b = soakWorkload(SOAK_MIX, 1);
    const ra = Array.from({ length: 50 }, (_, i) => a.next(i));
    const rb = Array.from({ length: 50 }, (_, i) => b.next(i));
    assert.deepEqual(ra, rb);
    const users = ra.map((r) => JSON.stringify((r.body.messages as unknown[]).at(-1)));
    assert.equal(new Set(users).size, 50);
  });

  it("streams, cancels and lengths in the configured shares and bounds", () => {
    const w = soakWorkload(SOAK_MIX, 3);
    const rs = Array.from({ length: 4000 }, (_, i) => w.next(i));
    const streams = rs.filter((r) => r.stream);
    const share = streams.length / rs.length;
    assert.ok(Math.abs(share - SOAK_MIX.streamShare) < 0.03, `stream share ${share}`);
    const streamCancels = streams.filter((r) => r.cancel !== null);
    const replies = rs.filter((r) => !r.stream);
    const replyCancels = replies.filter((r) => r.cancel !== null);
    assert.ok(Math.abs(streamCancels.length / streams.length - SOAK_MIX.streamCancelShare) < 0.015);
    assert.ok(Math.abs(replyCancels.length / replies.length - SOAK_MIX.replyCancelShare) < 0.02);
    for (const r of rs) {
      const max = r.body.max_tokens as number;
      assert.ok(max >= SOAK_MIX.maxTokens.min && max <= SOAK_MIX.maxTokens.max);
      assert.equal(r.body.ignore_eos, true);
      if (r.cancel && "afterFrames" in r.cancel) {
        assert.ok(r.stream);
        assert.ok(r.cancel.afterFrames >= 1 && r.cancel.afterFrames < max, "cut before the stream's end");
      }
      if (r.cancel && "afterMs" in r.cancel) {
        assert.ok(!r.stream);
        assert.ok(r.cancel.afterMs >= 1 && r.cancel.afterMs <= SOAK_MIX.replyCancelMaxMs);
      }
    }
  });
});
