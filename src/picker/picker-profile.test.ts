// Pins the config-to-runtime step: every catalogued plugin builds, the index is sized from config and
// engine metrics, and the picker runs on real EndpointState objects.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EndpointState } from "../endpoints/endpoint-state.js";
import { fakeEndpoint, pickRequest } from "../testing/fake-endpoint.js";
import { FILTER_TYPES, parseEndpointPickerConfig, SCORER_TYPES } from "./config/endpoint-picker-config.js";
import { pickEndpoint } from "./framework/pick-endpoint.js";
import {
  buildPickerProfile,
  createPrefixIndex,
  promptHashesFor,
  sessionHeader,
  syncIndexCapacity,
} from "./picker-profile.js";

function config(spec: Record<string, unknown>) {
  const r = parseEndpointPickerConfig(spec);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
  return r.config;
}

describe("buildPickerProfile", () => {
  it("builds every filter and scorer the catalogue names, skipping zero weights", () => {
    const c = config({
      filters: FILTER_TYPES.map((type) => ({ type })),
      scorers: SCORER_TYPES.map((type, i) => ({ type, weight: i === 0 ? 0 : 1 })),
    });
    const p = buildPickerProfile(c);
    assert.deepEqual(
      p.filters.map((f) => f.type),
      FILTER_TYPES,
    );
    assert.deepEqual(
      p.scorers.map((s) => s.scorer.type),
      SCORER_TYPES.slice(1),
    );
    assert.equal(sessionHeader(c), "x-session-id");
    assert.equal(sessionHeader(config({})), null);
  });

  it("hashes prompts with the config's block size and prefix cap", () => {
    const c = config({ prefixIndex: { blockBytes: 128, maxPrefixBlocks: 4 } });
    assert.equal(promptHashesFor(c, "a".repeat(1000), "m", null).length, 4);
    assert.equal(promptHashesFor(c, "a".repeat(300), "m", null).length, 2);
  });

  it("caps each endpoint's share of the index at the engine's KV capacity in index blocks", () => {
    const c = config({});
    const index = createPrefixIndex(c);
    // 10 engine blocks of 32 tokens = 20 index blocks of 16 tokens.
    syncIndexCapacity(index, c, [fakeEndpoint("a", { numGpuBlocks: 10, blockSize: 32 })]);
    index.record(
      "a",
      Array.from({ length: 50 }, (_, i) => i),
    );
    assert.equal(index.blocksOf("a"), 20);
  });
});

describe("pickEndpoint on EndpointState", () => {
  it("runs on endpoints that were never scraped, in predicted mode", () => {
    const pool = ["a", "b"].map(
      (name) =>
        new EndpointState({
          pool: "p",
          name,
          url: `http://127.0.0.1:1/${name}`,
          dialect: "vllm",
          metrics: { path: "/metrics", intervalMs: 250 },
          health: { path: "/health", intervalMs: 1000 },
        }),
    );
    for (const e of pool) e.healthy = true;
    const busy = pool[0]!.acquire(50_000);
    const r = pickEndpoint(buildPickerProfile(config({})), { request: pickRequest(), now: Date.now() }, pool);
    assert.equal(r.mode, "predicted");
    assert.equal(r.endpoint?.name, "b");
    busy.release();
  });
});
