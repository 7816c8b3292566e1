import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { isTraceFile, parseTraceFile, readTraceFile, traceFormatOf } from "./read-trace.js";
import { formatTrace, parseTraceLines, type TraceRequest } from "./trace.js";

const fixture = (name: string) =>
  fileURLToPath(new URL(`../../../src/testing/fixtures/traces/${name}`, import.meta.url));

const NATIVE = '{"t_ms": 5, "id": "a", "tenant": "t", "input_tokens": 10, "max_tokens": 3}';
const MOONCAKE = '{"timestamp": 0, "input_length": 655, "output_length": 52, "hash_ids": [46, 47]}';

describe("picking a trace's format", () => {
  it("by extension, then by the first record", () => {
    assert.equal(traceFormatOf("azure.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"), "token-counts-csv");
    assert.equal(traceFormatOf("AZURE.CSV", ""), "token-counts-csv");
    assert.equal(traceFormatOf("m.jsonl", `${MOONCAKE}\n`), "hash-ids-jsonl");
    assert.equal(traceFormatOf("m.jsonl", `# a comment\n\n${MOONCAKE}\n`), "hash-ids-jsonl");
    assert.equal(
      traceFormatOf("m.jsonl", '{"timestamp": 0, "input_length": 5, "output_length": 1}\n'),
      "hash-ids-jsonl",
    );
    assert.equal(traceFormatOf("t.jsonl", `${NATIVE}\n`), "native");
    // The native format may carry hash_ids too (an imported trace written back): t_ms tells it apart.
    const written = '{"t_ms": 0, "id": "r1", "input_tokens": 655, "max_tokens": 52, "hash_ids": [46, 47]}';
    assert.equal(traceFormatOf("t.jsonl", `${written}\n`), "native");
    assert.equal(traceFormatOf("t.jsonl", `${NATIVE}\n${MOONCAKE}\n`), "native");
    assert.equal(traceFormatOf("t.jsonl", "not json\n"), "native");
    assert.equal(traceFormatOf("t.jsonl", ""), "native");
  });

  it("tokengate bench takes .jsonl and .csv files for traces", () => {
    for (const name of ["trace.jsonl", "a/b/azure.csv", "X.CSV"]) assert.ok(isTraceFile(name), name);
    for (const name of ["shared-prefix", "trace.json", "csv"]) assert.ok(!isTraceFile(name), name);
  });

  it("reads each format with its own parser, its errors naming the file", () => {
    assert.equal(parseTraceFile("t.jsonl", `${NATIVE}\n`)[0]!.id, "a");
    assert.deepEqual(parseTraceFile("m.jsonl", `${MOONCAKE}\n`)[0]!.hash_ids, [46, 47]);
    assert.equal(parseTraceFile("m.jsonl", `${MOONCAKE}\n`, { blockTokens: 16 })[0]!.hash_block_tokens, 16);
    assert.throws(
      () => parseTraceFile("m.jsonl", `${MOONCAKE}\n{"timestamp": 1}\n`),
      /^Error: m\.jsonl:2: input_length:/,
    );
    assert.throws(() => parseTraceFile("t.jsonl", "not json\n"), /^Error: t\.jsonl:1: not JSON/);
    assert.throws(
      () => parseTraceFile("a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\nx,1,1\n"),
      /^Error: a\.csv:2: TIMESTAMP:/,
    );
  });

  it("reads the sample files, and an imported trace written back in the native format", () => {
    const imported = readTraceFile(fixture("mooncake-sample.jsonl"));
    assert.equal(imported.length, 4);
    assert.deepEqual(
      parseTraceFile("written.jsonl", formatTrace(imported)),
      parseTraceLines(formatTrace(imported)),
    );
    assert.equal(readTraceFile(fixture("azure-sample.csv")).length, 4);
    assert.equal(readTraceFile(fixture("arrivals-seconds.csv")).length, 3);
  });
});

describe("the native format's hash_ids", () => {
  it("round-trip with their block size, and default to none", () => {
    const line =
      '{"t_ms": 0, "input_tokens": 600, "max_tokens": 4, "hash_ids": [1, 2], "hash_block_tokens": 300}';
    const [r] = parseTraceLines(line);
    assert.deepEqual([r!.hash_ids, r!.hash_block_tokens], [[1, 2], 300]);
    const again = parseTraceLines(formatTrace([r!]));
    assert.deepEqual(again, [r]);
    const [plain] = parseTraceLines(NATIVE);
    assert.ok(!("hash_ids" in plain!) && !("hash_block_tokens" in plain!));
    assert.equal(formatTrace([plain as TraceRequest]).includes("hash"), false);
  });

  it("are refused when malformed or without input_tokens, with line and field", () => {
    const cases: [string, RegExp][] = [
      [
        '{"t_ms": 0, "input_tokens": 6, "max_tokens": 4, "hash_ids": [1, "x"]}',
        /^Error: t:1: hash_ids: expected an array of integers$/,
      ],
      ['{"t_ms": 0, "input_tokens": 6, "max_tokens": 4, "hash_ids": 3}', /^Error: t:1: hash_ids:/],
      [
        '{"t_ms": 0, "input_text": "hi", "max_tokens": 4, "hash_ids": [1]}',
        /^Error: t:1: hash_ids: give input_tokens/,
      ],
      [
        '{"t_ms": 0, "input_tokens": 6, "max_tokens": 4, "hash_ids": [1], "hash_block_tokens": 0}',
        /^Error: t:1: hash_block_tokens: expected an integer ≥ 1$/,
      ],
    ];
    for (const [line, message] of cases) assert.throws(() => parseTraceLines(line, "t"), message, line);
  });
});
