import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseFleet, startFleet } from "./fleet.js";

const doc = (groups: unknown[]) => ({
  apiVersion: "tokengate.dev/v1alpha1",
  kind: "SimFleet",
  metadata: { name: "f" },
  spec: { groups },
});

describe("SimFleet documents", () => {
  it("reads groups with engine overrides, stream interval and faults", () => {
    const f = parseFleet(
      doc([
        {
          name: "online",
          replicas: 3,
          port: 8001,
          profile: "h100-llama8b",
          model: "summary-7b",
          engine: { maxModelLen: 8192, enableChunkedPrefill: false },
          streamInterval: 2,
          faults: { errorRate: 0.1 },
        },
      ]),
    );
    const g = f.groups[0]!;
    assert.equal(g.replicas, 3);
    assert.equal(g.streamInterval, 2);
    assert.deepEqual(g.engine, { maxModelLen: 8192, enableChunkedPrefill: false });
    assert.equal(g.faults.errorRate, 0.1);
  });

  it("names the field at fault", () => {
    const bad = (groups: unknown[], re: RegExp) => assert.throws(() => parseFleet(doc(groups)), re);
    bad([{ name: "a", model: "m", replicas: 0 }], /spec\.groups\[0\]\.replicas: expected a whole number ≥ 1/);
    bad(
      [{ name: "a", model: "m", engine: { maxModelLenn: 5 } }],
      /spec\.groups\[0\]\.engine\.maxModelLenn: unknown engine setting/,
    );
    bad(
      [{ name: "a", model: "m", profile: "tpu" }],
      /spec\.groups\[0\]\.profile: unknown engine profile "tpu"/,
    );
    bad([{ name: "a", model: "m", faults: { errorRate: 2 } }], /spec\.groups\[0\]\.faults: errorRate/);
    bad([{ name: "a", model: "m", colour: "red" }], /spec\.groups\[0\]\.colour: unknown field/);
    bad([{ name: "a", model: "m", engine: { maxModelLen: 10_000_000 } }], /needs more KV cache/);
  });

  it("reads LoRA modules, model version, API key and framing, and starts replicas with them", async () => {
    const f = parseFleet(
      doc([
        {
          name: "g",
          model: "m",
          profile: "instant",
          engine: { enableLora: true, loraModules: ["a=/adapters/a"] },
          modelVersion: "2025-06",
          apiKey: "k",
          sseLineEnding: "cr",
          jsonStyle: "pretty",
          sseDataSpace: "none",
        },
      ]),
    );
    const g = f.groups[0]!;
    assert.deepEqual(
      [g.modelVersion, g.apiKey, g.sseLineEnding, g.jsonStyle, g.sseDataSpace],
      ["2025-06", "k", "cr", "pretty", "none"],
    );
    const fleet = await startFleet(f);
    try {
      const r = fleet.replicas[0]!;
      assert.deepEqual(r.framing.options, { sseLineEnding: "cr", jsonStyle: "pretty", sseDataSpace: "none" });
      const text = await (
        await fetch(`${r.url}/v1/models`, { headers: { authorization: "Bearer k" } })
      ).text();
      assert.match(text, /^\{"object": "list", "data": \[\{"id": "m", /);
      const models = JSON.parse(text) as { data: { root: string }[] };
      assert.deepEqual(
        models.data.map((m) => m.root),
        ["/models/2025-06", "/adapters/a"],
      );
    } finally {
      await fleet.stop();
    }
  });

  it("names the new field at fault", () => {
    const bad = (g: Record<string, unknown>, re: RegExp) =>
      assert.throws(() => parseFleet(doc([{ name: "a", model: "m", ...g }])), re);
    bad({ sseLineEnding: "CRLF" }, /spec\.groups\[0\]\.sseLineEnding: expected lf or crlf or cr/);
    bad({ jsonStyle: 1 }, /spec\.groups\[0\]\.jsonStyle: expected compact or pretty/);
    bad({ sseDataSpace: "tab" }, /spec\.groups\[0\]\.sseDataSpace: expected space or none/);
    bad({ modelVersion: "x/y" }, /spec\.groups\[0\]\.modelVersion: a version cannot contain/);
    bad({ modelVersion: 3 }, /spec\.groups\[0\]\.modelVersion: expected a version string/);
    bad({ apiKey: "" }, /spec\.groups\[0\]\.apiKey: expected a key/);
    bad(
      { engine: { loraModules: ["=p"] } },
      /spec\.groups\[0\]\.engine\.loraModules: expected name or name=path/,
    );
    bad({ engine: { enableLora: "yes" } }, /spec\.groups\[0\]\.engine\.enableLora: expected true or false/);
  });

  it("starts every replica on consecutive ports and stops them", async () => {
    const f = parseFleet(doc([{ name: "g", model: "m", replicas: 2, profile: "instant" }]));
    const fleet = await startFleet(f);
    try {
      assert.equal(fleet.replicas.length, 2);
      assert.deepEqual(
        fleet.replicas.map((r) => r.name),
        ["g-0", "g-1"],
      );
      for (const r of fleet.replicas) assert.equal((await fetch(`${r.url}/health`)).status, 200);
    } finally {
      await fleet.stop();
    }
  });
});
