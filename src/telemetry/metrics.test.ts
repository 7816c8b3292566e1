// Pins the registry's exposition (byte-for-byte against prometheus_client in Python style) and its API rules.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { formatValue } from "./format.js";
import { MetricsError, MetricsRegistry } from "./metrics.js";
import { histogramQuantile } from "./prom-parse.js";

function fixture(name: string): string {
  // Tests run from dist/telemetry/; fixtures are not copied by tsc, so read them from src.
  return readFileSync(new URL(`../../src/telemetry/fixtures/${name}`, import.meta.url), "utf8");
}

function throwsCode(fn: () => unknown, code: string): void {
  assert.throws(fn, (e: unknown) => e instanceof MetricsError && e.code === code);
}

describe("MetricsRegistry exposition", () => {
  it("writes exactly what prometheus_client 0.16 writes for the same metrics, in python style", () => {
    // Mirrors fixtures/gen-edge-cases.py.
    const r = new MetricsRegistry({ pythonStyle: true });
    r.counter("tg_edge_requests_total", "Requests seen.\nSecond line with a \\ backslash.").inc(3);
    const lc = r.counter("tg_edge_labeled_total", "Labeled counter.", ["pool", "status"]);
    lc.labels("a\\b", 'say "hi"').inc(2.5);
    lc.labels("line\nbreak", "x,y=z").inc();
    lc.labels("", "ü").inc(0);
    r.gauge("tg_edge_unused", "Labeled family without children.", ["x"]);
    const g = r.gauge("tg_edge_values", "Number formatting.", ["case"]);
    const cases: [string, number][] = [
      ["zero", 0],
      ["neg_zero", -0],
      ["int", 42],
      ["million", 1234567],
      ["hundred_k", 123456],
      ["ten_billion", 1e10],
      ["small", 1.5e-5],
      ["ten_thousandth", 0.0001],
      ["neg_big", -1234567.5],
      ["e16", 1e16],
      ["unix", 1.7e9],
      ["point3", 0.1 + 0.2],
      ["nan", Number.NaN],
      ["inf", Number.POSITIVE_INFINITY],
      ["ninf", Number.NEGATIVE_INFINITY],
      ["two53", 2 ** 53],
      ["frac", 123.456],
      ["e_minus7", 1e-7],
      ["e22", 1e22],
      ["neg_e22", -1e22],
      ["denorm", 5e-324],
      ["neg_frac", -0.5],
    ];
    for (const [name, v] of cases) g.labels(name).set(v);
    r.gauge("tg_edge_gauge", "Unlabeled gauge.").set(7.25);
    const h = r.histogram("tg_edge_latency_seconds", "Unlabeled histogram.", [], [0.005, 0.01, 1, 2.5, 10]);
    for (const v of [0.001, 0.01, 0.5, 1, 3, 11, 100]) h.observe(v);
    const lh = r.histogram("tg_edge_tokens", "Labeled histogram.", ["model_name", "engine"], [1, 2, 5, 10]);
    for (const v of [1, 2, 3, 7, 50]) lh.labels("m", "0").observe(v);
    lh.labels("m", "1");

    assert.equal(r.expose(), fixture("prometheus-client-edge-cases.txt"));
  });

  it("writes plain style with JS numbers, labels in declared order and _sum before _count", () => {
    const r = new MetricsRegistry();
    r.counter("ai_gateway_requests_total", "Requests by outcome.", ["pool", "task", "status"])
      .labels("chat", "summarize", "200")
      .inc(2);
    r.gauge("ai_gateway_queue_depth", "Queued requests.").set(0.25);
    const h = r.histogram("ai_gateway_ttft_seconds", "TTFT.", ["pool"], [0.1, 1]);
    h.labels("chat").observe(0.1);
    h.labels("chat").observe(5);

    assert.equal(
      r.expose(),
      [
        "# HELP ai_gateway_requests_total Requests by outcome.",
        "# TYPE ai_gateway_requests_total counter",
        'ai_gateway_requests_total{pool="chat",task="summarize",status="200"} 2',
        "# HELP ai_gateway_queue_depth Queued requests.",
        "# TYPE ai_gateway_queue_depth gauge",
        "ai_gateway_queue_depth 0.25",
        "# HELP ai_gateway_ttft_seconds TTFT.",
        "# TYPE ai_gateway_ttft_seconds histogram",
        'ai_gateway_ttft_seconds_bucket{pool="chat",le="0.1"} 1',
        'ai_gateway_ttft_seconds_bucket{pool="chat",le="1"} 1',
        'ai_gateway_ttft_seconds_bucket{pool="chat",le="+Inf"} 2',
        'ai_gateway_ttft_seconds_sum{pool="chat"} 5.1',
        'ai_gateway_ttft_seconds_count{pool="chat"} 2',
        "",
      ].join("\n"),
    );
  });

  it("prints integers without exponent and specials as Prometheus spells them", () => {
    assert.equal(formatValue(1e21), "1000000000000000000000");
    assert.equal(formatValue(1.7e9), "1700000000");
    assert.equal(formatValue(1.5e-7), "1.5e-7");
    assert.equal(formatValue(Number.NaN), "NaN");
    assert.equal(formatValue(Number.POSITIVE_INFINITY), "+Inf");
    assert.equal(formatValue(Number.NEGATIVE_INFINITY), "-Inf");
  });

  it("emits vLLM names with colons unchanged", () => {
    const r = new MetricsRegistry({ pythonStyle: true });
    r.gauge("vllm:num_requests_running", "Running.", ["model_name", "engine"]).labels("x", "0").set(3);
    assert.match(r.expose(), /^vllm:num_requests_running\{engine="0",model_name="x"\} 3\.0$/m);
  });
});

describe("metric children", () => {
  it("returns the same cached child for the same label values", () => {
    const c = new MetricsRegistry().counter("c_total", "c", ["a", "b"]);
    const child = c.labels("x", "y");
    assert.equal(c.labels("x", "y"), child);
    assert.notEqual(c.labels("x", "z"), child);
    child.inc();
    c.labels("x", "y").inc(2);
    assert.equal(child.value, 3);
  });

  it("rejects the wrong number of label values, and direct use of a labelled metric", () => {
    const c = new MetricsRegistry().counter("c_total", "c", ["a", "b"]);
    throwsCode(() => c.labels("x"), "TG_METRICS_LABEL_COUNT");
    throwsCode(() => c.labels("x", "y", "z"), "TG_METRICS_LABEL_COUNT");
    throwsCode(() => c.inc(), "TG_METRICS_NEEDS_LABELS");
  });

  it("refuses to decrease a counter", () => {
    const c = new MetricsRegistry().counter("c_total", "c");
    throwsCode(() => c.inc(-1), "TG_METRICS_NEGATIVE_INC");
    throwsCode(() => c.inc(Number.NaN), "TG_METRICS_NEGATIVE_INC");
  });

  it("drops one child with remove, leaving its siblings", () => {
    const r = new MetricsRegistry();
    const g = r.gauge("endpoint_up", "up", ["pool", "endpoint"]);
    g.labels("p", "a").set(1);
    g.labels("p", "b").set(1);
    assert.equal(g.remove("p", "a"), true);
    assert.equal(g.remove("p", "a"), false);
    assert.equal(g.remove("q", "a"), false);
    const text = r.expose();
    assert.doesNotMatch(text, /endpoint="a"/);
    assert.match(text, /endpoint_up\{pool="p",endpoint="b"\} 1/);
    assert.equal(g.remove("p", "b"), true);
    g.labels("p", "a").set(2);
    assert.match(r.expose(), /endpoint_up\{pool="p",endpoint="a"\} 2/);
  });

  it("keeps label tuples apart even when their joined text would be equal", () => {
    const c = new MetricsRegistry().counter("c_total", "c", ["a", "b"]);
    assert.notEqual(c.labels("x\u0001y", "z"), c.labels("x", "y\u0001z"));
    assert.notEqual(c.labels("xy", ""), c.labels("x", "y"));
  });
});

describe("registration rules", () => {
  it("validates metric and label names, reserves le and rejects duplicates", () => {
    const r = new MetricsRegistry();
    throwsCode(() => r.counter("1bad", "x"), "TG_METRICS_INVALID_NAME");
    throwsCode(() => r.counter("has-dash", "x"), "TG_METRICS_INVALID_NAME");
    throwsCode(() => r.gauge("g", "x", ["a:b"]), "TG_METRICS_INVALID_LABEL_NAME");
    throwsCode(() => r.gauge("g", "x", ["__reserved"]), "TG_METRICS_INVALID_LABEL_NAME");
    throwsCode(() => r.gauge("g", "x", ["a", "a"]), "TG_METRICS_INVALID_LABEL_NAME");
    throwsCode(() => r.histogram("h", "x", ["le"]), "TG_METRICS_INVALID_LABEL_NAME");
    r.gauge("g", "x");
    throwsCode(() => r.counter("g", "x"), "TG_METRICS_DUPLICATE");
  });

  it("accepts strictly increasing finite buckets with an optional trailing +Inf", () => {
    const r = new MetricsRegistry();
    assert.deepEqual(r.histogram("h1", "x", [], [1, 2, Number.POSITIVE_INFINITY]).buckets, [1, 2]);
    throwsCode(() => r.histogram("h2", "x", [], [2, 1]), "TG_METRICS_INVALID_BUCKETS");
    throwsCode(() => r.histogram("h3", "x", [], [1, 1]), "TG_METRICS_INVALID_BUCKETS");
    throwsCode(() => r.histogram("h4", "x", [], []), "TG_METRICS_INVALID_BUCKETS");
    throwsCode(() => r.histogram("h5", "x", [], [1, Number.NaN]), "TG_METRICS_INVALID_BUCKETS");
  });
});

describe("histogram", () => {
  it("counts a value equal to a bound in that bucket, and NaN in +Inf", () => {
    const h = new MetricsRegistry().histogram("h", "x", [], [1, 2]);
    for (const v of [1, 1.5, 2, 2.0001, Number.NaN]) h.observe(v);
    const child = h.labels();
    assert.deepEqual([...child.counts], [1, 2, 2]);
    assert.deepEqual(child.buckets(), [
      { le: 1, count: 1 },
      { le: 2, count: 3 },
      { le: Number.POSITIVE_INFINITY, count: 5 },
    ]);
    assert.equal(child.count, 5);
  });

  it("gives buckets that histogramQuantile reads", () => {
    const child = new MetricsRegistry().histogram("ttft", "x", ["pool"], [0.1, 0.2, 0.4]).labels("p");
    for (let i = 0; i < 100; i++) child.observe(i < 50 ? 0.05 : 0.15);
    const p75 = histogramQuantile(child.buckets(), 0.75);
    assert.ok(Math.abs(p75 - 0.15) < 1e-12, `p75 ${p75}`);
  });
});

describe("collection hooks and reset", () => {
  it("runs gauge.collect and registry.onCollect before every exposition, until unsubscribed", () => {
    const r = new MetricsRegistry();
    let running = 4;
    r.gauge("running", "x", ["engine"]).collect((g) => g.labels("0").set(running));
    const seen = r.gauge("scrapes", "x");
    const off = r.onCollect(() => seen.inc());
    assert.match(r.expose(), /running\{engine="0"\} 4\n/);
    running = 7;
    const text = r.expose();
    assert.match(text, /running\{engine="0"\} 7\n/);
    assert.match(text, /^scrapes 2$/m);
    off();
    assert.match(r.expose(), /^scrapes 2$/m);
  });

  it("zeroes unlabelled metrics and drops labelled children, detaching kept children", () => {
    const r = new MetricsRegistry();
    const total = r.counter("total", "x");
    const byPool = r.counter("by_pool_total", "x", ["pool"]);
    const h = r.histogram("h", "x", [], [1]);
    total.inc(5);
    const kept = byPool.labels("a");
    kept.inc();
    h.observe(0.5);

    r.reset();
    const text = r.expose();
    assert.match(text, /^total 0$/m);
    assert.doesNotMatch(text, /by_pool_total\{/);
    assert.match(text, /^h_count 0$/m);
    total.inc();
    assert.match(r.expose(), /^total 1$/m);
    kept.inc();
    assert.doesNotMatch(r.expose(), /by_pool_total\{/);
    assert.notEqual(byPool.labels("a"), kept);
  });
});
