// `tokengate epp`'s picker end to end: a gateway in front of three simulated engines, its ext_proc
// server, and a gRPC client that plays Envoy — it sends the request as Envoy does (headers, body chunks,
// end of stream), takes the destination the reply names, sends the request to that engine itself, and
// passes the engine's response back through the stream (headers with the served endpoint, body chunks)
// as Envoy would. The destination is an endpoint of the pool, header and metadata agree, the subset hint
// is obeyed, nothing eligible gives 503, shedding gives 429, the picker's choice is the gateway's own
// (its explain for the same request), and every exit path gives back the lease it took.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { loadConfigTexts } from "../config/loader.js";
import type { ProcessingResponse } from "../epp/protos.js";
import { type EppServer, startEppServer } from "../epp/server.js";
import { makeEngineConfig } from "../sim/engine-config.js";
import { SimReplica } from "../sim/replica.js";
import type { RequestLogLine } from "../telemetry/request-log.js";
import { EnvoyExtProcStream, setHeaderValue, streamedChunks } from "../testing/envoy-ext-proc-client.js";
import { addressOf, GatewayEppPicker } from "./epp-picker.js";
import { explainRequest } from "./explain.js";
import { Gateway } from "./gateway.js";

const KEY = "sk-epp-test-0001";

function config(urls: readonly string[]) {
  return {
    "pools.yaml": `
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: p }
spec:
  engine: vllm
  model: base-8b
  endpoints: [${urls.map((u) => `"${u}"`).join(", ")}]
  metrics: { intervalMs: 100 }
  health: { intervalMs: 100 }
  flowControl: { maxInflight: 2, maxQueuedRequests: 1 }
`,
    "route.yaml": `
apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata: { name: r, annotations: { ai.example.com/route-config-version: "epp-r1" } }
spec:
  modelAliases:
    chat: { defaultPool: p, pools: [{ name: p, maxInputTokens: 8192, maxOutputTokens: 512, maxQueueMs: 10000 }] }
`,
    "gateway.yaml": `
apiVersion: tokengate.dev/v1alpha1
kind: GatewayConfig
metadata: { name: g }
spec:
  listen: { host: 127.0.0.1, port: 0 }
  auth: { apiKeys: [{ key: ${KEY}, tenant: t }] }
`,
  };
}

const headersOf = (path = "/v1/chat/completions") => ({
  ":method": "POST",
  ":path": path,
  ":authority": "gateway.example",
  "content-type": "application/json",
  authorization: `Bearer ${KEY}`,
});

const chat = (stream: boolean, content = "请总结这张工单：客户说订单没到。") =>
  JSON.stringify({
    model: "chat",
    messages: [{ role: "user", content }],
    max_tokens: 16,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  });

/** The destination a reply names: its header, and its envoy.lb metadata list. */
function destination(replies: readonly ProcessingResponse[]) {
  const first = replies.find((r) => r.request_headers);
  const header = setHeaderValue(first, "x-gateway-destination-endpoint");
  const md =
    first?.dynamic_metadata?.fields?.["envoy.lb"]?.structValue?.fields?.["x-gateway-destination-endpoint"]
      ?.stringValue;
  return { header, list: md?.split(",") ?? [] };
}

describe("tokengate epp: the gateway's picker behind Envoy's ext_proc", () => {
  const engines: SimReplica[] = [];
  let gw: Gateway;
  let epp: EppServer;
  let address: string;
  const lines: RequestLogLine[] = [];

  before(async () => {
    for (let i = 0; i < 3; i++) {
      const e = new SimReplica({
        name: `e${i}`,
        port: 0,
        engine: makeEngineConfig("h100-llama8b", "base-8b", { maxModelLen: 8192 }),
        seed: i + 1,
      });
      await e.start();
      engines.push(e);
    }
    const loaded = loadConfigTexts(config(engines.map((e) => e.url)));
    if (!loaded.ok) throw new Error(loaded.errors.map((e) => e.message).join("\n"));
    gw = new Gateway(loaded.config, { logDestination: "none" });
    gw.log.listener = (l) => lines.push(l);
    await gw.start();
    const eps = [...gw.pools.values()][0]!.endpoints;
    for (const end = Date.now() + 15_000; Date.now() < end && !eps.every((e) => e.routable(Date.now())); )
      await new Promise((r) => setTimeout(r, 20));
    epp = await startEppServer({
      host: "127.0.0.1",
      port: 0,
      picker: new GatewayEppPicker(gw),
      ready: () => true,
    });
    address = `127.0.0.1:${epp.port}`;
  });
  after(async () => {
    await epp?.close();
    await gw?.stop();
    for (const e of engines) await e.stop();
  });

  const inFlight = () => [...gw.pools.values()][0]!.endpoints.reduce((n, e) => n + e.inflightRequests, 0);

  /** One exchange played as Envoy plays it, the request really sent to the destination named. */
  async function exchange(body: string, opts: { subset?: string[]; chunks?: number } = {}) {
    const s = new EnvoyExtProcStream(address);
    const parts = opts.chunks ?? 1;
    const size = Math.ceil(body.length / parts);
    s.sendRequestHeaders(headersOf(), false, opts.subset);
    for (let i = 0; i < parts; i++) s.sendRequestBody(body.slice(i * size, (i + 1) * size), i === parts - 1);
    const answered = await s.readUntil(
      (r) => !!r.request_body?.response?.body_mutation?.streamed_response?.end_of_stream,
    );
    const refused = answered.find((r) => r.immediate_response)?.immediate_response;
    if (refused) {
      s.halfClose();
      await s.status;
      return { refused, dest: null, chunks: [] as Buffer[], replies: s.replies };
    }
    const dest = destination(answered);
    const sent = Buffer.concat(streamedChunks(answered, "request").map((c) => c.body));
    assert.equal(sent.toString(), body, "the body goes on to the engine unchanged");
    const upstream = await fetch(`http://${dest.header}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: sent.toString().replace('"model":"chat"', '"model":"base-8b"'),
    });
    const payload = Buffer.from(await upstream.arrayBuffer());
    const pieces = [
      payload.subarray(0, Math.floor(payload.length / 2)),
      payload.subarray(Math.floor(payload.length / 2)),
    ];
    s.sendResponseHeaders(
      { ":status": String(upstream.status), "content-type": "application/json" },
      false,
      dest.header,
    );
    for (const [i, p] of pieces.entries()) s.sendResponseBody(p, i === pieces.length - 1);
    await s.readUntil((r) => !!r.response_body?.response?.body_mutation?.streamed_response?.end_of_stream);
    s.halfClose();
    await s.status;
    const back = streamedChunks(s.replies, "response").map((c) => c.body);
    assert.ok(Buffer.concat(back).equals(payload), "the response comes back unchanged");
    return { refused: null, dest, chunks: back, replies: s.replies };
  }

  it("routes a request to an endpoint of the pool, header and metadata agreeing, and settles it", async () => {
    const pool = [...gw.pools.values()][0]!;
    const addresses = pool.endpoints.map(addressOf);
    const r = await exchange(chat(false));
    assert.ok(r.dest && addresses.includes(r.dest.header!), `${r.dest?.header} is an endpoint of the pool`);
    assert.equal(r.dest.list[0], r.dest.header, "header and metadata name the same endpoint first");
    assert.deepEqual(
      [...r.dest.list].sort(),
      [...addresses].sort(),
      "the rest of the pool follows, for retries",
    );
    assert.equal(inFlight(), 0, "the lease is given back when the response ends");
    const line = lines.at(-1)!;
    assert.equal(line.status, "ok");
    assert.equal(line.tenant, "t");
    assert.equal(line.endpoint, pool.endpoints.find((e) => addressOf(e) === r.dest!.header)!.name);
    assert.ok((line.output_tokens ?? 0) > 0, "usage read from the response");
  });

  it("routes a streaming request sent in several chunks, the SSE passed back as it came", async () => {
    const r = await exchange(chat(true), { chunks: 3 });
    assert.ok(r.dest);
    assert.match(Buffer.concat(r.chunks).toString(), /data: \[DONE\]/);
    const line = lines.at(-1)!;
    assert.equal(line.stream, true);
    assert.ok(line.ttft_ms !== null && line.ttft_ms >= 0, "the first response chunk is the first token");
    assert.ok((line.output_tokens ?? 0) > 0);
    assert.equal(inFlight(), 0);
  });

  it("obeys the subset hint, and answers 503 when none of it is eligible", async () => {
    const only = addressOf([...gw.pools.values()][0]!.endpoints[2]!);
    for (let i = 0; i < 3; i++) {
      const r = await exchange(chat(false, `第${i}张`), { subset: [only] });
      assert.equal(r.dest?.header, only);
      assert.deepEqual(r.dest?.list, [only], "fallbacks stay inside the subset");
    }
    const none = await exchange(chat(false), { subset: ["10.255.0.1:8000"] });
    assert.equal(none.refused?.status?.code, 503);
    assert.match(String(none.refused?.body), /no_healthy_endpoint/);
    assert.equal(inFlight(), 0);
  });

  it("chooses as the gateway itself would for the same request", async () => {
    // A long shared prefix makes the choice the scores' (prefix affinity), not a coin's: with every
    // score tied both doors fall back to a random pick of two.
    const prefix = "以下是客服系统的工单处理规范，请严格遵守。".repeat(120);
    const first = await exchange(chat(false, `${prefix} 第一张工单`));
    for (let i = 0; i < 3; i++) {
      const body = chat(false, `${prefix} 工单 ${i}: 订单状态？`);
      const explained = explainRequest(gw, "chat", JSON.parse(body), headersOf() as never, "t") as {
        pick: { endpoint: string; mode: string };
      };
      const r = await exchange(body);
      const chosen = [...gw.pools.values()][0]!.endpoints.find((e) => addressOf(e) === r.dest!.header)!;
      assert.equal(explained.pick.mode, "metrics", "decided by the scores");
      assert.equal(chosen.name, explained.pick.endpoint, "one picker, two front doors");
      assert.equal(r.dest!.header, first.dest!.header, "the prefix's endpoint");
      assert.equal(lines.at(-1)!.pick_mode, "metrics");
    }
  });

  it("sheds with 429 when flow control's queue is full, and 404 for a path it does not route", async () => {
    // Two in flight on each of three engines (maxInflight 2) and one queued: the next is shed.
    const held: EnvoyExtProcStream[] = [];
    for (let i = 0; i < 7; i++) {
      const s = new EnvoyExtProcStream(address);
      s.sendRequestHeaders(headersOf(), false);
      s.sendRequestBody(chat(true, `hold ${i}`), true);
      held.push(s);
    }
    // Six are routed; the seventh waits in the queue (maxQueueMs 10 s: still there however slow the machine).
    for (const s of held.slice(0, 6)) await s.readUntil((r) => !!r.request_headers);
    const shed = new EnvoyExtProcStream(address);
    shed.sendRequestHeaders(headersOf(), false);
    shed.sendRequestBody(chat(true, "one too many"), true);
    const [reply] = await shed.readUntil(() => true);
    assert.equal(reply?.immediate_response?.status?.code, 429);
    assert.match(String(reply?.immediate_response?.body), /queue_full/);
    shed.halfClose();
    await shed.status;
    // Envoy gives up on all of them: every lease comes back, the queued one's too.
    for (const s of held) s.cancel();
    await Promise.all(held.map((s) => s.status));
    for (let end = Date.now() + 5000; inFlight() > 0 && Date.now() < end; )
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(inFlight(), 0, "no lease leaks from cancelled exchanges");

    const s = new EnvoyExtProcStream(address);
    s.sendRequestHeaders(headersOf("/v1/embeddings"), false);
    s.sendRequestBody("{}", true);
    const [r404] = await s.readUntil(() => true);
    assert.equal(r404?.immediate_response?.status?.code, 404);
    s.halfClose();
    await s.status;
  });
});
