import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { predictionError } from "./prediction-error.js";

const line = (o: Record<string, unknown>) => ({ event: "inference.completed", trace_id: "x", ...o });

describe("prediction error", () => {
  it("takes P50 and P90 of |predicted − actual| over actual and in ms, over lines with both", () => {
    const log = [
      line({ predicted_ttft_ms: 110, ttft_ms: 100 }), // 10%, 10 ms
      line({ predicted_ttft_ms: 150, ttft_ms: 200 }), // 25%, 50 ms
      line({ predicted_ttft_ms: 60, ttft_ms: 50 }), // 20%, 10 ms
      line({ predicted_ttft_ms: 900, ttft_ms: 300 }), // 200%, 600 ms
      line({ ttft_ms: 80 }), // no prediction (a rejection, a router before the change)
      line({ predicted_ttft_ms: 40, ttft_ms: null }), // no first token
      { event: "queue.paused", predicted_ttft_ms: 1, ttft_ms: 2 }, // not a request's line
      line({ predicted_ttft_ms: 40, ttft_ms: 900, stream: false }), // a whole response, not a TTFT
    ];
    const e = predictionError(log);
    assert.equal(e.count, 4);
    assert.deepEqual(e.relative_pct, { p50: 20, p90: 200 });
    assert.deepEqual(e.absolute_ms, { p50: 10, p90: 600 });
  });

  it("also measures the part after the gateway queue, the queue's wait taken from both", () => {
    // Predicted from arrival: 200 ms waited, then 100 predicted against 100 that came (0%); the
    // second waited nothing, 100 predicted against 120 (16.7%).
    const e = predictionError([
      line({ predicted_ttft_ms: 300, ttft_ms: 300, gateway_queue_ms: 200 }),
      line({ predicted_ttft_ms: 100, ttft_ms: 120, gateway_queue_ms: 0 }),
    ]);
    assert.deepEqual(e.relative_pct, { p50: 0, p90: 16.7 });
    assert.deepEqual(e.after_queue.relative_pct, { p50: 0, p90: 16.7 });
    assert.deepEqual(e.after_queue.absolute_ms, { p50: 0, p90: 20 });
    const late = predictionError([line({ predicted_ttft_ms: 250, ttft_ms: 400, gateway_queue_ms: 200 })]);
    assert.deepEqual(late.after_queue.absolute_ms, { p50: 150, p90: 150 });
    assert.deepEqual(late.after_queue.relative_pct, { p50: 75, p90: 75 });
  });

  it("reports nothing, without failing, while no line has a prediction", () => {
    const e = predictionError([line({ ttft_ms: 80 }), line({ ttft_ms: 90, predicted_ttft_ms: "soon" })]);
    assert.equal(e.count, 0);
    assert.deepEqual(e.relative_pct, { p50: null, p90: null });
    assert.deepEqual(e.absolute_ms, { p50: null, p90: null });
    assert.deepEqual(e.after_queue.relative_pct, { p50: null, p90: null });
  });
});
