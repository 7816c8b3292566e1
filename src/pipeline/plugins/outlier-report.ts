// What an attempt showed of its endpoint's health, for passive health and outlier ejection: an answer is
// a success (an engine's 4xx too: the caller's fault), a reply broken mid-stream a reset, a deadline a
// timeout, a 429/503 backpressure (full, not broken: skipped for as long as it asked, counted against
// nothing); a client gone or an adapter that would not load says nothing of the engine, but ends a
// probe's slot.

import type { HookFactory } from "./hook-factory.js";

export const outlierReport: HookFactory = () => ({
  name: "outlier-report",
  attemptEnd(a, end) {
    const health = a.endpoint.health;
    switch (end.kind) {
      case "answered":
        if (end.brokenMidStream) health.reportFailure("reset");
        else health.reportSuccess();
        return;
      case "cancelled":
      case "adapter_failed":
        health.reportAbandoned();
        return;
      case "timed_out":
        health.reportFailure("timeout");
        return;
      case "backpressure":
        health.reportBackpressure(end.retryAfterMs);
        return;
      case "failed":
        health.reportFailure(end.failure);
        return;
    }
  },
});
