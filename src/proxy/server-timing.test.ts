import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseServerTiming } from "./server-timing.js";

describe("Server-Timing from an engine", () => {
  it("reads queue, prefill and decode durations in ms", () => {
    assert.deepEqual(parseServerTiming("queue;dur=1.5, prefill;dur=20.0, decode;dur=300.2"), {
      queueMs: 1.5,
      prefillMs: 20,
      decodeMs: 300.2,
    });
  });

  it("takes dur among other parameters, across repeated headers, and ignores other metrics", () => {
    assert.deepEqual(parseServerTiming(['queue;desc="wait";dur=4', "cache;dur=9,prefill; dur=7 ;desc=x"]), {
      queueMs: 4,
      prefillMs: 7,
      decodeMs: null,
    });
  });

  it("gives nulls for what is missing or malformed, never guesses", () => {
    const none = { queueMs: null, prefillMs: null, decodeMs: null };
    assert.deepEqual(parseServerTiming(undefined), none);
    assert.deepEqual(parseServerTiming(""), none);
    assert.deepEqual(parseServerTiming("queue, prefill;desc=1, decode;dur=abc"), none);
    assert.deepEqual(parseServerTiming("decode;dur=12"), { ...none, decodeMs: 12 });
  });
});
