// Fuzzes the scrape path with fast-check: parsePrometheusText and readEngineMetrics on random text and on
// mutated metric pages. The seed corpus is what engines serve: the simulator's own /metrics (a SimReplica
// started here, after one request) and the prometheus_client fixtures for vLLM and SGLang. Nothing
// throws; samples are numbers with string labels; a reading holds numbers or null; a page with nothing
// of the dialect's on it reads all null; and a signal's value is what its lines say, by the text
// format's number syntax (Go's ParseFloat, as Prometheus reads it), or null — never a made-up figure.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import type { EngineDialect } from "../config/inference-pool.js";
import { makeEngineConfig } from "../sim/engine-config.js";
import { SimReplica } from "../sim/replica.js";
import { parsePrometheusText } from "../telemetry/prom-parse.js";
import { DIALECT_METRICS, type EngineReading, readEngineMetrics, sampleNames } from "./dialects.js";

const fixture = (name: string) =>
  readFileSync(new URL(`../../src/telemetry/fixtures/${name}`, import.meta.url), "utf8");

/** Seed pages by dialect; the simulator's is added once it has served a request. */
const SEEDS: { dialect: EngineDialect; page: string }[] = [
  { dialect: "vllm", page: fixture("vllm-v1.metrics.txt") },
  { dialect: "sglang", page: fixture("sglang.metrics.txt") },
];

/** Number-like text: what a broken engine (or a mutation) might print where a value goes. */
const numberish = fc.oneof(
  fc.constantFrom(
    "0",
    "3",
    "-3",
    "0.5",
    "1e3",
    "1E-3",
    ".5",
    "5.",
    "+2",
    "NaN",
    "nan",
    "+Inf",
    "-Inf",
    "inf",
    "Infinity",
    "-infinity",
    "0x10",
    "0X1f",
    "0b11",
    "0o7",
    "0x1p4",
    "1_000",
    "1e999",
    "--1",
    "1e",
    "e1",
    ".",
    "",
    "٣",
    "1,5",
  ),
  fc.string({ unit: fc.constantFrom(..."0123456789.eE+-xXbBoOpP_infatyINFATY"), minLength: 1, maxLength: 6 }),
);

/** The text format's float syntax as Prometheus reads it: Go's ParseFloat, without hex, `p` or `_`. */
function goFloat(s: string): number | undefined {
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return Number(s);
  const m = /^([+-]?)(inf|infinity)$/i.exec(s);
  if (m) return m[1] === "-" ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  if (/^[+-]?nan$/i.test(s)) return Number.NaN;
  return undefined;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?([ \t]+)(\S*)(.*)$/;

/** The page with the value of some sample lines (chosen by `picks`) replaced by `values`. */
function withValues(page: string, picks: number[], values: string[]): string {
  let n = 0;
  return page
    .split("\n")
    .map((line) => {
      const m = SAMPLE_LINE.exec(line);
      if (!m || line.startsWith("#")) return line;
      const pick = picks[n++ % picks.length]!;
      if (pick % 3 !== 0) return line;
      return `${m[1]}${m[2] ?? ""}${m[3]}${values[pick % values.length]}${m[5]}`;
    })
    .join("\n");
}

/**
 * A signal read the way the dialect documents it, by this reference: the first listed name with a
 * valid line wins; its values summed (or the largest, `max`), null when one is not finite.
 */
function expected(page: string, names: readonly string[], combine: "sum" | "max"): number | null {
  for (const name of names) {
    const values: number[] = [];
    for (const line of page.split("\n")) {
      const m = SAMPLE_LINE.exec(line);
      if (!m || m[1] !== name || m[5]!.trim() !== "") continue;
      const v = goFloat(m[4]!);
      if (v !== undefined) values.push(v);
    }
    if (values.length === 0) continue;
    if (values.some((v) => !Number.isFinite(v))) return null;
    return combine === "sum" ? values.reduce((a, b) => a + b, 0) : Math.max(...values);
  }
  return null;
}

function checkReading(r: EngineReading): void {
  for (const k of [
    "waiting",
    "running",
    "kvUsage",
    "prefixHits",
    "prefixQueries",
    "prefixHitRateGauge",
  ] as const) {
    const v = r[k];
    assert.ok(v === null || Number.isFinite(v), `${k} is a finite number or null, got ${v}`);
  }
  for (const k of ["blockSize", "numGpuBlocks"] as const) {
    const v = r[k];
    assert.ok(v === null || (Number.isInteger(v) && v >= 0), `${k} is a whole number or null, got ${v}`);
  }
  if (r.loras !== null) {
    assert.ok(
      r.loras.max === null || (Number.isInteger(r.loras.max) && r.loras.max >= 0),
      `max_lora ${r.loras.max}`,
    );
    assert.ok([...r.loras.running, ...r.loras.waiting].every((a) => typeof a === "string" && a !== ""));
  }
  if (r.ttftBuckets !== null) {
    for (const b of r.ttftBuckets) {
      assert.ok(typeof b.le === "number" && !Number.isNaN(b.le), `le ${b.le}`);
      assert.equal(typeof b.count, "number");
    }
    const les = r.ttftBuckets.map((b) => b.le);
    assert.deepEqual(
      les,
      [...les].sort((a, b) => a - b),
      "buckets sorted by le",
    );
  }
}

/** Random lines: metric-like, comment-like, HTML, JSON, control characters, long runs. */
const randomLine = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc
    .tuple(
      fc.constantFrom(
        "vllm:num_requests_waiting",
        "sglang:num_queue_reqs",
        "vllm:cache_config_info",
        "x",
        "vllm:",
      ),
      fc.constantFrom(
        "",
        "{",
        '{a="1"}',
        '{le="+Inf"}',
        '{a="\\q"}',
        '{a="1",a="2"}',
        '{__proto__="x"}',
        "{}",
      ),
      fc.constantFrom(" ", "\t", "", "  "),
      numberish,
      fc.constantFrom("", " 1700000000000", " x", " 1 2"),
    )
    .map((parts) => parts.join("")),
  fc.constantFrom(
    "# HELP x y",
    "# TYPE x gauge",
    "#",
    "<html><body>502 Bad Gateway</body></html>",
    '{"error":"x"}',
    "\r",
    "\u0000",
  ),
);

const RUNS = { seed: 0x12f0224, includeErrorInReport: true };

describe("metrics pages, fuzzed", () => {
  let sim: SimReplica;
  before(async () => {
    sim = new SimReplica({
      name: "fuzz-0",
      port: 0,
      engine: makeEngineConfig("instant", "m", { maxModelLen: 8192, loraModules: ["a"], maxLoras: 1 }),
      seed: 1,
    });
    await sim.start();
    await fetch(`${sim.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 3 }),
    }).then((r) => r.text());
    const page = await (await fetch(`${sim.url}/metrics`)).text();
    assert.ok(readEngineMetrics(page, "vllm").waiting !== null, "the simulator's page reads");
    SEEDS.push({ dialect: "vllm", page });
  });
  after(() => sim?.stop());

  it("never throws on random text, and a page with nothing of the dialect's reads all null", () => {
    fc.assert(
      fc.property(fc.array(randomLine, { maxLength: 30 }), fc.constantFrom("\n", "\r\n"), (lines, eol) => {
        const page = lines.join(eol);
        const parsed = parsePrometheusText(page);
        assert.ok(Number.isInteger(parsed.malformed) && parsed.malformed >= 0);
        for (const [name, samples] of parsed) {
          assert.match(name, /^[a-zA-Z_:][a-zA-Z0-9_:]*$/);
          for (const s of samples) {
            assert.equal(typeof s.value, "number");
            for (const v of Object.values(s.labels)) assert.equal(typeof v, "string");
          }
        }
        for (const dialect of ["vllm", "sglang"] as const) {
          const r = readEngineMetrics(page, dialect);
          checkReading(r);
          const names = sampleNames(dialect);
          if (![...names].some((n) => page.includes(n)))
            assert.ok(
              Object.values(r).every((v) => v === null),
              `all null: ${JSON.stringify(r)}`,
            );
        }
      }),
      { ...RUNS, numRuns: 500 },
    );
  });

  it("reads a seed page with values replaced by number-like text as the text format does, or null", () => {
    fc.assert(
      fc.property(
        fc.nat(),
        fc.array(fc.nat(), { minLength: 16, maxLength: 16 }),
        fc.array(numberish, { minLength: 1, maxLength: 6 }),
        (seed, picks, values) => {
          const { dialect, page: original } = SEEDS[seed % SEEDS.length]!;
          const page = withValues(original, picks, values);
          const r = readEngineMetrics(page, dialect);
          checkReading(r);
          const d = DIALECT_METRICS[dialect];
          assert.equal(
            r.waiting,
            expected(page, d.waiting, "sum"),
            `waiting, values ${JSON.stringify(values)}`,
          );
          assert.equal(
            r.running,
            expected(page, d.running, "sum"),
            `running, values ${JSON.stringify(values)}`,
          );
          assert.equal(
            r.kvUsage,
            expected(page, d.kvUsage, "max"),
            `kvUsage, values ${JSON.stringify(values)}`,
          );
        },
      ),
      { ...RUNS, seed: RUNS.seed + 1, numRuns: 300 },
    );
  });

  it("never throws on a seed page with lines cut, dropped, duplicated or mixed with garbage", () => {
    const edit = fc.record({
      line: fc.nat(),
      how: fc.constantFrom("cut", "drop", "dup", "insert"),
      at: fc.nat(),
      text: randomLine,
    });
    fc.assert(
      fc.property(fc.nat(), fc.array(edit, { minLength: 1, maxLength: 8 }), (seed, edits) => {
        const { dialect, page } = SEEDS[seed % SEEDS.length]!;
        const lines = page.split("\n");
        for (const e of edits) {
          const i = e.line % lines.length;
          if (e.how === "cut") lines[i] = lines[i]!.slice(0, e.at % (lines[i]!.length + 1));
          else if (e.how === "drop") lines.splice(i, 1);
          else if (e.how === "dup") lines.splice(i, 0, lines[i]!);
          else lines.splice(i, 0, e.text);
        }
        checkReading(readEngineMetrics(lines.join("\n"), dialect));
      }),
      { ...RUNS, seed: RUNS.seed + 2, numRuns: 200 },
    );
  });
});
