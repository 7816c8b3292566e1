import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { request } from "undici";
import { makeEngineConfig } from "../../sim/engine-config.js";
import { SimReplica } from "../../sim/replica.js";
import { missingService } from "../../testing/system-services.js";
import {
  findNginx,
  type NginxBalance,
  nginxConf,
  type RunningNginx,
  startBaseline,
  startNginx,
} from "./nginx.js";

const NO_NGINX = missingService("nginx");

// A real-time profile, so a 2,000-token stream holds its replica for seconds.
async function replica(name: string): Promise<SimReplica> {
  const r = new SimReplica({ name, port: 0, engine: makeEngineConfig("h100-llama8b", "m"), seed: 3 });
  await r.start();
  return r;
}

async function chat(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; json: any }> {
  const res = await request(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-request-id": "req-through-nginx", ...headers },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 4 }),
  });
  return { status: res.statusCode, headers: res.headers, json: await res.body.json() };
}

const served = (r: SimReplica) => r.engine.stats.finished.length + r.engine.stats.finished.stop;
const busy = (r: SimReplica) => r.engine.numRunning + r.engine.numWaiting;

describe("nginx config", () => {
  const base = { upstreams: ["http://127.0.0.1:8001", "http://127.0.0.1:8002"], port: 9000, prefix: "/p" };
  const conf = (balance: NginxBalance) => nginxConf({ ...base, balance, without: new Set() });

  it("lists every upstream without passive ejection, with least_conn only when asked", () => {
    assert.match(conf("least_conn"), /upstream llm \{\n {4}least_conn;\n/);
    assert.doesNotMatch(conf("round_robin"), /least_conn/);
    assert.match(
      conf("round_robin"),
      /server 127\.0\.0\.1:8001 max_fails=0;\n {4}server 127\.0\.0\.1:8002 max_fails=0;/,
    );
  });

  it("streams without buffering over kept-alive HTTP/1.1 upstream connections", () => {
    const c = conf("least_conn");
    for (const d of ["proxy_buffering off;", "proxy_http_version 1.1;", 'Connection "";', "keepalive 256;"]) {
      assert.ok(c.includes(d), d);
    }
    assert.match(c, /daemon off;/);
    assert.match(c, /listen 127\.0\.0\.1:9000;/);
  });

  it("writes random and consistent hashing on X-Prefix-Group for the harness's other baselines", () => {
    assert.match(conf("random"), /upstream llm \{\n {4}random;\n/);
    assert.match(conf("prefix_hash"), /hash \$http_x_prefix_group consistent;/);
  });

  it("finds no binary where there is none", () => {
    assert.equal(findNginx(["/nonexistent"]), null);
  });
});

describe("nginx baseline router with two simulated replicas", () => {
  let a: SimReplica;
  let b: SimReplica;
  before(async () => {
    a = await replica("a");
    b = await replica("b");
  });
  after(async () => {
    await a.stop();
    await b.stop();
  });

  it("round robin reaches both replicas and returns the engine's response", async (t) => {
    if (NO_NGINX) return t.skip(NO_NGINX);
    const n = (await startNginx({ upstreams: [a.url, b.url], balance: "round_robin" })) as RunningNginx;
    try {
      a.reset();
      b.reset();
      for (let i = 0; i < 6; i++) {
        const res = await chat(n.url);
        assert.equal(res.status, 200);
        assert.equal(res.json.object, "chat.completion");
        assert.match(res.json.id, /^chatcmpl-/);
        assert.equal(res.json.usage.completion_tokens, 4);
        // Headers only the engine sets come through unchanged.
        assert.equal(res.headers["x-request-id"], "req-through-nginx");
        assert.match(String(res.headers["server-timing"]), /queue;dur=/);
      }
      assert.equal(served(a), 3);
      assert.equal(served(b), 3);
    } finally {
      await n.stop();
    }
  });

  it("least_conn sends new requests to the idle replica while the other holds a long stream", async (t) => {
    if (NO_NGINX) return t.skip(NO_NGINX);
    const n = (await startNginx({ upstreams: [a.url, b.url], balance: "least_conn" })) as RunningNginx;
    try {
      a.reset();
      b.reset();
      const stream = await request(`${n.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "m",
          messages: [{ role: "user", content: "write a long story" }],
          max_tokens: 2000,
          ignore_eos: true,
          stream: true,
        }),
      });
      assert.equal(stream.statusCode, 200);
      const first = await stream.body[Symbol.asyncIterator]().next();
      assert.match(String(first.value), /^data: /);
      const [holder, idle] = busy(a) === 1 ? [a, b] : [b, a];
      assert.equal(busy(holder), 1);
      for (let i = 0; i < 4; i++) assert.equal((await chat(n.url)).status, 200);
      assert.equal(served(idle), 4);
      assert.equal(served(holder), 0);
      assert.equal(busy(holder), 1, "the long stream is still running");
      stream.body.destroy();
    } finally {
      await n.stop();
    }
  });

  it("prefix_hash keeps each prefix group on one replica", async (t) => {
    if (NO_NGINX) return t.skip(NO_NGINX);
    const n = (await startBaseline("prefix-sticky", [a.url, b.url])) as RunningNginx;
    try {
      const landed = new Map<string, Set<string>>();
      for (let i = 0; i < 24; i++) {
        const group = `group-${i % 6}`;
        const before = served(a);
        assert.equal((await chat(n.url, { "x-prefix-group": group })).status, 200);
        const where = served(a) > before ? "a" : "b";
        landed.set(group, (landed.get(group) ?? new Set()).add(where));
      }
      for (const [group, replicas] of landed) assert.equal(replicas.size, 1, group);
    } finally {
      await n.stop();
    }
  });

  it("stop() ends nginx and frees its port", async (t) => {
    if (NO_NGINX) return t.skip(NO_NGINX);
    const n = (await startNginx({ upstreams: [a.url], balance: "least_conn" })) as RunningNginx;
    await n.stop();
    assert.throws(() => process.kill(n.pid, 0));
    await assert.rejects(request(`${n.url}/health`));
  });
});
