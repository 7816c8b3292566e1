import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DIALECTS, ENGINE_DIALECT_NAMES } from "./dialects.js";

describe("engine dialects", () => {
  it("names every dialect it registers, each under its own name", () => {
    assert.deepEqual(ENGINE_DIALECT_NAMES, ["vllm", "sglang"]);
    for (const name of ENGINE_DIALECT_NAMES) assert.equal(DIALECTS[name].name, name);
  });

  it("vLLM: loads under /v1, and its 400 'already been loaded' is a registration another replica made", () => {
    const api = DIALECTS.vllm.adapters!;
    assert.equal(api.loadPath, "/v1/load_lora_adapter");
    assert.deepEqual(api.loadBody("a", "/p"), { lora_name: "a", lora_path: "/p" });
    const already =
      "The lora adapter 'a' has already been loaded. If you want to load the adapter in place, set 'load_inplace' to True.";
    assert.equal(api.alreadyLoaded(400, already, "a"), true);
    assert.equal(api.alreadyLoaded(400, "Both 'lora_name' and 'lora_path' must be provided.", "a"), false);
    assert.equal(api.alreadyLoaded(500, already, "a"), false);
  });

  it("SGLang: loads without /v1, and a refusal that lists the adapter among those loaded is a registration", () => {
    const api = DIALECTS.sglang.adapters!;
    assert.equal(api.loadPath, "/load_lora_adapter");
    const refusal = (loaded: Record<string, string>) =>
      JSON.stringify({ success: false, error_message: "refused", loaded_adapters: loaded });
    assert.equal(api.alreadyLoaded(400, refusal({ a: "/p" }), "a"), true);
    assert.equal(api.alreadyLoaded(400, refusal({ b: "/q" }), "a"), false);
    assert.equal(api.alreadyLoaded(400, "Internal Server Error", "a"), false);
  });
});
