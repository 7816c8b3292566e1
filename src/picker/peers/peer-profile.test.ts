// A peer algorithm as a pool's picker: named in an EndpointPicker config, built into the profile, and
// choosing among what tokengate's hard filters keep.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fakeEndpoint, pickRequest, seededRandom } from "../../testing/fake-endpoint.js";
import { parseEndpointPickerConfig } from "../config/endpoint-picker-config.js";
import { pickEndpoint } from "../framework/pick-endpoint.js";
import { buildPickerProfile } from "../picker-profile.js";

function profileOf(algorithm: string) {
  const parsed = parseEndpointPickerConfig({ algorithm });
  assert.ok(parsed.ok, parsed.ok ? "" : JSON.stringify(parsed.errors));
  return buildPickerProfile(parsed.config);
}

describe("a peer algorithm as the pool's picker", () => {
  it("is tokengate's own unless named; an unknown name is a config error at its path", () => {
    const d = parseEndpointPickerConfig({});
    assert.ok(d.ok && d.config.algorithm === "tokengate");
    const bad = parseEndpointPickerConfig({ algorithm: "llmd" }, ["spec"]);
    assert.ok(!bad.ok);
    assert.equal(bad.errors[0]!.path, "spec.algorithm");
    assert.match(bad.errors[0]!.message, /"llm-d"/);
  });

  it("chooses among the endpoints the filters keep, and says so in the reason", () => {
    const profile = profileOf("llm-d");
    const es = [
      fakeEndpoint("down", { healthy: false, waiting: 0, kvUsage: 0 }),
      fakeEndpoint("busy", { waiting: 9, kvUsage: 0.9 }),
      fakeEndpoint("idle", { waiting: 0, kvUsage: 0.1 }),
    ];
    const r = pickEndpoint(profile, { request: pickRequest(), now: 0, random: seededRandom(3) }, es);
    assert.equal(r.endpoint?.name, "idle");
    assert.match(r.reason, /^llm-d: idle scored/);
    assert.deepEqual(
      r.filtered.map((f) => f.endpoint),
      ["down"],
      "the ready filter still runs first",
    );
    assert.equal(r.topScores[0]!.endpoint, "idle", "the chosen line first");
  });

  it("dynamo-kv reads the gateway's pending prefill and in-flight prompts", () => {
    const profile = profileOf("dynamo-kv");
    // a: (1600 + 320)/16 + 1600/16 = 220 blocks; b, with nothing left to prefill: 320/16 + 1600/16 = 120.
    const es = [
      { ...fakeEndpoint("a"), pendingPrefillTokens: 1600, inflightPromptTokens: 1600 },
      { ...fakeEndpoint("b"), pendingPrefillTokens: 0, inflightPromptTokens: 1600 },
    ];
    const r = pickEndpoint(profile, { request: pickRequest({ inputTokens: 320 }), now: 0 }, es);
    assert.equal(r.endpoint?.name, "b");
    assert.match(r.reason, /^dynamo-kv: b at the least cost 120 = 20 prefill \+ 100 decode blocks/);
  });
});
