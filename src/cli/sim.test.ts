import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { startFleet } from "../sim/fleet.js";
import { fleetFromFlags, SIM_USAGE } from "./sim.js";

describe("tokengate sim flags", () => {
  it("--help lists the LoRA, model-version, API-key and framing flags", () => {
    for (const flag of [
      "--enable-lora",
      "--lora-modules",
      "--max-loras",
      "--model-version",
      "--api-key",
      "--sse-line-ending",
      "--sse-data-space",
      "--json-style",
    ]) {
      assert.ok(SIM_USAGE.includes(flag), `${flag} is in the help`);
    }
  });

  it("reads LoRA, model version, API key and framing flags into the group", () => {
    const spec = fleetFromFlags(
      [
        "--lora-modules",
        "a=/adapters/a,b",
        "--enable-lora",
        "--model-version",
        "v7",
        "--api-key",
        "k1",
        "--sse-line-ending",
        "crlf",
        "--sse-data-space",
        "none",
        "--json-style",
        "pretty",
      ],
      {},
    );
    const g = spec.groups[0]!;
    assert.deepEqual(g.engine.loraModules, ["a=/adapters/a", "b"]);
    assert.equal(g.engine.enableLora, true);
    assert.equal(g.modelVersion, "v7");
    assert.equal(g.apiKey, "k1");
    assert.deepEqual([g.sseLineEnding, g.sseDataSpace, g.jsonStyle], ["crlf", "none", "pretty"]);
  });

  it("takes the key from VLLM_API_KEY when --api-key is absent, as vLLM does", () => {
    assert.equal(fleetFromFlags([], { VLLM_API_KEY: "from-env" }).groups[0]!.apiKey, "from-env");
    assert.equal(fleetFromFlags(["--api-key", "flag"], { VLLM_API_KEY: "env" }).groups[0]!.apiKey, "flag");
    assert.equal(fleetFromFlags([], { VLLM_API_KEY: "" }).groups[0]!.apiKey, undefined);
    const plain = fleetFromFlags([], {}).groups[0]!;
    assert.deepEqual(
      [plain.apiKey, plain.modelVersion, plain.sseLineEnding, plain.jsonStyle, plain.sseDataSpace],
      [undefined, undefined, undefined, undefined, undefined],
    );
  });

  it("names the flag of a bad value", () => {
    const bad = (argv: string[], re: RegExp) => assert.throws(() => fleetFromFlags(argv, {}), re);
    bad(["--sse-line-ending", "crlf2"], /^Error: --sse-line-ending: expected lf, crlf, cr, got "crlf2"/);
    bad(["--json-style", "loose"], /^Error: --json-style: expected compact, pretty, got "loose"/);
    bad(["--sse-data-space", "yes"], /^Error: --sse-data-space: expected space, none, got "yes"/);
    bad(["--model-version", "a/b"], /^Error: --model-version: a version cannot contain "\/"/);
    bad(["--model-version", ""], /^Error: --model-version: expected a version/);
    bad(["--api-key", ""], /^Error: --api-key: expected a key/);
    bad(["--lora-modules", "a,=x"], /^Error: --lora-modules: expected name or name=path, got "=x"/);
  });

  it("starts a replica that serves with those settings", async () => {
    const spec = fleetFromFlags(
      ["--port", "0", "--profile", "instant", "--model", "m", "--model-version", "v7", "--api-key", "k1"],
      {},
    );
    const fleet = await startFleet(spec);
    try {
      const url = fleet.replicas[0]!.url;
      assert.equal((await fetch(`${url}/v1/models`)).status, 401);
      const res = await fetch(`${url}/v1/models`, { headers: { authorization: "Bearer k1" } });
      const models = (await res.json()) as { data: { root: string }[] };
      assert.equal(models.data[0]!.root, "/models/v7");
    } finally {
      await fleet.stop();
    }
  });
});
