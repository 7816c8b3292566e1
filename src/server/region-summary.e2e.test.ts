// A gateway's region summary (`GET /admin/region/summary`, what a `tokengate director` polls): the
// models and versions served and whether each can take traffic, each pool's headroom falling as its
// engines fill or fail, the TTFT P95 and error rate of recent requests, draining; on both listeners,
// without the admin token.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { loadConfigTexts } from "../config/loader.js";
import type { RegionSummary } from "../director/director-types.js";
import { makeEngineConfig } from "../sim/engine-config.js";
import { SimReplica } from "../sim/replica.js";
import { RegionWindow } from "../telemetry/region-window.js";
import { onePoolConfig } from "../testing/cli-gateway.js";
import { Gateway } from "./gateway.js";

const KEY = "sk-region-summary-01";

describe("the region summary a director polls", () => {
  const engines: SimReplica[] = [];
  let gw: Gateway;
  const summary = async (base: string) =>
    (await (await fetch(`${base}/admin/region/summary`)).json()) as RegionSummary;

  before(async () => {
    for (let i = 0; i < 2; i++) {
      const e = new SimReplica({
        name: `e${i}`,
        port: 0,
        engine: makeEngineConfig("h100-llama8b", "m-base", { maxModelLen: 4096 }),
        seed: i + 1,
      });
      await e.start();
      engines.push(e);
    }
    const loaded = loadConfigTexts({
      "config.yaml": onePoolConfig({
        endpoints: engines.map((e) => e.url),
        version: "region-r1",
        maxOutputTokens: 256,
        gateway: `  auth: { apiKeys: [{ key: ${KEY}, tenant: t }] }
  region: { name: eu-west }`,
      }),
    });
    if (!loaded.ok) throw new Error(loaded.errors.map((e) => e.message).join("\n"));
    gw = new Gateway(loaded.config, { logDestination: "none" });
    await gw.start();
    const eps = [...gw.pools.values()][0]!.endpoints;
    for (const end = Date.now() + 10_000; Date.now() < end && !eps.every((e) => e.routable(Date.now())); )
      await new Promise((r) => setTimeout(r, 20));
  });
  after(async () => {
    await gw?.stop();
    for (const e of engines) await e.stop();
  });

  it("says what is served and how much room is left, on both listeners, without a token", async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    for (let i = 0; i < 6; i++) {
      const s = await client.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: `问题 ${i}` }],
        max_tokens: 8,
        stream: true,
      });
      for await (const _ of s);
    }
    const s = await summary(gw.url);
    assert.equal(s.region, "eu-west");
    assert.equal(s.draining, false);
    assert.equal(s.configVersion, "region-r1");
    assert.deepEqual(s.models, [{ alias: "m", versions: [{ version: "m-base", ready: true }], ready: true }]);
    const [pool] = s.pools;
    assert.equal(pool?.routableEndpoints, 2);
    assert.ok(pool!.headroom > 0.5 && pool!.headroom <= 1, `an idle pool has room (${pool!.headroom})`);
    assert.equal(s.headroomByModel.m, pool!.headroom);
    assert.equal(s.window.requests, 6);
    assert.ok(s.window.ttftP95Ms !== null && s.window.ttftP95Ms >= 0);
    assert.equal(s.window.errorRate, 0);
    assert.ok(Math.abs(s.computedAt - Date.now()) < 5000);
    assert.deepEqual(Object.keys(await summary(gw.adminUrl)).sort(), Object.keys(s).sort());
  });

  it("loses headroom with an engine gone, and none when no engine is left", async () => {
    const before = (await summary(gw.url)).pools[0]!.headroom;
    await engines[1]!.stop();
    const ep = [...gw.pools.values()][0]!.endpoints[1]!;
    for (const end = Date.now() + 10_000; Date.now() < end && ep.routable(Date.now()); )
      await new Promise((r) => setTimeout(r, 20));
    const half = await summary(gw.url);
    assert.equal(half.pools[0]!.routableEndpoints, 1);
    assert.ok(half.pools[0]!.headroom <= before / 2 + 0.01, `${half.pools[0]!.headroom} ≤ half of ${before}`);
    await engines[0]!.stop();
    const ep0 = [...gw.pools.values()][0]!.endpoints[0]!;
    for (const end = Date.now() + 10_000; Date.now() < end && ep0.routable(Date.now()); )
      await new Promise((r) => setTimeout(r, 20));
    const none = await summary(gw.url);
    assert.equal(none.models[0]!.ready, false);
    assert.equal(none.headroomByModel.m, 0);
  });
});

describe("the region window", () => {
  it("counts the last minute's answers, their TTFT P95 and the share that failed", () => {
    const w = new RegionWindow(60_000);
    for (let i = 0; i < 100; i++) w.record(1_000 + i, i < 95 ? 50 : 500, i % 10 === 0);
    w.record(70_000, Number.NaN, false);
    const s = w.summary(70_500);
    assert.equal(s.requests, 1, "only the answer of the last minute");
    const all = w.summary(2_000);
    assert.equal(all.requests, 101);
    assert.equal(all.ttftP95Ms, 50);
    assert.ok(Math.abs(all.errorRate - 10 / 101) < 1e-9);
    assert.equal(new RegionWindow().summary(0).ttftP95Ms, null);
  });
});
