import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readEngineMetrics } from "../endpoints/dialects.js";
import { MetricsRegistry } from "../telemetry/metrics.js";
import { parsePrometheusText } from "../telemetry/prom-parse.js";
import type { EngineOverrides } from "./engine-config.js";
import { makeEngineConfig } from "./engine-config.js";
import { KEPT_OLD_LORA_SERIES, LORA_INFO_LABELS, LoraInfoSeries } from "./lora-info.js";
import { SimReplica } from "./replica.js";

async function startReplica(overrides: EngineOverrides): Promise<SimReplica> {
  const r = new SimReplica({
    name: "t",
    port: 0,
    engine: makeEngineConfig("h100-llama8b", "base", { maxModelLen: 8192, ...overrides }),
    seed: 1,
  });
  await r.start();
  return r;
}

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !cond() && Date.now() < end; )
    await new Promise((r) => setTimeout(r, 10));
}

async function page(r: SimReplica): Promise<string> {
  return (await fetch(`${r.url}/metrics`)).text();
}

function loraSeries(text: string) {
  return parsePrometheusText(text).get("vllm:lora_requests_info") ?? [];
}

/** A long stream for `model`, left unread until `abort` (its request runs, or waits, meanwhile). */
function longStream(r: SimReplica, model: string): AbortController {
  const abort = new AbortController();
  fetch(`${r.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model,
      messages: [{ role: "user", content: "x" }],
      max_tokens: 4000,
      stream: true,
    }),
    signal: abort.signal,
  }).catch(() => {});
  return abort;
}

describe("vllm:lora_requests_info as vLLM V1 writes it", () => {
  it("is absent without LoRA, and with LoRA set to the current Unix time under empty sets when idle", async () => {
    const off = await startReplica({});
    try {
      assert.doesNotMatch(await page(off), /lora_requests_info/);
    } finally {
      await off.stop();
    }
    const on = await startReplica({ enableLora: true, maxLoras: 2 });
    try {
      const before = Date.now() / 1000;
      const text = await page(on);
      const after = Date.now() / 1000;
      assert.match(text, /# TYPE vllm:lora_requests_info gauge/);
      const [s, ...rest] = loraSeries(text);
      assert.equal(rest.length, 0);
      assert.deepEqual(s!.labels, { max_lora: "2", running_lora_adapters: "", waiting_lora_adapters: "" });
      assert.ok(
        s!.value >= before - 0.001 && s!.value <= after + 0.001,
        `${s!.value} is the time of the scrape`,
      );
      // Written as prometheus_client writes a large float: mantissa and exponent.
      assert.match(text, /waiting_lora_adapters=""} \d\.\d+e\+09\n/);
    } finally {
      await on.stop();
    }
  });

  it("leaves the old series behind when the adapter sets change; the gateway reads the newest", async () => {
    const r = await startReplica({ maxNumSeqs: 1, maxLoras: 2, loraModules: ["a", "b"] });
    const streams: AbortController[] = [];
    try {
      streams.push(longStream(r, "a"));
      await until(() => r.engine.lora.isRunning("a"));
      const s1 = loraSeries(await page(r)); // the first scrape: one series, with a running
      assert.equal(s1.length, 1);
      const current1 = s1.reduce((x, y) => (y.value > x.value ? y : x));
      assert.equal(current1.labels.running_lora_adapters, "a");
      streams.push(longStream(r, "b")); // max_num_seqs 1: b waits behind a
      await until(() => r.engine.numWaiting === 1);
      const text2 = await page(r);
      const s2 = loraSeries(text2);
      assert.equal(s2.length, 2, "the a-only series stays beside the new one");
      const old = s2.find((s) => s.labels.waiting_lora_adapters === "")!;
      const cur = s2.find((s) => s.labels.waiting_lora_adapters === "b")!;
      assert.equal(old.value, current1.value, "the old series keeps the time it was last current");
      assert.ok(cur.value > old.value);
      assert.deepEqual(readEngineMetrics(text2, "vllm").loras, { max: 2, running: ["a"], waiting: ["b"] });

      streams.shift()!.abort(); // a leaves, b runs
      await until(() => r.engine.lora.isRunning("b"));
      const text3 = await page(r);
      assert.equal(loraSeries(text3).length, 3);
      assert.deepEqual(readEngineMetrics(text3, "vllm").loras, { max: 2, running: ["b"], waiting: [] });
    } finally {
      for (const s of streams) s.abort();
      await r.stop();
    }
  });
});

describe("LoraInfoSeries", () => {
  it(`keeps ${KEPT_OLD_LORA_SERIES} old label sets, drops older ones, and makes the current one the largest`, () => {
    const reg = new MetricsRegistry({ pythonStyle: true });
    const gauge = reg.gauge("vllm:lora_requests_info", "Running stats on lora requests.", LORA_INFO_LABELS);
    const info = new LoraInfoSeries(gauge, KEPT_OLD_LORA_SERIES, () => 1_700_000_000); // a clock that never moves
    for (const running of ["a", "b", "c", "d", "e", "f"]) info.update(1, [running], []);
    info.update(1, ["c"], ["x", "y"]);
    info.update(1, ["c"], []); // back to an earlier set: that series is refreshed, not duplicated
    const series = parsePrometheusText(reg.expose()).get("vllm:lora_requests_info")!;
    assert.equal(series.length, KEPT_OLD_LORA_SERIES + 1);
    const byValue = [...series].sort((x, y) => x.value - y.value);
    assert.deepEqual(
      byValue.map((s) => [s.labels.running_lora_adapters, s.labels.waiting_lora_adapters]),
      [
        ["d", ""],
        ["e", ""],
        ["f", ""],
        ["c", "x,y"],
        ["c", ""],
      ],
    );
    assert.equal(new Set(series.map((s) => s.value)).size, series.length, "no two series tie");
  });
});
