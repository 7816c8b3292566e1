// Pins the EndpointPicker config: defaults, plugin parameters, and errors with exact paths.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_FILTERS, DEFAULT_SCORERS, parseEndpointPickerConfig } from "./endpoint-picker-config.js";

const errors = (v: unknown) => {
  const r = parseEndpointPickerConfig(v);
  assert.equal(r.ok, false);
  return r.ok ? [] : r.errors.map((e) => `${e.path}: ${e.message}`);
};

describe("parseEndpointPickerConfig", () => {
  it("fills sensible defaults from an empty spec", () => {
    const r = parseEndpointPickerConfig({});
    assert.ok(r.ok);
    assert.deepEqual(r.config.filters, DEFAULT_FILTERS);
    assert.deepEqual(r.config.scorers, DEFAULT_SCORERS);
    assert.deepEqual(r.config.picker, { type: "max-score" });
    assert.equal(r.config.failOpen, true);
    assert.deepEqual(r.config.loadGuard, { marginMs: 500 });
    assert.equal(r.config.prefixIndex.maxBlocks, 1_000_000);
    assert.equal(r.config.prefixIndex.blockBytes, 64);
    assert.equal(r.config.backupPool, null);
    assert.ok(parseEndpointPickerConfig(undefined).ok);
  });

  it("reads plugins with their parameters, weights and per-filter failOpen", () => {
    const r = parseEndpointPickerConfig({
      filters: [
        { type: "kv-watermark", threshold: 0.8, failOpen: false },
        { type: "metrics-fresh", mode: "require" },
      ],
      scorers: [
        { type: "prefix-affinity", weight: 3 },
        { type: "session-affinity", header: "x-user" },
      ],
      picker: { type: "power-of-two" },
      loadGuard: { marginMs: 250 },
      prefixIndex: { tokensPerBlock: 32, maxBlocks: 5000 },
      backupPool: "spill",
    });
    assert.ok(r.ok);
    assert.deepEqual(r.config.filters, [
      { type: "kv-watermark", params: { threshold: 0.8 }, failOpen: false },
      { type: "metrics-fresh", params: { mode: "require", graceMs: 2000 } },
    ]);
    assert.deepEqual(r.config.scorers, [
      { type: "prefix-affinity", weight: 3, params: {} },
      { type: "session-affinity", weight: 1, params: { header: "x-user" } },
    ]);
    assert.equal(r.config.picker.type, "power-of-two");
    assert.deepEqual(r.config.loadGuard, { marginMs: 250 });
    assert.equal(r.config.prefixIndex.blockBytes, 128);
    assert.equal(r.config.costModel.tokensPerBlock, 32);
    assert.equal(r.config.backupPool, "spill");
  });

  it("disables the load guard with loadGuard: false", () => {
    const r = parseEndpointPickerConfig({ loadGuard: false });
    assert.ok(r.ok);
    assert.equal(r.config.loadGuard, null);
  });

  it("reports every problem with its path", () => {
    assert.deepEqual(
      errors({
        filters: [{ type: "kv-watermak" }, { type: "kv-watermark", threshold: 1.5 }],
        scorers: [
          { type: "queue-depth", weight: -1 },
          { type: "queue-depth", wieght: 2 },
        ],
        picker: { type: "random" },
        loadGuard: { marginMs: "500" },
        prefixIndex: { blockBytes: 60 },
        surprise: 1,
      }),
      [
        'filters[0].type: must be one of "ready", "not-draining", "serves-model", "lora-available", "kv-watermark", "concurrency-cap", "metrics-fresh", got "kv-watermak" (did you mean "kv-watermark"?)',
        "filters[1].threshold: must be between 0 and 1, got 1.5",
        "scorers[0].weight: must be >= 0, got -1",
        'scorers[1].type: scorers lists "queue-depth" twice',
        'scorers[1].wieght: unknown field "wieght" (did you mean "weight"?)',
        'picker.type: must be one of "max-score", "power-of-two", got "random"',
        'loadGuard.marginMs: must be a number, got a string ("500")',
        "prefixIndex.blockBytes: must be a multiple of 8, got 60",
        'surprise: unknown field "surprise"',
      ],
    );
  });

  it("rejects a spec that is not a map", () => {
    assert.deepEqual(errors([1]), [": must be a map, got a list"]);
  });
});
