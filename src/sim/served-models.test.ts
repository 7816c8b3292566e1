import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { parsePrometheusText } from "../telemetry/prom-parse.js";
import type { EngineOverrides } from "./engine-config.js";
import { makeEngineConfig } from "./engine-config.js";
import { SimReplica } from "./replica.js";

async function startReplica(overrides: EngineOverrides = {}, profile = "instant"): Promise<SimReplica> {
  const r = new SimReplica({
    name: "t",
    port: 0,
    engine: makeEngineConfig(profile, "base-7b", { maxModelLen: 4096, ...overrides }),
    seed: 3,
  });
  await r.start();
  return r;
}

async function post(r: SimReplica, path: string, body: unknown) {
  const res = await fetch(`${r.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, text, json, contentType: res.headers.get("content-type") };
}

const chat = (r: SimReplica, model: string) =>
  post(r, "/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }], max_tokens: 2 });

async function models(r: SimReplica): Promise<any[]> {
  return ((await (await fetch(`${r.url}/v1/models`)).json()) as { data: any[] }).data;
}

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !cond() && Date.now() < end; )
    await new Promise((r) => setTimeout(r, 10));
}

describe("run-time LoRA adapters (vLLM with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True)", () => {
  let r: SimReplica;
  before(async () => {
    r = await startReplica({ enableLora: true, loraModules: ["static=/adapters/static"] });
  });
  after(() => r.stop());

  it("lists the base model and --lora-modules adapters as vLLM's model cards", async () => {
    const [base, lora] = await models(r);
    assert.equal(base.id, "base-7b");
    assert.equal(base.object, "model");
    assert.equal(base.owned_by, "vllm");
    assert.equal(base.root, "base-7b", "without --model-version the root is the model name");
    assert.equal(base.parent, null);
    assert.equal(base.max_model_len, 4096);
    assert.equal(base.permission[0].object, "model_permission");
    assert.equal(lora.id, "static");
    assert.equal(lora.root, "/adapters/static");
    assert.equal(lora.parent, "base-7b");
    assert.equal(lora.max_model_len, null);
  });

  it("loads an adapter that requests can then name, and refuses the same name twice", async () => {
    assert.equal((await chat(r, "fresh")).status, 404);
    const ok = await post(r, "/v1/load_lora_adapter", { lora_name: "fresh", lora_path: "/adapters/fresh" });
    assert.equal(ok.status, 200);
    assert.equal(ok.text, "Success: LoRA adapter 'fresh' added successfully.");
    assert.equal(ok.contentType, null, "vLLM answers with a bare Response");
    const served = await chat(r, "fresh");
    assert.equal(served.status, 200);
    assert.equal(served.json.model, "fresh");
    const card = (await models(r)).find((m) => m.id === "fresh");
    assert.deepEqual([card.root, card.parent], ["/adapters/fresh", "base-7b"]);

    const again = await post(r, "/v1/load_lora_adapter", { lora_name: "fresh", lora_path: "/elsewhere" });
    assert.equal(again.status, 400);
    assert.equal(again.json.error.type, "InvalidUserInput");
    assert.equal(again.json.error.code, 400);
    assert.match(again.json.error.message, /The lora adapter 'fresh' has already been loaded/);
    const inplace = await post(r, "/v1/load_lora_adapter", {
      lora_name: "fresh",
      lora_path: "/adapters/fresh-v2",
      load_inplace: true,
    });
    assert.equal(inplace.status, 200);
    assert.equal((await models(r)).find((m) => m.id === "fresh").root, "/adapters/fresh-v2");
  });

  it("answers a load without name or path with vLLM's 400", async () => {
    const res = await post(r, "/v1/load_lora_adapter", { lora_name: "x" });
    assert.equal(res.status, 400);
    assert.equal(res.json.error.message, "Both 'lora_name' and 'lora_path' must be provided.");
  });

  it("unloads an adapter (requests for it then get 404) and 404s an unknown one", async () => {
    await post(r, "/v1/load_lora_adapter", { lora_name: "gone", lora_path: "/adapters/gone" });
    const res = await post(r, "/v1/unload_lora_adapter", { lora_name: "gone" });
    assert.equal(res.status, 200);
    assert.equal(res.text, "Success: LoRA adapter 'gone' removed successfully.");
    assert.equal((await chat(r, "gone")).status, 404);
    assert.ok(!(await models(r)).some((m) => m.id === "gone"));
    const unknown = await post(r, "/v1/unload_lora_adapter", { lora_name: "gone" });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.error.type, "NotFoundError");
    assert.equal(unknown.json.error.message, "The lora adapter 'gone' cannot be found.");
  });
});

describe("run-time adapters across a crash", () => {
  it("are forgotten by the restarted replica, which serves its --lora-modules again", async () => {
    const r = await startReplica({ loraModules: ["static=/s"] });
    try {
      await post(r, "/v1/load_lora_adapter", { lora_name: "runtime", lora_path: "/r" });
      assert.equal((await chat(r, "runtime")).status, 200);
      r.setFaults({ restartAfterMs: 20 });
      r.crash();
      await until(() => r.isListening);
      assert.deepEqual(
        (await models(r)).map((m) => m.id),
        ["base-7b", "static"],
      );
      assert.equal((await chat(r, "runtime")).status, 404);
    } finally {
      await r.stop();
    }
  });
});

describe("LoRA loads onto the simulated GPU", () => {
  it("counts loads in /admin/state and tokengate_sim_lora_loads_total; an unload frees the slot", async () => {
    const r = await startReplica({ maxLoras: 1, loraModules: ["a", "b"] });
    try {
      for (const model of ["a", "a", "b", "a"]) assert.equal((await chat(r, model)).status, 200);
      const state = (await (await fetch(`${r.url}/admin/state`)).json()) as any;
      assert.equal(state.loraLoads, 3, "a, then b evicts a, then a again");
      assert.deepEqual(state.loraAdapters, ["a", "b"]);
      const scrape = async () =>
        parsePrometheusText(await (await fetch(`${r.url}/metrics`)).text()).get(
          "tokengate_sim_lora_loads_total",
        )?.[0]?.value;
      assert.equal(await scrape(), 3);
      // Unloading the resident adapter takes it off the GPU: registering it again and using it loads it.
      assert.equal((await post(r, "/v1/unload_lora_adapter", { lora_name: "a" })).status, 200);
      assert.deepEqual(r.engine.lora.residentAdapters(), []);
      await post(r, "/v1/load_lora_adapter", { lora_name: "a", lora_path: "/a" });
      assert.equal((await chat(r, "a")).status, 200);
      assert.equal(await scrape(), 4);
      await post(r, "/admin/reset", {});
      assert.equal(await scrape(), 0);
    } finally {
      await r.stop();
    }
  });

  it("refuses to unload an adapter while its requests run, and unloads it once they end", async () => {
    const r = await startReplica({ loraModules: ["busy"] }, "h100-llama8b");
    try {
      const abort = new AbortController();
      // A long stream left unread: its request runs until the client goes away.
      const stream = fetch(`${r.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "busy",
          messages: [{ role: "user", content: "x" }],
          max_tokens: 3000,
          stream: true,
        }),
        signal: abort.signal,
      });
      await until(() => r.engine.lora.isRunning("busy"));
      const refused = await post(r, "/v1/unload_lora_adapter", { lora_name: "busy" });
      assert.equal(refused.status, 400);
      assert.match(refused.json.error.message, /has running requests/);
      abort.abort();
      await stream.catch(() => {});
      await until(() => !r.engine.lora.isRunning("busy"));
      assert.equal((await post(r, "/v1/unload_lora_adapter", { lora_name: "busy" })).status, 200);
    } finally {
      await r.stop();
    }
  });

  it("refuses run-time loads when LoRA is not enabled", async () => {
    const r = await startReplica();
    try {
      const res = await post(r, "/v1/load_lora_adapter", { lora_name: "x", lora_path: "/x" });
      assert.equal(res.status, 400);
      assert.match(res.json.error.message, /--enable-lora/);
    } finally {
      await r.stop();
    }
  });
});

describe("a reported model version (--model-version)", () => {
  it("becomes the base model's root /models/<version>; adapters keep their own roots", async () => {
    const r = new SimReplica({
      name: "v",
      port: 0,
      engine: makeEngineConfig("instant", "base-7b", { loraModules: ["l=/adapters/l"] }),
      modelVersion: "2025-06-rc2",
    });
    await r.start();
    try {
      const [base, lora] = await models(r);
      assert.equal(base.id, "base-7b");
      assert.equal(base.root, "/models/2025-06-rc2");
      assert.equal(base.root.split("/").at(-1), "2025-06-rc2", "the gateway reads the last path segment");
      assert.equal(lora.root, "/adapters/l");
      const state = (await (await fetch(`${r.url}/admin/state`)).json()) as any;
      assert.equal(state.modelVersion, "2025-06-rc2");
    } finally {
      await r.stop();
    }
  });
});
