// Pins the scrape parser on real-shaped vLLM/SGLang pages, odd-but-legal lines, malformed lines,
// the round trip from MetricsRegistry, and PromQL's histogram_quantile arithmetic.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { MetricsRegistry } from "./metrics.js";
import {
  histogramBuckets,
  histogramQuantile,
  parsePrometheusText,
  type Sample,
  subtractBuckets,
} from "./prom-parse.js";

function fixture(name: string): string {
  // Tests run from dist/telemetry/; fixtures are not copied by tsc, so read them from src.
  return readFileSync(new URL(`../../src/telemetry/fixtures/${name}`, import.meta.url), "utf8");
}

const MODEL = "meta-llama/Llama-3.1-8B-Instruct";
const INF = Number.POSITIVE_INFINITY;

function near(actual: number, expected: number): void {
  assert.ok(Math.abs(actual - expected) < 1e-12, `${actual} should be ${expected}`);
}

function only(m: Map<string, Sample[]>, name: string): Sample {
  const s = m.get(name);
  assert.equal(s?.length, 1, `${name} should have one sample`);
  return s![0]!;
}

describe("parsePrometheusText on a vLLM V1 page", () => {
  const page = fixture("vllm-v1.metrics.txt");

  it("reads every sample with no malformed lines", () => {
    const m = parsePrometheusText(page);
    assert.equal(m.malformed, 0);
    const sampleLines = page.split("\n").filter((l) => l !== "" && !l.startsWith("#")).length;
    assert.equal(
      [...m.values()].reduce((n, s) => n + s.length, 0),
      sampleLines,
    );
  });

  it("reads the gauges a router uses, with model_name and engine labels", () => {
    const m = parsePrometheusText(page);
    assert.deepEqual(only(m, "vllm:num_requests_running"), {
      labels: { engine: "0", model_name: MODEL },
      value: 23,
    });
    assert.equal(only(m, "vllm:num_requests_waiting").value, 2);
    assert.equal(only(m, "vllm:kv_cache_usage_perc").value, 0.650934);
    assert.equal(only(m, "vllm:prompt_tokens_total").value, 3916169);
    assert.equal(only(m, "vllm:estimated_flops_per_gpu_total").value, 1.2345678e17);
  });

  it("reads info gauges whose labels carry the data", () => {
    const m = parsePrometheusText(page);
    const cache = only(m, "vllm:cache_config_info");
    assert.equal(cache.labels.block_size, "16");
    assert.equal(cache.labels.num_gpu_blocks, "29205");
    assert.equal(cache.value, 1);
    assert.deepEqual(only(m, "vllm:lora_requests_info"), {
      labels: { max_lora: "1", running_lora_adapters: "a,b", waiting_lora_adapters: "" },
      value: 1.7e9,
    });
  });

  it("reads a TTFT histogram whose P95 histogramQuantile interpolates inside the 0.25–0.5 bucket", () => {
    const m = parsePrometheusText(page);
    const buckets = histogramBuckets(m.get("vllm:time_to_first_token_seconds_bucket"), { engine: "0" });
    assert.equal(buckets.length, 23);
    assert.deepEqual(buckets.at(-1), { le: INF, count: 4000 });
    assert.equal(only(m, "vllm:time_to_first_token_seconds_count").value, 4000);
    // Fixture: 3621 observations <= 0.25 s, 3968 <= 0.5 s; rank 0.95 * 4000 = 3800.
    near(histogramQuantile(buckets, 0.95), 0.25 + 0.25 * ((3800 - 3621) / (3968 - 3621)));
  });

  it("with `only`, keeps just the named samples", () => {
    const want = new Set(["vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "vllm:not_on_this_page"]);
    const m = parsePrometheusText(page, { only: want });
    assert.deepEqual([...m.keys()].sort(), ["vllm:kv_cache_usage_perc", "vllm:num_requests_waiting"]);
    const byFn = parsePrometheusText(page, { only: (n) => n.startsWith("vllm:request_params_n_") });
    assert.deepEqual([...byFn.keys()].sort(), [
      "vllm:request_params_n_bucket",
      "vllm:request_params_n_count",
      "vllm:request_params_n_created",
      "vllm:request_params_n_sum",
    ]);
  });
});

describe("parsePrometheusText on an SGLang page", () => {
  it("reads scheduler gauges and tokenizer counters", () => {
    const m = parsePrometheusText(fixture("sglang.metrics.txt"));
    assert.equal(m.malformed, 0);
    assert.deepEqual(only(m, "sglang:num_queue_reqs"), {
      labels: { engine_type: "unified", model_name: "Qwen/Qwen2.5-7B-Instruct", pp_rank: "0", tp_rank: "0" },
      value: 4,
    });
    assert.equal(only(m, "sglang:token_usage").value, 0.36);
    assert.equal(only(m, "sglang:max_total_num_tokens").value, 133928);
    assert.equal(only(m, "sglang:prompt_tokens_total").value, 1.695457e6);
    const ttft = histogramBuckets(m.get("sglang:time_to_first_token_seconds_bucket"));
    assert.deepEqual(ttft.at(-1), { le: INF, count: 2500 });
  });
});

describe("parsePrometheusText on legal edge cases", () => {
  it("unescapes label values and keeps commas and braces inside them", () => {
    const m = parsePrometheusText('m{a="x\\"y",b="back\\\\slash",c="two\\nlines",d="1,2}3",e=""} 1\n');
    assert.deepEqual(only(m, "m").labels, { a: 'x"y', b: "back\\slash", c: "two\nlines", d: "1,2}3", e: "" });
  });

  it("reads special and scientific values, timestamps, CRLF, blanks and a trailing comma", () => {
    const text = [
      "# HELP a:b help with { and }",
      "# TYPE a:b gauge",
      "",
      "a:b NaN",
      "c +Inf 1700000000000",
      "d -Inf",
      'e{x="1",} 1.5e-05   ',
      '  f{ x = "1" , y="2" }\t-2.5E+3\t-5',
      "g{} 0",
      "h inf",
      "",
    ].join("\r\n");
    const m = parsePrometheusText(text);
    assert.equal(m.malformed, 0);
    assert.ok(Number.isNaN(only(m, "a:b").value));
    assert.equal(only(m, "c").value, INF);
    assert.equal(only(m, "d").value, -INF);
    assert.deepEqual(only(m, "e"), { labels: { x: "1" }, value: 1.5e-5 });
    assert.deepEqual(only(m, "f"), { labels: { x: "1", y: "2" }, value: -2500 });
    assert.deepEqual(only(m, "g"), { labels: {}, value: 0 });
    assert.equal(only(m, "h").value, INF);
  });

  it("reads Infinity in any case, as Go's ParseFloat does", () => {
    const m = parsePrometheusText("a Infinity\nb -infinity\nc +INFINITY\n");
    assert.equal(m.malformed, 0);
    assert.deepEqual(
      ["a", "b", "c"].map((n) => only(m, n).value),
      [INF, -INF, INF],
    );
  });

  it("keeps a __proto__ label as an ordinary label", () => {
    const m = parsePrometheusText('m{__proto__="x",constructor="y"} 1\n');
    assert.deepEqual(Object.entries(only(m, "m").labels), [
      ["__proto__", "x"],
      ["constructor", "y"],
    ]);
  });
});

describe("parsePrometheusText on malformed lines", () => {
  it("skips and counts each bad line, keeping the good ones around it", () => {
    const bad = [
      'bad1{a="unterminated} 1',
      'bad2{a="bad escape \\t"} 1',
      "bad3",
      "bad4 twelve",
      "bad5 1 notatimestamp",
      "bad6{a=unquoted} 1",
      'bad7{a="1",a="2"} 1',
      "9bad 1",
      "bad-9 1",
      "bad10 1 2 3",
      'bad11{a="1" b="2"} 1',
      'bad12{1a="x"} 1',
    ];
    const text = ["good_before 1", ...bad, "good_after 2"].join("\n");
    const m = parsePrometheusText(text);
    assert.equal(m.malformed, bad.length);
    assert.deepEqual([...m.keys()], ["good_before", "good_after"]);
  });

  it("refuses hex, binary and octal values, which the text format does not have (Number() reads them)", () => {
    const m = parsePrometheusText("a 0x1f\nb 0X10\nc 0b11\nd 0o7\ne 0x1p4\nf 1_000\nok 0\nok 0.5\nok 0e1\n");
    assert.equal(m.malformed, 6);
    assert.deepEqual(
      m.get("ok")!.map((s) => s.value),
      [0, 0.5, 0],
    );
    const buckets = parsePrometheusText('h_bucket{le="0x10"} 1\nh_bucket{le="+Inf"} 1\n').get("h_bucket")!;
    assert.deepEqual(histogramBuckets(buckets), [{ le: INF, count: 1 }], 'le="0x10" is not 16');
  });

  it("does not count lines that `only` skipped", () => {
    const m = parsePrometheusText('keep 1\nskip{a="unterminated} 1\n', { only: new Set(["keep"]) });
    assert.equal(m.malformed, 0);
    assert.equal(only(m, "keep").value, 1);
  });
});

describe("round trip from MetricsRegistry", () => {
  for (const pythonStyle of [false, true]) {
    it(`reads back exactly what expose() wrote (pythonStyle: ${pythonStyle})`, () => {
      const r = new MetricsRegistry({ pythonStyle });
      const values = [
        0,
        1,
        -3,
        0.1 + 0.2,
        1.5e-5,
        1e-7,
        1.7e9,
        1234567,
        2 ** 53,
        1e22,
        5e-324,
        INF,
        -INF,
        NaN,
      ];
      const g = r.gauge("vllm:edge", "x", ["i", "odd"]);
      values.forEach((v, i) => {
        g.labels(String(i), 'q"b\\n\nc,d}').set(v);
      });
      const c = r.counter("ai_gateway_requests_total", "x", ["pool", "task", "status"]);
      c.labels("chat", "summarize", "200").inc(41);
      const h = r.histogram(
        "vllm:time_to_first_token_seconds",
        "x",
        ["model_name", "engine"],
        [0.001, 0.5, 2560],
      );
      for (const v of [0.0005, 0.3, 0.31, 3000]) h.labels("m", "0").observe(v);

      const m = parsePrometheusText(r.expose());
      assert.equal(m.malformed, 0);
      assert.deepEqual(
        m.get("vllm:edge")!.map((s) => s.value),
        values,
      );
      for (const s of m.get("vllm:edge")!) assert.equal(s.labels.odd, 'q"b\\n\nc,d}');
      assert.deepEqual(m.get("ai_gateway_requests_total"), [
        { labels: { pool: "chat", task: "summarize", status: "200" }, value: 41 },
      ]);
      assert.deepEqual(histogramBuckets(m.get("vllm:time_to_first_token_seconds_bucket")), [
        { le: 0.001, count: 1 },
        { le: 0.5, count: 3 },
        { le: 2560, count: 3 },
        { le: INF, count: 4 },
      ]);
      assert.equal(only(m, "vllm:time_to_first_token_seconds_sum").value, 0.0005 + 0.3 + 0.31 + 3000);
      assert.equal(only(m, "vllm:time_to_first_token_seconds_count").value, 4);
    });
  }
});

describe("histogramQuantile (PromQL's bucketQuantile)", () => {
  const b = (pairs: [number, number][]) => pairs.map(([le, count]) => ({ le, count }));

  it("interpolates linearly inside the bucket, from 0 in the lowest one", () => {
    const h = b([
      [0.1, 50],
      [0.5, 90],
      [1, 100],
      [INF, 100],
    ]);
    assert.equal(histogramQuantile(h, 0.5), 0.1);
    assert.equal(histogramQuantile(h, 0.25), 0.05);
    near(histogramQuantile(h, 0.7), 0.1 + 0.4 * (20 / 40));
    near(histogramQuantile(h, 0.95), 0.75);
    assert.equal(histogramQuantile(h, 0), 0);
  });

  it("returns the second-highest bound when the rank falls into +Inf", () => {
    assert.equal(
      histogramQuantile(
        b([
          [1, 1],
          [2, 2],
          [INF, 10],
        ]),
        0.99,
      ),
      2,
    );
  });

  it("handles the special cases as PromQL does", () => {
    const h = b([
      [1, 1],
      [INF, 2],
    ]);
    assert.equal(histogramQuantile(h, -0.1), -INF);
    assert.equal(histogramQuantile(h, 1.1), INF);
    assert.ok(Number.isNaN(histogramQuantile(h, Number.NaN)));
    assert.ok(Number.isNaN(histogramQuantile([], 0.5)));
    assert.ok(Number.isNaN(histogramQuantile(b([[1, 5]]), 0.5)), "no +Inf bucket");
    assert.ok(Number.isNaN(histogramQuantile(b([[INF, 5]]), 0.5)), "fewer than two buckets");
    assert.ok(
      Number.isNaN(
        histogramQuantile(
          b([
            [1, 0],
            [INF, 0],
          ]),
          0.5,
        ),
      ),
      "no observations",
    );
    assert.equal(
      histogramQuantile(
        b([
          [-1, 5],
          [INF, 10],
        ]),
        0.2,
      ),
      -1,
      "a non-positive lowest bound is returned as is",
    );
  });

  it("sorts, merges equal bounds and forces monotonic counts", () => {
    const unordered = b([
      [INF, 10],
      [1, 4],
      [2, 3],
      [1, 1],
    ]);
    // Merged: 1→5, 2→max(3,5)=5, +Inf→10; rank 0.4*10=4 is inside (0,1].
    assert.equal(histogramQuantile(unordered, 0.4), 0.8);
  });
});

describe("subtractBuckets", () => {
  it("gives the observations between two scrapes, or the newer scrape after a reset", () => {
    const before = [
      { le: 1, count: 2 },
      { le: INF, count: 3 },
    ];
    const now = [
      { le: 1, count: 5 },
      { le: INF, count: 9 },
    ];
    assert.deepEqual(subtractBuckets(now, before), [
      { le: 1, count: 3 },
      { le: INF, count: 6 },
    ]);
    assert.deepEqual(subtractBuckets(before, now), before);
  });
});
