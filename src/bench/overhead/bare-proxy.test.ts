import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { makeEngineConfig } from "../../sim/engine-config.js";
import { SimReplica } from "../../sim/replica.js";
import { type BareProxy, startBareProxy } from "./bare-proxy.js";

describe("the bare Node proxy (the overhead benchmark's reference path)", () => {
  const replicas: SimReplica[] = [];
  let proxy: BareProxy;
  before(async () => {
    for (const name of ["a", "b"]) {
      const r = new SimReplica({ name, port: 0, engine: makeEngineConfig("instant", "m"), seed: 1 });
      await r.start();
      replicas.push(r);
    }
    proxy = await startBareProxy(
      0,
      replicas.map((r) => r.url),
    );
  });
  after(async () => {
    await proxy.close();
    await Promise.all(replicas.map((r) => r.stop()));
  });

  const post = (body: object) =>
    fetch(`${proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hello there" }], ...body }),
    });

  it("passes replies through, whole and streamed, and spreads them over the engines", async () => {
    const whole = await post({ max_tokens: 4 });
    assert.equal(whole.status, 200);
    assert.equal(
      ((await whole.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens,
      4,
    );
    const streams = await Promise.all(Array.from({ length: 6 }, () => post({ max_tokens: 4, stream: true })));
    for (const s of streams) {
      assert.match(s.headers.get("content-type") ?? "", /^text\/event-stream/);
      assert.ok((await s.text()).trimEnd().endsWith("data: [DONE]"));
    }
    for (const r of replicas) assert.ok(r.engine.stats.finished.length > 0, `${r.url} served nothing`);
  });

  it("passes an engine's refusal on with its status", async () => {
    const res = await post({ max_tokens: 10_000_000 });
    assert.equal(res.status, 400);
    assert.match(await res.text(), /maximum context length/);
  });
});
