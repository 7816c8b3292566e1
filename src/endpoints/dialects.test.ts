// Pins what each dialect reads from pages written by the real prometheus_client (telemetry fixtures),
// how several series combine, renamed metrics, and null for whatever a page does not carry.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { DIALECT_METRICS, readEngineMetrics, sampleNames } from "./dialects.js";

function fixture(name: string): string {
  // Tests run from dist/endpoints/; fixtures are not copied by tsc, so read them from src.
  return readFileSync(new URL(`../../src/telemetry/fixtures/${name}`, import.meta.url), "utf8");
}

describe("engine dialects", () => {
  it("reads a vLLM V1 page: queue, running, KV, cache config, LoRA, prefix counters, TTFT buckets", () => {
    const r = readEngineMetrics(fixture("vllm-v1.metrics.txt"), "vllm");
    assert.equal(r.waiting, 2);
    assert.equal(r.running, 23);
    assert.equal(r.kvUsage, 0.650934);
    assert.equal(r.blockSize, 16);
    assert.equal(r.numGpuBlocks, 29205);
    assert.deepEqual(r.loras, { max: 1, running: ["a", "b"], waiting: [] });
    assert.equal(r.prefixHits, 1.140224e6);
    assert.equal(r.prefixQueries, 3.916169e6);
    assert.equal(r.prefixHitRateGauge, null);
    assert.ok(r.ttftBuckets !== null && r.ttftBuckets.length === 23);
    assert.equal(r.ttftBuckets.at(-1)!.le, Number.POSITIVE_INFINITY);
  });

  it("reads an SGLang page, with page size and pages from plain gauges and no LoRA metric", () => {
    const r = readEngineMetrics(fixture("sglang.metrics.txt"), "sglang");
    assert.equal(r.waiting, 4);
    assert.equal(r.running, 17);
    assert.equal(r.kvUsage, 0.36);
    assert.equal(r.blockSize, 1);
    assert.equal(r.numGpuBlocks, 133928);
    assert.equal(r.loras, null);
    assert.equal(r.prefixHits, 677176);
    assert.equal(r.prefixQueries, 1.695457e6);
    assert.equal(r.prefixHitRateGauge, 0.4127);
    assert.equal(r.ttftBuckets?.length, 19);
  });

  it("takes SGLang's cache_config_info labels when the page has them", () => {
    const page =
      'sglang:cache_config_info{model_name="m",page_size="16",num_pages="4096"} 1\n' +
      'sglang:page_size{model_name="m"} 1\n';
    const r = readEngineMetrics(page, "sglang");
    assert.equal(r.blockSize, 16);
    assert.equal(r.numGpuBlocks, 4096);
  });

  it("reads a hex, binary or octal value as no value, not as the number Number() makes of it", () => {
    const r = readEngineMetrics(
      'vllm:num_requests_waiting{engine="0"} 0X1f\nvllm:num_requests_running{engine="0"} 0b11\n' +
        'vllm:cache_config_info{block_size="0x10",num_gpu_blocks="0o7"} 1\n',
      "vllm",
    );
    assert.deepEqual([r.waiting, r.running, r.blockSize, r.numGpuBlocks], [null, null, null, null]);
  });

  it("returns null for every signal a page does not carry, never a made-up zero", () => {
    const r = readEngineMetrics('vllm:num_requests_running{engine="0"} 3\n', "vllm");
    assert.deepEqual(r, {
      waiting: null,
      running: 3,
      kvUsage: null,
      blockSize: null,
      numGpuBlocks: null,
      loras: null,
      prefixHits: null,
      prefixQueries: null,
      prefixHitRateGauge: null,
      ttftBuckets: null,
    });
    // The other dialect's page reads as nothing at all.
    assert.equal(readEngineMetrics(fixture("sglang.metrics.txt"), "vllm").running, null);
  });

  it("sums queues across data-parallel engines and takes the fullest engine's KV use", () => {
    const page = [
      'vllm:num_requests_waiting{engine="0"} 2',
      'vllm:num_requests_waiting{engine="1"} 5',
      'vllm:kv_cache_usage_perc{engine="0"} 0.2',
      'vllm:kv_cache_usage_perc{engine="1"} 0.7',
      'vllm:prefix_cache_hits_total{engine="0"} 10',
      'vllm:prefix_cache_hits_total{engine="1"} 30',
    ].join("\n");
    const r = readEngineMetrics(page, "vllm");
    assert.equal(r.waiting, 7);
    assert.equal(r.kvUsage, 0.7);
    assert.equal(r.prefixHits, 40);
  });

  it("falls back to the names older vLLM printed", () => {
    const page = "vllm:gpu_cache_usage_perc 0.5\nvllm:gpu_prefix_cache_hits_total 3\n";
    const r = readEngineMetrics(page, "vllm");
    assert.equal(r.kvUsage, 0.5);
    assert.equal(r.prefixHits, 3);
  });

  it("reads the newest LoRA series when vLLM leaves older ones behind", () => {
    const page = [
      'vllm:lora_requests_info{max_lora="2",running_lora_adapters="old",waiting_lora_adapters=""} 1700000000',
      'vllm:lora_requests_info{max_lora="2",running_lora_adapters="a, b",waiting_lora_adapters="c"} 1700000100',
    ].join("\n");
    assert.deepEqual(readEngineMetrics(page, "vllm").loras, { max: 2, running: ["a", "b"], waiting: ["c"] });
  });

  it("treats NaN gauges and non-integer cache labels as unknown", () => {
    const page =
      'vllm:num_requests_waiting NaN\nvllm:cache_config_info{block_size="x",num_gpu_blocks="12"} 1\n';
    const r = readEngineMetrics(page, "vllm");
    assert.equal(r.waiting, null);
    assert.equal(r.blockSize, null);
    assert.equal(r.numGpuBlocks, 12);
  });

  it("asks the parser only for the families the dialect reads", () => {
    const names = sampleNames("vllm");
    assert.ok(names.has("vllm:num_requests_waiting"));
    assert.ok(names.has("vllm:time_to_first_token_seconds_bucket"));
    assert.ok(!names.has("vllm:time_to_first_token_seconds_sum"));
    assert.ok(!names.has("vllm:generation_tokens_total"));
    for (const d of Object.keys(DIALECT_METRICS) as ("vllm" | "sglang")[]) {
      for (const n of sampleNames(d)) assert.ok(n.startsWith(`${d}:`), n);
    }
  });
});
