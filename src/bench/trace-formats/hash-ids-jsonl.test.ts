import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { makeEngineConfig } from "../../sim/engine-config.js";
import { runVirtual } from "../virtual/virtual-fleet.js";
import { roundRobin } from "../virtual/virtual-policies.js";
import { parseHashIdsJsonl } from "./hash-ids-jsonl.js";
import { formatTrace, parseTraceLines, type TraceRequest } from "./trace.js";

const SAMPLE = "src/testing/fixtures/traces/mooncake-sample.jsonl";
const sample = () => readFileSync(new URL(`../../../${SAMPLE}`, import.meta.url), "utf8");

describe("a hash-ids JSONL trace (Mooncake's)", () => {
  it("maps each line to a request, ignores unknown fields and sorts by arrival", () => {
    const reqs = parseHashIdsJsonl(sample(), SAMPLE);
    assert.deepEqual(
      reqs.map((r) => [r.id, r.t_ms, r.input_tokens, r.max_tokens, r.hash_ids]),
      [
        ["r1", 0, 1100, 12, [0, 1, 2]],
        ["r2", 0, 1300, 1, [0, 1, 3]], // output_length 0: max_tokens is at least 1
        ["r4", 1500, 512, 7, [0]],
        ["r3", 2052, 655, 52, [4, 5]], // its session_id is not ours to read
      ],
    );
    assert.deepEqual(reqs[0], {
      t_ms: 0,
      id: "r1",
      tenant: "default",
      task: null,
      request_class: "interactive",
      input_tokens: 1100,
      lang: "en",
      max_tokens: 12,
      stream: true,
      hash_ids: [0, 1, 2],
      hash_block_tokens: 512,
    });
  });

  it("takes the block size as an argument", () => {
    const [r] = parseHashIdsJsonl(
      '{"timestamp": 3, "input_length": 40, "output_length": 2, "hash_ids": [7, 8, 9]}',
      "t",
      16,
    );
    assert.equal(r!.hash_block_tokens, 16);
    assert.throws(() => parseHashIdsJsonl("", "t", 0), /block tokens: expected an integer ≥ 1/);
  });

  it("a line without hash_ids is a request that shares nothing", () => {
    const [r] = parseHashIdsJsonl('{"timestamp": 0, "input_length": 40, "output_length": 2}');
    assert.equal(r!.hash_ids, undefined);
    assert.equal(r!.input_tokens, 40);
  });

  it("refuses a bad line with file:line and the field at fault", () => {
    const good = '{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}';
    const cases: [string, RegExp][] = [
      ["{not json", /^Error: t\.jsonl:2: not JSON/],
      ["[1, 2]", /^Error: t\.jsonl:2: expected a JSON object$/],
      [
        '{"input_length": 10, "output_length": 2}',
        /^Error: t\.jsonl:2: timestamp: expected a number of ms ≥ 0$/,
      ],
      ['{"timestamp": -1, "input_length": 10, "output_length": 2}', /^Error: t\.jsonl:2: timestamp:/],
      ['{"timestamp": "0", "input_length": 10, "output_length": 2}', /^Error: t\.jsonl:2: timestamp:/],
      [
        '{"timestamp": 0, "input_length": 10.5, "output_length": 2}',
        /^Error: t\.jsonl:2: input_length: expected an integer ≥ 0$/,
      ],
      ['{"timestamp": 0, "output_length": 2}', /^Error: t\.jsonl:2: input_length:/],
      ['{"timestamp": 0, "input_length": 10, "output_length": -2}', /^Error: t\.jsonl:2: output_length:/],
      [
        '{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": "1,2"}',
        /^Error: t\.jsonl:2: hash_ids: expected an array of integers$/,
      ],
      [
        '{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1, "2"]}',
        /^Error: t\.jsonl:2: hash_ids:/,
      ],
      [
        '{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1.5]}',
        /^Error: t\.jsonl:2: hash_ids:/,
      ],
    ];
    for (const [line, message] of cases) {
      assert.throws(() => parseHashIdsJsonl(`${good}\n${line}\n`, "t.jsonl"), message, line);
    }
  });

  it("round-trips through the native format", () => {
    const reqs = parseHashIdsJsonl(sample(), SAMPLE);
    const again = parseTraceLines(formatTrace(reqs), "native.jsonl");
    assert.deepEqual(again.map(defined), reqs.map(defined));
    assert.equal(formatTrace(again), formatTrace(reqs));
  });

  it("means the same in the virtual fleet: shared leading ids hit the prefix cache, other ids do not", () => {
    const h100 = makeEngineConfig("h100-llama8b", "m");
    const line = (t: number, ids: number[]) =>
      JSON.stringify({ timestamp: t, input_length: ids.length * 512, output_length: 4, hash_ids: ids });
    const ids = [1, 2, 3, 4, 5, 6, 7, 8];
    const ttft = (second: number[]) => {
      const trace = parseHashIdsJsonl(`${line(0, ids)}\n${line(1000, second)}\n`);
      const [a, b] = runVirtual(trace, h100, 1, roundRobin());
      return { first: a!.firstTokenMs, second: b!.firstTokenMs - 1000 };
    };
    const same = ttft(ids);
    const sevenOfEight = ttft([1, 2, 3, 4, 5, 6, 7, 99]);
    const none = ttft([11, 12, 13, 14, 15, 16, 17, 18]);
    assert.ok(same.second < same.first / 4, `all shared: ${same.second} against ${same.first}`);
    assert.ok(
      sevenOfEight.second > same.second && sevenOfEight.second < same.first / 2,
      "seven blocks shared",
    );
    assert.ok(Math.abs(none.second - none.first) < none.first * 0.05, `nothing shared: ${none.second}`);
  });
});

/** The request without its undefined fields, as JSON carries it. */
function defined(r: TraceRequest): Record<string, unknown> {
  return Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined));
}
