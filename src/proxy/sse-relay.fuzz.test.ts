// Fuzzes the SSE relay with garbage (fast-check): random bytes mixed with pieces of the event-stream
// grammar and of vLLM's frames — line ends of every kind, `data:`, [DONE], usage and error objects with
// odd values, invalid UTF-8 — cut into random chunks. sse-relay.property.test.ts checks well-formed
// streams against eventsource-parser; this one checks what must hold for any bytes at all: the relay
// never throws, passes every byte on (keepUsageFrame) or only drops whole frames (the usage frame),
// reads the same whatever the chunking, and reports usage only as non-negative whole numbers.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { SseRelay } from "./sse-relay.js";

const COUNTS = ["3", "0", "-5", "1.5", '"12"', "null", "[1]", "{}", "1e999", "true"];

const PIECES = [
  "data:",
  "data: ",
  "data",
  "dat",
  ":",
  ": ping",
  "event: x",
  "id: 1",
  "\n",
  "\r",
  "\r\n",
  "\n\n",
  "\r\n\r\n",
  "\r\r",
  " ",
  "\t",
  "{",
  "}",
  "[",
  "]",
  '"',
  "\\",
  ",",
  "[DONE]",
  "\uFEFF",
  '"usage"',
  '"usage":',
  '"usage": {',
  '"choices":[]',
  '"choices": [ ]',
  '"content":"x"',
  '"text": "y"',
  '"error"',
  '{"error":{"message":"boom","code":500}}',
  '{"error":null}',
  '{"choices":[{"delta":{"content":"Hel"}}]}',
  '{"choices":[{"text":"lo"}],"usage":null}',
  ...COUNTS.map((n) => `{"choices":[],"usage":{"prompt_tokens":${n},"completion_tokens":2}}`),
  ...COUNTS.map((n) => `{"choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": ${n}}}`),
  '{"choices":[],"usage":{"prompt_tokens":4,"prompt_tokens_details":{"cached_tokens":-1}}}',
  '{"choices":[],"usage":{',
];

const piece = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...PIECES).map((s) => Buffer.from(s)) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 16 }).map((a) => Buffer.from(a)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom([0xff], [0xc3], [0xed, 0xa0, 0x80], [0x80, 0x80]).map((b) => Buffer.from(b)),
  },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 8 }).map((s) => Buffer.from(s)) },
);

const eol = fc.constantFrom("\n", "\r\n", "\r", "").map((s) => Buffer.from(s));

/** A line as an engine (or a broken one) might write it: a field name, a value of pieces, a line end. */
const line = fc
  .tuple(
    fc.constantFrom("data:", "data: ", "data", ":", "event: ", "id:", ""),
    fc.array(piece, { maxLength: 3 }),
    eol,
  )
  .map(([field, value, end]) => Buffer.concat([Buffer.from(field), ...value, end]));

/** Bytes from pieces strung at random, or from lines grouped into events, each closed by a blank line (mostly). */
const garbage: fc.Arbitrary<Buffer> = fc.oneof(
  fc.array(piece, { maxLength: 60 }).map((parts) => Buffer.concat(parts)),
  fc
    .array(fc.tuple(fc.array(line, { minLength: 1, maxLength: 3 }), eol), { maxLength: 8 })
    .map((events) => Buffer.concat(events.flatMap(([lines, end]) => [...lines, end]))),
);

/** Cut points into a buffer of any length: the chunking is chosen after the bytes. */
const cuts = fc.array(fc.nat(), { maxLength: 12 });

function chunked(bytes: Buffer, at: number[]): Buffer[] {
  const points = [...new Set(at.map((n) => n % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const p of points) {
    out.push(bytes.subarray(from, p));
    from = p;
  }
  out.push(bytes.subarray(from));
  return out;
}

function relay(keep: boolean, chunks: Buffer[]) {
  const r = new SseRelay(keep);
  const out = chunks.map((c) => r.push(c));
  out.push(r.rest());
  return { r, bytes: Buffer.concat(out) };
}

/** What a relay read, to compare two chunkings of the same bytes. */
const reading = (r: SseRelay) => ({
  frames: r.frames,
  usage: r.usage,
  sawDone: r.sawDone,
  upstreamError: r.upstreamError,
  content: !Number.isNaN(r.firstContentAt),
});

/** Whether `sub` is `whole` with some ranges of bytes left out (in order). */
function isSubsequence(sub: Buffer, whole: Buffer): boolean {
  let j = 0;
  for (let i = 0; i < whole.length && j < sub.length; i++) if (whole[i] === sub[j]) j++;
  return j === sub.length;
}

const isCount = (v: unknown) =>
  v === undefined || v === null || (Number.isSafeInteger(v) && (v as number) >= 0);

const RUNS = { numRuns: 800, seed: 0x12f0223, includeErrorInReport: true };

describe("SSE relay on garbage", () => {
  it("passes every byte on, whatever the chunking, when it keeps the usage frame", () => {
    fc.assert(
      fc.property(garbage, cuts, (bytes, at) => {
        const whole = relay(true, [bytes]);
        const split = relay(true, chunked(bytes, at));
        assert.ok(whole.bytes.equals(bytes), "one chunk: the same bytes out");
        assert.ok(split.bytes.equals(bytes), "any chunks: the same bytes out");
        assert.deepEqual(reading(split.r), reading(whole.r), "the same reading whatever the chunking");
      }),
      RUNS,
    );
  });

  it("without the usage frame, only leaves bytes out, only from a stream with a usage key, whatever the chunking", () => {
    let dropped = 0;
    fc.assert(
      fc.property(garbage, cuts, (bytes, at) => {
        const whole = relay(false, [bytes]);
        const split = relay(false, chunked(bytes, at));
        assert.ok(split.bytes.equals(whole.bytes), "the same bytes out whatever the chunking");
        assert.deepEqual(reading(split.r), reading(whole.r));
        assert.ok(isSubsequence(whole.bytes, bytes), "only bytes left out, none added or moved");
        if (!bytes.includes('usage"')) assert.ok(whole.bytes.equals(bytes), "no usage key: nothing dropped");
        if (!whole.bytes.equals(bytes)) {
          assert.ok(whole.r.frames > 0, "a drop is a dispatched frame");
          dropped++;
        }
      }),
      { ...RUNS, seed: RUNS.seed + 1 },
    );
    assert.ok(dropped > 10, `the garbage held usage frames to drop (${dropped} runs)`);
  });

  it("reports usage only as non-negative whole numbers, or not at all", () => {
    let read = 0;
    fc.assert(
      fc.property(garbage, cuts, fc.boolean(), (bytes, at, keep) => {
        const { usage } = relay(keep, chunked(bytes, at)).r;
        if (usage === null) return;
        read++;
        assert.ok(isCount(usage.prompt_tokens), `prompt_tokens ${JSON.stringify(usage)}`);
        assert.ok(isCount(usage.completion_tokens), `completion_tokens ${JSON.stringify(usage)}`);
        assert.ok(
          isCount(usage.prompt_tokens_details?.cached_tokens),
          `cached_tokens ${JSON.stringify(usage)}`,
        );
      }),
      { ...RUNS, seed: RUNS.seed + 2 },
    );
    assert.ok(read > 10, `the garbage held readable usage frames (${read} runs)`);
  });
});
