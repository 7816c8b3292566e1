import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { makeEngineConfig } from "../../sim/engine-config.js";
import { SimReplica } from "../../sim/replica.js";
import type { EngineTarget } from "../traffic/engine-sampler.js";
import { loraLoadsDuring, readLoraLoads } from "./lora-loads.js";

async function complete(url: string, model: string): Promise<void> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 2 }),
  });
  assert.equal(res.status, 200, await res.text());
}

describe("LoRA loads as the engines count them", () => {
  let r: SimReplica;
  let targets: EngineTarget[];
  before(async () => {
    r = new SimReplica({
      name: "e-0",
      port: 0,
      engine: makeEngineConfig("instant", "base", { loraModules: ["a", "b"], maxLoras: 1 }),
    });
    await r.start();
    targets = [{ name: "e-0", group: "e", url: r.url }];
  });
  after(() => r.stop());

  it("reads each engine's state and counter, and a reset zeroes both", async () => {
    const start = await readLoraLoads(targets);
    // One slot: a, b, a each load (the base model loads nothing).
    for (const m of ["a", "b", "a", "a", "base"]) await complete(r.url, m);
    const after3 = await readLoraLoads(targets);
    assert.deepEqual(loraLoadsDuring(targets, start, after3), {
      total: 3,
      by_endpoint: { "e-0": 3 },
      counter_total: 3,
    });
    await fetch(`${r.url}/admin/reset`, { method: "POST" }).then((x) => x.text());
    assert.deepEqual(await readLoraLoads(targets), { "e-0": { state: 0, counter: 0 } });
  });

  it("counts from zero when an engine's count went down during the run (a reset or restart)", () => {
    const before = { "e-0": { state: 5, counter: 5 } };
    const afterReset = { "e-0": { state: 2, counter: 2 } };
    assert.deepEqual(loraLoadsDuring(targets, before, afterReset), {
      total: 2,
      by_endpoint: { "e-0": 2 },
      counter_total: 2,
    });
    const noCounter = { "e-0": { state: 7, counter: null } };
    assert.equal(loraLoadsDuring(targets, before, noCounter).counter_total, null);
  });
});
