// The gateway with a pool found by Kubernetes discovery, end to end: a fake API server that speaks list
// and watch as the real one does (src/testing/fake-kube-api.ts), simulated engines as the pods (each on
// its own loopback address, all on the InferencePool's one target port), the gateway reading a
// kubeconfig that points at the fake, and the official openai client. A pod that turns Ready takes
// traffic; one deleted mid-stream finishes its stream and gets nothing new; the API server going away
// keeps the last known pods (readiness and metrics say so) and its return brings the changes made
// meanwhile.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { freePort } from "../bench/services/nginx.js";
import { loadConfigTexts } from "../config/loader.js";
import { makeEngineConfig } from "../sim/engine-config.js";
import { SimReplica } from "../sim/replica.js";
import type { RequestLogLine } from "../telemetry/request-log.js";
import { FakeKubeApi } from "../testing/fake-kube-api.js";
import { writeKubeconfig } from "../testing/fake-kube-api-objects.js";
import { Gateway } from "./gateway.js";

const KEY = "sk-discovery-test-0001";
const LABELS = { app: "vllm-chat" };

async function until<T>(what: string, probe: () => T | null | undefined | false, ms = 15_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 25))) {
    const v = probe();
    if (v) return v;
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("a pool whose engines are the Ready pods of an InferencePool", () => {
  let api: FakeKubeApi;
  let gw: Gateway;
  let dir: string;
  let port: number;
  const engines = new Map<string, SimReplica>();
  const lines: RequestLogLine[] = [];

  const startEngine = async (ip: string) => {
    const e = new SimReplica({
      name: ip,
      host: ip,
      port,
      engine: makeEngineConfig("h100-llama8b", "base-8b", { maxModelLen: 8192 }),
      seed: engines.size + 1,
    });
    await e.start();
    engines.set(ip, e);
  };
  const endpoints = () => [...gw.pools.get("chat")!.endpoints].map((e) => e.name).sort();
  const client = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
  const ask = (content: string) =>
    client().chat.completions.create({ model: "chat", messages: [{ role: "user", content }], max_tokens: 8 });

  before(async () => {
    port = await freePort();
    await startEngine("127.0.0.2");
    await startEngine("127.0.0.3");
    api = await FakeKubeApi.start();
    api.setInferencePool({ name: "vllm-chat", namespace: "llm", matchLabels: LABELS, targetPorts: [port] });
    api.addPod({ name: "vllm-0", namespace: "llm", labels: LABELS, ip: "127.0.0.2" });
    api.addPod({ name: "vllm-1", namespace: "llm", labels: LABELS, ip: "127.0.0.3", ready: false });
    dir = mkdtempSync(join(tmpdir(), "tg-discovery-"));
    const kubeconfig = writeKubeconfig(dir, api.url, api.token, "llm");
    const loaded = loadConfigTexts({
      "pools.yaml": `
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: chat }
spec:
  engine: vllm
  model: base-8b
  discovery: { kubernetes: { inferencePool: vllm-chat, namespace: llm } }
  metrics: { intervalMs: 100 }
  health: { intervalMs: 100 }
`,
      "route.yaml": `
apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata: { name: r, annotations: { ai.example.com/route-config-version: "discovery-r1" } }
spec:
  modelAliases:
    chat: { defaultPool: chat, pools: [{ name: chat, maxInputTokens: 8192, maxOutputTokens: 512 }] }
`,
      "gateway.yaml": `
apiVersion: tokengate.dev/v1alpha1
kind: GatewayConfig
metadata: { name: g }
spec:
  listen: { host: 127.0.0.1, port: 0 }
  auth: { apiKeys: [{ key: ${KEY}, tenant: t }] }
  kubernetes: { kubeconfig: "${kubeconfig}" }
`,
    });
    if (!loaded.ok) throw new Error(loaded.errors.map((e) => e.message).join("\n"));
    gw = new Gateway(loaded.config, { logDestination: "none" });
    gw.log.listener = (l) => lines.push(l);
    await gw.start();
  });
  after(async () => {
    await gw?.stop();
    await api?.stop();
    for (const e of engines.values()) await e.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("starts with the Ready pods, and a pod that turns Ready takes traffic", async () => {
    assert.deepEqual(endpoints(), ["vllm-0"], "the not-ready pod is not an endpoint");
    const r = await ask("你好");
    assert.ok(r.choices[0]?.message.content);
    assert.equal(lines.at(-1)!.endpoint, "vllm-0");
    api.updatePod("vllm-1", { ready: true }, "llm");
    await until("vllm-1 to join", () => endpoints().length === 2);
    const ep = gw.pools.get("chat")!.endpoints.find((e) => e.name === "vllm-1")!;
    await until("vllm-1 healthy", () => ep.routable(Date.now()));
    const served = new Set<string>();
    for (let i = 0; i < 12 && served.size < 2; i++) {
      await ask(`问题 ${i}`);
      served.add(lines.at(-1)!.endpoint!);
    }
    assert.deepEqual([...served].sort(), ["vllm-0", "vllm-1"]);
  });

  it("finishes a stream on a pod deleted mid-stream, and sends that pod nothing new", async () => {
    // A long answer on vllm-1, then vllm-1 is deleted while it streams.
    const stream = await client().chat.completions.create(
      { model: "chat", messages: [{ role: "user", content: "写一份长报告" }], max_tokens: 400, stream: true },
      { headers: { "x-ai-session-id": "s-1" } },
    );
    let text = "";
    let deleted = false;
    let on: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      if (!deleted && text.length > 20) {
        on = [...gw.pools.get("chat")!.endpoints].find((e) => e.inflightRequests > 0)?.name ?? null;
        api.deletePod(on === "vllm-0" ? "vllm-0" : "vllm-1", { namespace: "llm" });
        deleted = true;
        await until("the deleted pod to leave the pool", () => !endpoints().includes(on!));
      }
    }
    assert.ok(deleted && on !== null);
    assert.equal(lines.at(-1)!.status, "ok", "the stream on the deleted pod finished");
    assert.equal(lines.at(-1)!.endpoint, on);
    for (let i = 0; i < 4; i++) {
      await ask(`之后 ${i}`);
      assert.notEqual(lines.at(-1)!.endpoint, on, "nothing new goes to the deleted pod");
    }
    api.removePod(on!, "llm");
  });

  it("keeps the last known pods while the API server is down, says so, and catches up when it is back", async () => {
    const before = endpoints();
    await api.stop();
    await until("discovery to see the API gone", () => gw.discoveryStatus().get("chat")?.connected === false);
    assert.deepEqual(endpoints(), before, "the last known pods stay");
    const ready = await fetch(`${gw.url}/ready`);
    const body = (await ready.json()) as {
      ready: boolean;
      discovery: Record<string, { api_reachable: boolean }>;
    };
    assert.equal(ready.status, 200, "still serving its last known pods");
    assert.equal(body.discovery.chat!.api_reachable, false);
    const metrics = await (await fetch(`${gw.adminUrl}/metrics`)).text();
    assert.match(metrics, /ai_gateway_discovery_api_reachable\{pool="chat"\} 0/);
    await ask("API 不在的时候");
    // While it was down a new pod became Ready; the API comes back.
    await startEngine("127.0.0.4");
    api.addPod({ name: "vllm-2", namespace: "llm", labels: LABELS, ip: "127.0.0.4" });
    await api.start();
    await until("vllm-2 to be found", () => endpoints().includes("vllm-2"), 20_000);
    await until("discovery synced", () => gw.discoveryStatus().get("chat")?.synced === true);
    const m2 = await (await fetch(`${gw.adminUrl}/metrics`)).text();
    assert.match(m2, /ai_gateway_discovery_api_reachable\{pool="chat"\} 1/);
    assert.match(m2, /ai_gateway_discovery_endpoints\{pool="chat",state="ready"\} \d/);
  });
});
