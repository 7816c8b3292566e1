import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { parseDateTime, parseTokenCountsCsv } from "./token-counts-csv.js";
import { formatTrace, parseTraceLines } from "./trace.js";

const fixture = (name: string) =>
  readFileSync(new URL(`../../../src/testing/fixtures/traces/${name}`, import.meta.url), "utf8");

describe("Azure date-times", () => {
  it("keep all 7 fractional digits", () => {
    const a = parseDateTime("2023-11-16 18:15:46.6805900")!;
    const b = parseDateTime("2023-11-16 18:15:46.6805901")!;
    assert.equal(a.sec, Date.UTC(2023, 10, 16, 18, 15, 46) / 1000);
    assert.ok(Math.abs(a.fracMs - 680.59) < 1e-9, `${a.fracMs}`);
    assert.ok(Math.abs(b.fracMs - a.fracMs - 0.0001) < 1e-9, "100 ns apart");
  });

  it("take a T, fewer digits, none, Z and offsets; refuse what is not one", () => {
    assert.deepEqual(parseDateTime("2023-11-16T18:15:46.5"), {
      sec: Date.UTC(2023, 10, 16, 18, 15, 46) / 1000,
      fracMs: 500,
    });
    assert.deepEqual(parseDateTime("2023-11-16 18:15:46"), {
      sec: Date.UTC(2023, 10, 16, 18, 15, 46) / 1000,
      fracMs: 0,
    });
    assert.equal(parseDateTime("2023-11-16 18:15:46Z")!.sec, parseDateTime("2023-11-16 18:15:46")!.sec);
    assert.equal(parseDateTime("2023-11-16 20:15:46+02:00")!.sec, parseDateTime("2023-11-16 18:15:46")!.sec);
    assert.equal(parseDateTime("2023-11-16 16:15:46-0200")!.sec, parseDateTime("2023-11-16 18:15:46")!.sec);
    for (const bad of [
      "1700000000",
      "2023-13-01 00:00:00",
      "2023-11-16 24:00:00",
      "2023-11-16",
      "yesterday",
    ]) {
      assert.equal(parseDateTime(bad), null, bad);
    }
  });
});

describe("a CSV of arrival time, context tokens, generated tokens", () => {
  it("the Azure shape: ms from the first row, 7 fractional digits kept, at least 1 output token", () => {
    const reqs = parseTokenCountsCsv(fixture("azure-sample.csv"), "azure.csv");
    assert.deepEqual(
      reqs.map((r) => [r.id, r.t_ms, r.input_tokens, r.max_tokens]),
      [
        ["r2", 0, 374, 44],
        ["r3", 4314.579, 396, 109],
        ["r4", 4319.41, 879, 1],
        ["r5", 14442.8667, 1632, 21],
      ],
    );
    assert.deepEqual(reqs[0], {
      t_ms: 0,
      id: "r2",
      tenant: "default",
      task: null,
      request_class: "interactive",
      input_tokens: 374,
      lang: "en",
      max_tokens: 44,
      stream: true,
    });
  });

  it("numeric times take their unit from the column name; headers match in any case; other columns are ignored", () => {
    const reqs = parseTokenCountsCsv(fixture("arrivals-seconds.csv"), "s.csv");
    assert.deepEqual(
      reqs.map((r) => [r.id, r.t_ms, r.input_tokens, r.max_tokens]),
      [
        ["r2", 0, 100, 10],
        ["r4", 500, 300, 1],
        ["r3", 1750, 220, 5],
      ],
    );
    for (const [name, ms] of [
      ["timestamp_ms", 1250],
      ["ARRIVAL_TIME_MS", 1250],
      ["time (ms)", 1250],
      ["timestamp(s)", 1_250_000],
      ["arrival_time_seconds", 1_250_000],
    ] as const) {
      const [, r] = parseTokenCountsCsv(`${name},ContextTokens,GeneratedTokens\n0,1,1\n1250,2,2\n`);
      assert.equal(r!.t_ms, ms, name);
    }
    // Epoch seconds: relative to the earliest row.
    const epoch = parseTokenCountsCsv(
      "timestamp_s,input_tokens,output_tokens\n1700000001.25,5,5\n1700000000,4,4\n",
    );
    assert.deepEqual(
      epoch.map((r) => [r.id, r.t_ms]),
      [
        ["r3", 0],
        ["r2", 1250],
      ],
    );
  });

  it("refuses a bare numeric time column as ambiguous, naming the columns that would settle it", () => {
    assert.throws(
      () => parseTokenCountsCsv("arrival_time,ContextTokens,GeneratedTokens\n1.5,10,10\n", "t.csv"),
      /^Error: t\.csv:2: arrival_time: "1\.5" is a number but the column name gives no unit: name it arrival_time_s \(seconds\) or arrival_time_ms \(ms\)$/,
    );
  });

  it("refuses a bad row with file:line and the column at fault", () => {
    const head = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n";
    const cases: [string, RegExp][] = [
      [
        "2023-11-16 18:15:4x,374,44",
        /^Error: t\.csv:3: TIMESTAMP: expected a date-time like 2023-11-16 18:15:46\.6805900, got "2023-11-16 18:15:4x"$/,
      ],
      ["2023-11-16 18:15:47,-3,44", /^Error: t\.csv:3: ContextTokens: expected an integer ≥ 0, got "-3"$/],
      ["2023-11-16 18:15:47,12.5,44", /^Error: t\.csv:3: ContextTokens:/],
      [
        "2023-11-16 18:15:47,374,many",
        /^Error: t\.csv:3: GeneratedTokens: expected an integer ≥ 0, got "many"$/,
      ],
      ["2023-11-16 18:15:47,374", /^Error: t\.csv:3: GeneratedTokens: missing value$/],
      [",374,44", /^Error: t\.csv:3: TIMESTAMP: missing value$/],
    ];
    for (const [row, message] of cases) {
      assert.throws(() => parseTokenCountsCsv(`${head}${row}\n`, "t.csv"), message, row);
    }
    assert.throws(
      () => parseTokenCountsCsv("timestamp_ms,ContextTokens,GeneratedTokens\nsoon,1,1\n", "t.csv"),
      /^Error: t\.csv:2: timestamp_ms: expected a number, got "soon"$/,
    );
  });

  it("refuses a header without the three columns, and an empty file", () => {
    assert.throws(
      () => parseTokenCountsCsv("when,ContextTokens,GeneratedTokens\n", "t.csv"),
      /^Error: t\.csv:1: header: no arrival-time column/,
    );
    assert.throws(
      () => parseTokenCountsCsv("TIMESTAMP,Tokens,GeneratedTokens\n", "t.csv"),
      /^Error: t\.csv:1: header: no context-token column/,
    );
    assert.throws(
      () => parseTokenCountsCsv("TIMESTAMP,ContextTokens\n", "t.csv"),
      /^Error: t\.csv:1: header: no generated-token column/,
    );
    assert.throws(() => parseTokenCountsCsv("\n\n", "t.csv"), /^Error: t\.csv: empty/);
  });

  it("reads quoted cells, CRLF line ends, a byte-order mark and blank lines", () => {
    const text =
      '\uFEFF"TIMESTAMP","ContextTokens","GeneratedTokens","note"\r\n"2023-11-16 18:15:46.1",10,2,"a, ""quoted"" note"\r\n\r\n2023-11-16 18:15:47.1,20,3,x\r\n';
    assert.deepEqual(
      parseTokenCountsCsv(text).map((r) => [r.id, r.t_ms, r.input_tokens, r.max_tokens]),
      [
        ["r2", 0, 10, 2],
        ["r4", 1000, 20, 3],
      ],
    );
  });

  it("round-trips through the native format", () => {
    const reqs = parseTokenCountsCsv(fixture("azure-sample.csv"), "azure.csv");
    assert.equal(formatTrace(parseTraceLines(formatTrace(reqs))), formatTrace(reqs));
  });
});
