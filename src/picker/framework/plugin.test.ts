// Pins the plugin registries: a scorer added as docs/extending.md shows — its own folder's plugin and one
// registration — is named by a config, reads its own typed parameters with errors at their YAML path,
// and is built into the profile; registering a type twice is refused.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseEndpointPickerConfig } from "../config/endpoint-picker-config.js";
import { FILTERS } from "../filters/filters.js";
import { buildPickerProfile } from "../picker-profile.js";
import { SCORERS } from "../scorers/scorers.js";
import { type PickerPlugins, PluginRegistry, type ScorerPlugin } from "./plugin.js";

/** The worked example of docs/extending.md. */
const runningCount: ScorerPlugin<{ saturation: number }> = {
  type: "running-count",
  params: (entry) => ({ saturation: entry?.int("saturation", { min: 1 }) ?? 256 }),
  create: (p) => ({
    type: "running-count",
    category: "balance",
    score: (_ctx, endpoints) =>
      endpoints.map((e) => (e.running === null ? 0.5 : 1 - e.running / p.saturation)),
  }),
};

const plugins: PickerPlugins = {
  filters: FILTERS,
  scorers: new PluginRegistry<ScorerPlugin>("scorer", [
    ...SCORERS.types.map((t) => SCORERS.get(t)),
    runningCount,
  ]),
};

const errors = (spec: unknown) => {
  const r = parseEndpointPickerConfig(spec, ["spec"], plugins);
  return r.ok ? [] : r.errors.map((e) => `${e.path}: ${e.message}`);
};

describe("picker plugin registries", () => {
  it("a registered scorer is named by the config and built with the parameters it read", () => {
    const r = parseEndpointPickerConfig(
      { scorers: [{ type: "running-count", weight: 1, saturation: 128 }] },
      ["spec"],
      plugins,
    );
    assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
    assert.deepEqual(r.config.scorers, [{ type: "running-count", weight: 1, params: { saturation: 128 } }]);
    const profile = buildPickerProfile(r.config, plugins);
    const scorer = profile.scorers[0]!.scorer;
    assert.equal(scorer.type, "running-count");
    const scores = scorer.score({} as never, [{ running: 32 }, { running: null }] as never);
    assert.deepEqual(Array.from(scores), [0.75, 0.5]);
  });

  it("a bad parameter is a config error at its YAML path, a misspelt one an unknown field", () => {
    assert.deepEqual(errors({ scorers: [{ type: "running-count", weight: 1, saturation: 0 }] }), [
      "spec.scorers[0].saturation: must be a positive integer, got 0",
    ]);
    assert.deepEqual(errors({ scorers: [{ type: "running-count", saturaton: 128 }] }), [
      'spec.scorers[0].saturaton: unknown field "saturaton" (did you mean "saturation"?)',
    ]);
  });

  it("the default registries do not know it: an unknown type names the ones they do", () => {
    const r = parseEndpointPickerConfig({ scorers: [{ type: "running-count" }] }, ["spec"]);
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.match(r.errors[0]!.message, /^must be one of "prefix-affinity", .* got "running-count"$/);
  });

  it("refuses a type registered twice, and a lookup of a type never registered", () => {
    assert.throws(
      () => new PluginRegistry<ScorerPlugin>("scorer", [runningCount, runningCount]),
      /scorer type running-count is registered twice/,
    );
    assert.throws(() => SCORERS.get("running-count"), /unknown scorer type "running-count"/);
  });
});
