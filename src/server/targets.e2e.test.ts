// Pins models, versions and LoRA adapters as routing targets end to end, with the official openai
// client and simulated engines: an adapter reaches only engines that serve it, a weighted split lands
// at its weights and sticks per key, a pinned version is never answered by another, an unknown model is
// refused naming what is served; and an engine's key and the caller's traceparent reach the engine.

import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { loadConfigTexts } from "../config/loader.js";
import { makeEngineConfig } from "../sim/engine-config.js";
import { SimReplica } from "../sim/replica.js";
import type { RequestLogLine } from "../telemetry/request-log.js";
import { Gateway } from "./gateway.js";

const KEY = "sk-targets-test";

async function replica(
  name: string,
  loras: string[],
  profile = "instant",
  maxLoras = 2,
  modelVersion: string | null = null,
  dialect: "vllm" | "sglang" = "vllm",
): Promise<SimReplica> {
  const r = new SimReplica({
    name,
    port: 0,
    modelVersion,
    dialect,
    engine: makeEngineConfig(profile, "base-8b", { maxModelLen: 8192, loraModules: loras, maxLoras }),
    seed: 1,
  });
  await r.start();
  return r;
}

interface Rig {
  gw: Gateway;
  lines: RequestLogLine[];
  events: { event: string; fields: Record<string, unknown> }[];
  client: OpenAI;
  stop(): Promise<void>;
}

async function startRig(pools: string, route: string, stops: (() => Promise<void>)[]): Promise<Rig> {
  const gateway = `
apiVersion: tokengate.dev/v1alpha1
kind: GatewayConfig
metadata: { name: t }
spec:
  listen: { host: 127.0.0.1, port: 0 }
  auth: { apiKeys: [{ key: ${KEY}, tenant: team-a }] }
  retry: { maxAttempts: 2, budgetPercent: 100 }
`;
  const loaded = loadConfigTexts({ "pools.yaml": pools, "route.yaml": route, "gateway.yaml": gateway });
  if (!loaded.ok) throw new Error(loaded.errors.map((e) => `${e.path}: ${e.message}`).join("\n"));
  const gw = new Gateway(loaded.config, { logDestination: "none" });
  const lines: RequestLogLine[] = [];
  gw.log.listener = (l) => lines.push(l);
  const events: Rig["events"] = [];
  gw.log.eventListener = (event, fields) => events.push({ event, fields });
  await gw.start();
  const endpoints = [...gw.pools.values()].flatMap((p) => p.endpoints);
  for (const end = Date.now() + 15_000; Date.now() < end; ) {
    if (endpoints.every((e) => e.routable(Date.now()) && e.modelsReadAt !== null)) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
  return {
    gw,
    lines,
    events,
    client,
    stop: async () => {
      await gw.stop();
      for (const s of stops) await s();
    },
  };
}

const ROUTE_HEAD = `
apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata:
  name: r
  annotations: { ai.example.com/route-config-version: "targets-r1" }
spec:
  modelAliases:`;

const ask = (c: OpenAI, model: string, headers: Record<string, string> = {}) =>
  c.chat.completions
    .create(
      { model, messages: [{ role: "user", content: "summarise the ticket" }], max_tokens: 4 },
      { headers },
    )
    .withResponse();

describe("adapters and weighted targets", () => {
  let rig: Rig;
  let reps: SimReplica[];
  before(async () => {
    // tone-c is registered on lora-2 only; the others serve tone-a and tone-b.
    reps = [
      await replica("lora-0", ["tone-a", "tone-b"]),
      await replica("lora-1", ["tone-a", "tone-b"]),
      await replica("lora-2", ["tone-a", "tone-b", "tone-c"]),
    ];
    const pools = `
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: lora-pool }
spec:
  engine: vllm
  model: base-8b
  loraAdapters: [tone-a, tone-b, tone-c]
  endpoints: [${reps.map((r) => `{ url: "${r.url}", name: ${r.name} }`).join(", ")}]
  metrics: { intervalMs: 100 }
  health: { intervalMs: 100 }
`;
    const route = `${ROUTE_HEAD}
    tone:
      defaultPool: lora-pool
      pools: [{ name: lora-pool, maxInputTokens: 8192, maxOutputTokens: 256 }]
      targets: [{ adapter: tone-a, weight: 90 }, { adapter: tone-b, weight: 10 }]
      stickyBy: header:x-user-id
    tone-tenant:
      defaultPool: lora-pool
      pools: [{ name: lora-pool, maxInputTokens: 8192, maxOutputTokens: 256 }]
      targets: [{ adapter: tone-a, weight: 50 }, { adapter: tone-b, weight: 50 }]
`;
    rig = await startRig(
      pools,
      route,
      reps.map((r) => () => r.stop()),
    );
  });
  after(() => rig.stop());

  it("sends a request naming an adapter only to the engines that serve it, and says so", async () => {
    for (let i = 0; i < 12; i++) {
      const { data, response } = await ask(rig.client, "tone-c");
      assert.equal(response.headers.get("x-ai-endpoint"), "lora-2");
      assert.equal(data.model, "tone-c", "the engine served the adapter");
      assert.match(response.headers.get("x-ai-route-reason") ?? "", /adapter=tone-c/);
    }
    const line = rig.lines.at(-1)!;
    assert.equal(line.served_model, "tone-c");
    assert.equal(line.model_alias, "tone-c");
  });

  it("refuses an adapter no pool serves with model_not_found naming what is served", async () => {
    await assert.rejects(ask(rig.client, "tone-z"), (err: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(err.status, 404);
      assert.equal(err.code, "model_not_found");
      assert.match(err.message, /tone, tone-tenant, tone-a, tone-b, tone-c/);
      return true;
    });
    const models = await rig.client.models.list();
    assert.deepEqual(
      models.data.map((m) => m.id),
      ["tone", "tone-tenant", "tone-a", "tone-b", "tone-c"],
    );
    assert.equal((await rig.client.models.retrieve("tone-b")).id, "tone-b");
    await assert.rejects(rig.client.models.retrieve("tone-z"), { status: 404 });
  });

  it("splits 90/10 by weight over 1,000 keys within 3 points, and a key stays on its side", async () => {
    const served = new Map<string, string>();
    const users = Array.from({ length: 1000 }, (_, i) => `user-${i}`);
    for (let i = 0; i < users.length; i += 25) {
      await Promise.all(
        users.slice(i, i + 25).map(async (u) => {
          const { data } = await ask(rig.client, "tone", { "x-user-id": u });
          served.set(u, data.model);
        }),
      );
    }
    const a = [...served.values()].filter((m) => m === "tone-a").length;
    assert.ok(Math.abs(a / 10 - 90) <= 3, `tone-a took ${a / 10}% of 1,000 keys`);
    for (const u of users.slice(0, 40)) {
      const { data, response } = await ask(rig.client, "tone", { "x-user-id": u });
      assert.equal(data.model, served.get(u), `${u} stayed on its target`);
      assert.match(response.headers.get("x-ai-route-reason") ?? "", /target=tone-[ab]\((90|10)%\)/);
    }
  });

  it("keeps a tenant on one side of a split by default", async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) seen.add((await ask(rig.client, "tone-tenant")).data.model);
    assert.equal(seen.size, 1, `tenant team-a was served ${[...seen].join(", ")}`);
  });
});

describe("adapter slots", () => {
  let rig: Rig;
  let reps: SimReplica[];
  before(async () => {
    // One adapter slot per engine and real decode time, so an adapter stays running while we look.
    reps = [
      await replica("slot-0", ["tone-a", "tone-b"], "h100-llama8b", 1),
      await replica("slot-1", ["tone-a", "tone-b"], "h100-llama8b", 1),
    ];
    const pools = `
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: slots }
spec:
  engine: vllm
  model: base-8b
  loraAdapters: [tone-a, tone-b]
  endpoints: [${reps.map((r) => `{ url: "${r.url}", name: ${r.name} }`).join(", ")}]
  metrics: { intervalMs: 50 }
  health: { intervalMs: 100 }
`;
    const route = `${ROUTE_HEAD}
    slots:
      defaultPool: slots
      pools: [{ name: slots, maxInputTokens: 8192, maxOutputTokens: 4000 }]
`;
    rig = await startRig(
      pools,
      route,
      reps.map((r) => () => r.stop()),
    );
  });
  after(() => rig.stop());

  /** A long stream for `adapter`, left running; resolves with the endpoint it went to once it started. */
  async function holdSlot(adapter: string, controller: AbortController): Promise<string> {
    const { data: stream, response } = await rig.client.chat.completions
      .create(
        { model: adapter, messages: [{ role: "user", content: "long" }], max_tokens: 4000, stream: true },
        { signal: controller.signal },
      )
      .withResponse();
    const it = stream[Symbol.asyncIterator]();
    await it.next();
    return response.headers.get("x-ai-endpoint")!;
  }

  async function untilRunning(name: string, adapter: string): Promise<void> {
    const ep = [...rig.gw.pools.values()].flatMap((p) => p.endpoints).find((e) => e.name === name)!;
    for (const end = Date.now() + 10_000; Date.now() < end; ) {
      if (ep.loras?.running.includes(adapter)) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`${name} never reported ${adapter} running`);
  }

  it("with every slot busy, sends an adapter's requests to the engine that has it resident", async () => {
    const stop = new AbortController();
    try {
      const a = await holdSlot("tone-a", stop);
      await untilRunning(a, "tone-a");
      // tone-b cannot go where tone-a holds the only slot: it takes the other engine.
      const b = await holdSlot("tone-b", stop);
      assert.notEqual(b, a);
      await untilRunning(b, "tone-b");
      const loadsBefore = reps.map((r) => r.engine.lora.loads);
      for (let i = 0; i < 6; i++) {
        for (const [adapter, home] of [
          ["tone-a", a],
          ["tone-b", b],
        ] as const) {
          const { response } = await ask(rig.client, adapter);
          assert.equal(response.headers.get("x-ai-endpoint"), home, `${adapter} went to its resident engine`);
        }
      }
      assert.deepEqual(
        reps.map((r) => r.engine.lora.loads),
        loadsBefore,
        "no adapter was loaded or evicted for them",
      );
    } finally {
      stop.abort();
    }
  });
});

/** A gateway over `reps` (LoRA enabled, started without adapters) in one pool that declares `adapters`. */
function runtimeAdapterRig(reps: SimReplica[], engine: "vllm" | "sglang", adapters: string): Promise<Rig> {
  const pools = `
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: runtime }
spec:
  engine: ${engine}
  model: base-8b
  loraAdapters: ${adapters}
  endpoints: [${reps.map((r) => `{ url: "${r.url}", name: ${r.name} }`).join(", ")}]
  metrics: { intervalMs: 100 }
  health: { intervalMs: 100 }
`;
  const route = `${ROUTE_HEAD}
    runtime:
      defaultPool: runtime
      pools: [{ name: runtime, maxInputTokens: 8192, maxOutputTokens: 256 }]
`;
  return startRig(
    pools,
    route,
    reps.map((r) => () => r.stop()),
  );
}

describe("adapters the gateway registers", () => {
  let rig: Rig;
  let reps: SimReplica[];
  before(async () => {
    // Engines with LoRA enabled but started without the adapter: the pool says where it loads from.
    reps = [await replica("bare-0", [], "instant", 2), await replica("bare-1", [], "instant", 2)];
    rig = await runtimeAdapterRig(reps, "vllm", "[{ name: tone-x, path: /adapters/tone-x }, tone-listed]");
  });
  after(() => rig.stop());

  it("registers an adapter on an engine that lacks it, once however many requests wait", async () => {
    const served = await Promise.all(Array.from({ length: 8 }, () => ask(rig.client, "tone-x")));
    for (const { data } of served) assert.equal(data.model, "tone-x");
    const used = new Set(served.map((s) => s.response.headers.get("x-ai-endpoint")));
    const registered = rig.events.filter((e) => e.event === "endpoint.adapter-registered");
    assert.equal(registered.length, used.size, "one registration per engine used");
    for (const name of used) {
      const r = reps.find((x) => x.name === name)!;
      const models = (await (await fetch(`${r.url}/v1/models`)).json()) as { data: { id: string }[] };
      assert.ok(
        models.data.some((m) => m.id === "tone-x"),
        `${name} lists tone-x now`,
      );
    }
  });

  it("does not send an adapter without a path to engines that do not list it", async () => {
    await assert.rejects(ask(rig.client, "tone-listed"), (err: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(err.status, 503);
      assert.equal(err.code, "no_healthy_endpoint");
      assert.match(err.message, /no endpoint has adapter tone-listed registered/);
      return true;
    });
  });
});

describe("adapters the gateway registers on SGLang engines", () => {
  let rig: Rig;
  let reps: SimReplica[];
  before(async () => {
    reps = [await replica("sg-0", [], "instant", 2, null, "sglang")];
    rig = await runtimeAdapterRig(
      reps,
      "sglang",
      "[{ name: tone-x, path: /adapters/tone-x }, { name: tone-y, path: /adapters/tone-y }]",
    );
  });
  after(() => rig.stop());

  it("registers through SGLang's own route (POST /load_lora_adapter), not vLLM's", async () => {
    const { data } = await ask(rig.client, "tone-x");
    assert.equal(data.model, "tone-x");
    const registered = rig.events.filter((e) => e.event === "endpoint.adapter-registered");
    assert.deepEqual(
      registered.map((e) => e.fields.adapter),
      ["tone-x"],
    );
    // The engine has no vLLM route: a load there would have failed the request.
    const vllmRoute = await fetch(`${reps[0]!.url}/v1/load_lora_adapter`, { method: "POST", body: "{}" });
    assert.equal(vllmRoute.status, 404);
  });

  it("takes an adapter another gateway replica registered first as registered", async () => {
    // Loaded behind the gateway's back, before it next reads the engine's models: its load is refused
    // with the adapter among those the engine holds.
    const direct = await fetch(`${reps[0]!.url}/load_lora_adapter`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ lora_name: "tone-y", lora_path: "/adapters/tone-y" }),
    });
    assert.equal(direct.status, 200);
    const { data } = await ask(rig.client, "tone-y");
    assert.equal(data.model, "tone-y");
  });
});

describe("pinned model versions", () => {
  let rig: Rig;
  before(async () => {
    const reps = [await replica("v1-0", []), await replica("v2-0", [])];
    const pools = `
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: base-pool }
spec:
  engine: vllm
  model: base-8b
  modelVersion: base-8b-v1
  endpoints:
    - { url: "${reps[0]!.url}", name: v1-0 }
    - { url: "${reps[1]!.url}", name: v2-0, modelVersion: base-8b-v2 }
  metrics: { intervalMs: 100 }
  health: { intervalMs: 100 }
`;
    const route = `${ROUTE_HEAD}
    pinned:
      defaultPool: base-pool
      defaultVersion: base-8b-v2
      rollbackFrom: base-8b-v1
      pools: [{ name: base-pool, maxInputTokens: 8192, maxOutputTokens: 256 }]
    missing:
      defaultPool: base-pool
      defaultVersion: base-8b-v3
      pools: [{ name: base-pool, maxInputTokens: 8192, maxOutputTokens: 256 }]
    split:
      defaultPool: base-pool
      pools: [{ name: base-pool, maxInputTokens: 8192, maxOutputTokens: 256 }]
      targets: [{ modelVersion: base-8b-v1, weight: 1 }, { modelVersion: base-8b-v2, weight: 1 }]
      stickyBy: header:x-user-id
`;
    rig = await startRig(
      pools,
      route,
      reps.map((r) => () => r.stop()),
    );
  });
  after(() => rig.stop());

  it("never answers a pinned version from an endpoint running another", async () => {
    for (let i = 0; i < 30; i++) {
      const { response } = await ask(rig.client, "pinned");
      assert.equal(response.headers.get("x-ai-endpoint"), "v2-0");
      assert.equal(response.headers.get("x-ai-model-version"), "base-8b-v2");
    }
    assert.ok(
      rig.lines.filter((l) => l.model_alias === "pinned").every((l) => l.model_version === "base-8b-v2"),
    );
  });

  it("refuses with model_version_unavailable when no endpoint runs the version", async () => {
    await assert.rejects(ask(rig.client, "missing"), (err: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(err.status, 503);
      assert.equal(err.code, "model_version_unavailable");
      assert.match(err.message, /runs base-8b-v3.*running: base-8b-v1, base-8b-v2/);
      return true;
    });
  });

  it("splits between versions, each served by its own endpoints", async () => {
    for (let i = 0; i < 40; i++) {
      const { response } = await ask(rig.client, "split", { "x-user-id": `u${i}` });
      const version = response.headers.get("x-ai-model-version");
      const endpoint = response.headers.get("x-ai-endpoint");
      assert.equal(endpoint, version === "base-8b-v2" ? "v2-0" : "v1-0");
    }
  });
});

describe("versions the engines report", () => {
  let rig: Rig;
  before(async () => {
    // Both engines are configured alike; only their /v1/models (root /models/<version>) tells them apart.
    const reps = [
      await replica("r-old", [], "instant", 1, "base-8b-0610"),
      await replica("r-new", [], "instant", 1, "base-8b-0615"),
    ];
    const pools = `
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: rooted }
spec:
  engine: vllm
  model: base-8b
  models: { versionFrom: root }
  endpoints: [${reps.map((r) => `{ url: "${r.url}", name: ${r.name} }`).join(", ")}]
  metrics: { intervalMs: 100 }
  health: { intervalMs: 100 }
`;
    const route = `${ROUTE_HEAD}
    rolled-back:
      defaultPool: rooted
      defaultVersion: base-8b-0610
      rollbackFrom: base-8b-0615
      pools: [{ name: rooted, maxInputTokens: 8192, maxOutputTokens: 256 }]
`;
    rig = await startRig(
      pools,
      route,
      reps.map((r) => () => r.stop()),
    );
  });
  after(() => rig.stop());

  it("reads each engine's version from its /v1/models root and serves a pin only from it", async () => {
    const eps = [...rig.gw.pools.values()][0]!.endpoints;
    assert.deepEqual(
      eps.map((e) => [e.name, e.modelVersion]),
      [
        ["r-old", "base-8b-0610"],
        ["r-new", "base-8b-0615"],
      ],
    );
    for (let i = 0; i < 20; i++) {
      const { response } = await ask(rig.client, "rolled-back");
      assert.equal(response.headers.get("x-ai-endpoint"), "r-old");
      assert.equal(response.headers.get("x-ai-model-version"), "base-8b-0610");
    }
  });
});

describe("engines as they run: an upstream key and W3C trace context", () => {
  let rig: Rig;
  const seen: http.IncomingHttpHeaders[] = [];
  let engine: http.Server;
  before(async () => {
    // A minimal OpenAI-compatible engine that records what reaches it and, like vLLM with --api-key,
    // refuses /v1 requests without the key.
    engine = http.createServer((req, res) => {
      const path = req.url ?? "/";
      if (path === "/health") return void res.end("ok");
      if (path === "/metrics") return void res.end("vllm:num_requests_waiting 0\n");
      if (path.startsWith("/v1/") && req.headers.authorization !== "Bearer engine-secret-key") {
        res.writeHead(401, { "content-type": "application/json" });
        return void res.end('{"error":"Unauthorized"}');
      }
      if (path === "/v1/models") {
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end(
          '{"object":"list","data":[{"id":"base-8b","object":"model","root":"/m/base-8b","parent":null}]}',
        );
      }
      seen.push(req.headers);
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id: "x",
            object: "chat.completion",
            created: 0,
            model: "base-8b",
            choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
            usage: { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 },
          }),
        );
      });
    });
    await new Promise<void>((r) => engine.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(engine.address() as AddressInfo).port}`;
    process.env.TG_TEST_ENGINE_KEY = "engine-secret-key";
    const pools = `
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: keyed }
spec:
  engine: vllm
  model: base-8b
  upstreamAuth: { apiKeyEnv: TG_TEST_ENGINE_KEY }
  endpoints: ["${url}"]
  metrics: { intervalMs: 100 }
  health: { intervalMs: 100 }
`;
    const route = `${ROUTE_HEAD}
    keyed:
      defaultPool: keyed
      pools: [{ name: keyed, maxInputTokens: 8192, maxOutputTokens: 256 }]
`;
    rig = await startRig(pools, route, [() => new Promise<void>((r) => engine.close(() => r()))]);
  });
  after(() => rig.stop());

  it("fronts an engine started with --api-key, never passing on the caller's key", async () => {
    const { data } = await ask(rig.client, "keyed");
    assert.equal(data.choices[0]!.message.content, "ok");
    const h = seen.at(-1)!;
    assert.equal(h.authorization, "Bearer engine-secret-key");
    assert.ok(!JSON.stringify(rig.lines).includes("engine-secret-key"), "the key is never logged");
    assert.ok(!JSON.stringify(rig.gw.config).includes("engine-secret-key"), "nor shown with the config");
  });

  it("continues the caller's traceparent to the engine and logs its trace id", async () => {
    const caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    await ask(rig.client, "keyed", { traceparent: caller, tracestate: "vendor=1" });
    const h = seen.at(-1)!;
    const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(h.traceparent));
    assert.ok(m, `traceparent ${h.traceparent}`);
    assert.equal(m[1], "4bf92f3577b34da6a3ce929d0e0e4736", "same trace");
    assert.notEqual(m[2], "00f067aa0ba902b7", "the gateway's own span is the parent");
    assert.equal(h.tracestate, "vendor=1");
    const line = rig.lines.at(-1)!;
    assert.equal(line.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    // Without one, the gateway starts a trace and still sends it.
    await ask(rig.client, "keyed");
    assert.match(String(seen.at(-1)!.traceparent), /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    assert.match(rig.lines.at(-1)!.trace_id, /^[0-9a-f]{32}$/);
  });
});
