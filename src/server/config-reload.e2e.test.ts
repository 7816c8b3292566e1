// Changing a running gateway's config, end to end: real simulated engines, the official openai client,
// the admin API with its token. A reload under streaming load fails no request; an engine a reload
// removes finishes its streams and then leaves; a config that fails validation, or names a version that
// is no longer running, changes nothing; the admin surface refuses a missing or wrong token and the
// public listener does not serve it.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { ConfigControl } from "../control/config-control.js";
import { ConfigHistory } from "../control/config-history.js";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import { openaiClient, type Platform, startPlatform, versionWatch } from "../testing/platform.js";
import { streamingLoad } from "../testing/streaming-load.js";

const LIVE = { "x-ai-task": "live_ticket_summary", "x-ai-request-class": "interactive" };

/** The platform's config with its route version renamed and one more edit. */
function variant(p: Platform, version: string, edit: (files: Record<string, string>) => void = () => {}) {
  const files = { ...p.configTexts };
  files["route.yaml"] = files["route.yaml"]!.replace('"test-r1"', `"${version}"`);
  edit(files);
  return files;
}

/** pools.yaml with summary-online listing only its first engine. */
function withoutSecondOnline(p: Platform) {
  return (files: Record<string, string>) => {
    const second = p.replicas.online[1]!.url;
    files["pools.yaml"] = files["pools.yaml"]!.replace(`, "${second}"`, "").replace(`"${second}", `, "");
    assert.ok(!files["pools.yaml"]!.includes(second), "the second online engine is gone from pools.yaml");
  };
}

async function post(p: Platform, path: string, body: unknown, token?: string) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  const res =
    token === undefined
      ? await p.admin(path, { method: "POST", headers, body: JSON.stringify(body) })
      : await fetch(`${p.gateway.adminUrl}${path}`, {
          method: "POST",
          headers: { ...headers, authorization: `Bearer ${token}` },
          body: JSON.stringify(body),
        });
  return { status: res.status, body: (await res.json()) as any };
}

describe("config changes on a running gateway", () => {
  let p: Platform;
  let history: ConfigHistory;
  before(async () => {
    // Engines with a real step law, so streams last long enough to be in flight during a reload.
    p = await startPlatform({ profile: "h100-llama8b", online: 2 });
    history = new ConfigHistory(":memory:");
    const control = new ConfigControl(history, null, {}, (e, f) => p.gateway.log.event(e, f));
    const first = await control.apply({
      files: p.configTexts,
      replaces: null,
      actor: "test",
      action: "start",
    });
    assert.ok(first.ok);
    control.attach(p.gateway);
    p.gateway.control = control;
  });
  after(async () => {
    await p.stop();
    history.close();
  });

  it("the admin surface: its own listener, behind the token; the public one serves neither it nor /metrics", async () => {
    const url = p.gateway.adminUrl;
    assert.notEqual(url, p.url);
    const none = await fetch(`${url}/admin/config`);
    assert.equal(none.status, 401);
    assert.match(none.headers.get("www-authenticate") ?? "", /^Bearer/);
    assert.equal(((await none.json()) as any).error.code, "admin_unauthorized");
    const wrong = await fetch(`${url}/admin/config`, {
      headers: { authorization: "Bearer not-the-token-at-all" },
    });
    assert.equal(wrong.status, 401);
    const wrongPost = await post(p, "/admin/config/reload", {}, "not-the-token-at-all");
    assert.equal(wrongPost.status, 401, "a mutation without the token changes nothing");
    const right = await p.admin("/admin/config");
    assert.equal(right.status, 200);
    assert.equal(((await right.json()) as any).version, "test-r1");
    assert.equal((await fetch(`${url}/metrics`)).status, 200, "metrics need no token");
    assert.equal((await fetch(`${p.url}/admin/config`)).status, 404);
    assert.equal((await fetch(`${p.url}/metrics`)).status, 404);
    assert.equal((await fetch(`${p.url}/ready`)).status, 200);
    // Every admin body has a limit, explain's too.
    const huge = await post(p, "/admin/explain", {
      kind: "chat",
      body: { pad: "x".repeat(9 * 1024 * 1024) },
    });
    assert.equal(huge.status, 413);
    assert.equal(huge.body.error.code, "request_too_large");
  });

  it("drains an engine through the admin API (its streams finish, nothing new goes there) and undrains it", async () => {
    const first = p.gateway.pools.get("summary-online")!.endpoints[0]!;
    const bad = await post(p, "/admin/endpoints/drain", { endpoint: "no-such-engine" });
    assert.equal(bad.status, 404);
    assert.equal(bad.body.error.param, "endpoint");
    const r = await post(p, "/admin/endpoints/drain", { pool: "summary-online", endpoint: first.name });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.draining, true);
    assert.equal(r.body.served.versionMismatch, false);
    const before = p.lines.length;
    const client = openaiClient(p, LIVE);
    for (let i = 0; i < 4; i++) {
      await client.chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: `第${i}条：用户询问发票。` }],
        max_tokens: 4,
      });
    }
    for (const l of p.lines.slice(before)) assert.notEqual(l.endpoint, first.name);
    const back = await post(p, "/admin/endpoints/undrain", { endpoint: first.url });
    assert.equal(back.status, 200);
    assert.equal(first.draining, false);
    assert.ok(
      p.events.some((x) => x.event === "endpoint.drained-by-admin" && x.fields.endpoint === first.name),
    );
  });

  it("a config that fails validation, or replaces a version no longer running, changes nothing", async () => {
    const bad = variant(p, "test-bad", (f) => {
      f["route.yaml"] = f["route.yaml"]!.replace("routeTo: summary-long", "routeTo: summary-nowhere");
    });
    const r = await post(p, "/admin/config", { files: bad, replaces: "test-r1" });
    assert.equal(r.status, 422);
    assert.equal(r.body.error.code, "config_invalid");
    const e = r.body.error.errors[0];
    assert.equal(e.file, "route.yaml");
    assert.ok(e.line > 0);
    assert.match(e.path, /^spec\.rules\[1\]\.routeTo$/);
    const stale = await post(p, "/admin/config", { files: variant(p, "test-r9"), replaces: "test-r0" });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.error.code, "config_conflict");
    assert.equal(stale.body.error.current_version, "test-r1");
    const noReplaces = await post(p, "/admin/config", { files: variant(p, "test-r9") });
    assert.equal(noReplaces.status, 400);
    assert.equal(noReplaces.body.error.param, "replaces");
    assert.equal(p.gateway.config.version, "test-r1");
    assert.ok(p.events.some((x) => x.event === "config.refused" && x.fields.code === "config_invalid"));
  });

  it("reloads under streaming load — apply, drop an engine, roll back — and fails no request", async () => {
    const client = openaiClient(p, LIVE);
    const load = streamingLoad(client, 12, {
      model: "summary-default",
      messages: [{ role: "user", content: "总结这段客服对话：用户反馈订单未发货，客服已经催促仓库。" }],
      max_tokens: 40,
    });
    // Each version runs until a few streams have finished under it (however fast the machine is).
    const watch = versionWatch(p);
    const ranUnder = (version: string) => watch(version, 3);
    await ranUnder("test-r1");
    const r2 = await post(p, "/admin/config", {
      files: variant(p, "test-r2", (f) => {
        f["route.yaml"] = f["route.yaml"]!.replace("maxQueueMs: 800", "maxQueueMs: 900");
      }),
      replaces: "test-r1",
    });
    assert.equal(r2.status, 200, JSON.stringify(r2.body));
    await ranUnder("test-r2");
    const r3 = await post(p, "/admin/config", {
      files: variant(p, "test-r3", withoutSecondOnline(p)),
      replaces: "test-r2",
    });
    assert.equal(r3.status, 200, JSON.stringify(r3.body));
    await ranUnder("test-r3");
    const back = await post(p, "/admin/config/rollback", { to: "test-r1", replaces: "test-r3" });
    assert.equal(back.status, 200, JSON.stringify(back.body));
    await ranUnder("test-r1");
    const { done, failures } = await load.stop();
    assert.deepEqual(failures, []);
    assert.ok(done >= 12, `${done} streams completed`);
    const versions = new Set(p.lines.map((l) => l.config_version));
    for (const v of ["test-r1", "test-r2", "test-r3"]) assert.ok(versions.has(v), `requests ran under ${v}`);
    assert.equal(p.gateway.config.version, "test-r1");
    assert.deepEqual(
      history.acts().map((a) => `${a.action} ${a.version}`),
      ["rollback test-r1", "apply test-r3", "apply test-r2", "start test-r1"],
    );
    // Every engine's in-flight count went back to zero, the drained one's too.
    await sleep(50);
    for (const ep of p.gateway.generation.engines.keys()) assert.equal(ep.inflightRequests, 0, ep.name);
  });

  it("a reload's API keys apply to the next request", async () => {
    const newKey = "sk-test-added-by-reload";
    const ask = (key: string) =>
      openaiClient(p, LIVE, key).chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: "一句话：用户要改地址。" }],
        max_tokens: 4,
      });
    await assert.rejects(ask(newKey), (e: { status?: number }) => e.status === 401);
    const running = p.gateway.config.version;
    const r = await post(p, "/admin/config", {
      files: variant(p, "test-r5", (f) => {
        f["gateway.yaml"] = f["gateway.yaml"]!.replace(
          "    apiKeys:\n",
          `    apiKeys:\n      - { key: ${newKey}, tenant: support-basic }\n`,
        );
      }),
      replaces: running,
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const ok = await ask(newKey);
    assert.ok(ok.choices[0]?.message.content);
    const back = await post(p, "/admin/config/rollback", { to: running, replaces: "test-r5" });
    assert.equal(back.status, 200);
    await assert.rejects(
      ask(newKey),
      (e: { status?: number }) => e.status === 401,
      "rolled back: the key is gone",
    );
  });

  it("an engine a reload removes finishes its streams, takes no new request, then leaves", async () => {
    const client = openaiClient(p, LIVE);
    const [first, second] = p.gateway.pools.get("summary-online")!.endpoints as [
      EndpointState,
      EndpointState,
    ];
    // The rollback before this test made the second engine's state anew: wait until it is routable,
    // and hold the first out while the streams start, so they are on the engine the reload removes.
    for (const until = Date.now() + 5000; !second.routable(Date.now()) && Date.now() < until; )
      await sleep(20);
    assert.ok(second.routable(Date.now()));
    first.draining = true;
    // Different prompts, so prefix affinity does not put them all on one engine.
    const long = Array.from({ length: 8 }, (_, i) =>
      client.chat.completions
        .create({
          model: "summary-default",
          messages: [
            {
              role: "user",
              content: `第${i}号工单：请详细总结这段客服对话并给出后续步骤。${"细节".repeat(i * 7)}`,
            },
          ],
          max_tokens: 300,
          stream: true,
        })
        .then(async (s) => {
          let n = 0;
          for await (const c of s) if (c.choices[0]?.delta?.content) n++;
          return n;
        }),
    );
    for (const until = Date.now() + 5000; second.inflightRequests < long.length && Date.now() < until; )
      await sleep(10);
    first.draining = false;
    assert.ok(second.inflightRequests > 0, "the streams are on the engine to remove");
    const before = p.lines.length;
    const eventsBefore = p.events.length;
    const removed = () =>
      p.events
        .slice(eventsBefore)
        .some((x) => x.event === "endpoint.removed" && x.fields.endpoint === second.name);
    const r = await post(p, "/admin/config", {
      files: variant(p, "test-r4", withoutSecondOnline(p)),
      replaces: "test-r1",
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(second.draining);
    assert.ok(!removed(), "still there while its streams run");
    assert.ok(p.events.some((x) => x.event === "endpoint.draining" && x.fields.endpoint === second.name));
    const after = await openaiClient(p, LIVE).chat.completions.create({
      model: "summary-default",
      messages: [{ role: "user", content: "一句话总结：用户要求退款。" }],
      max_tokens: 8,
    });
    assert.ok(after.choices[0]?.message.content);
    const counts = await Promise.all(long);
    for (const n of counts) assert.ok(n > 0, "every stream on the removed engine finished with content");
    const newLines = p.lines.slice(before).filter((l) => l.config_version === "test-r4");
    assert.ok(newLines.length >= 1);
    for (const l of newLines)
      assert.notEqual(l.endpoint, second.name, "nothing new went to the drained engine");
    assert.ok(!removed() || second.inflightRequests === 0, "not removed while streams were on it");
    for (const until = Date.now() + 3000; !removed() && Date.now() < until; ) await sleep(20);
    assert.ok(removed(), "it left once its streams had finished");
    assert.ok(!p.gateway.monitor.has(second));
    assert.equal(second.inflightRequests, 0);
  });

  it("an engine a change brings back is health-checked before the swap: routable the moment it returns", async () => {
    // test-r4 (the test before) removed the second online engine; putting test-r1 back re-adds it.
    assert.equal(p.gateway.config.version, "test-r4");
    const back = await post(p, "/admin/config/rollback", { to: "test-r1", replaces: "test-r4" });
    assert.equal(back.status, 200, JSON.stringify(back.body));
    const eps = p.gateway.pools.get("summary-online")!.endpoints;
    assert.equal(eps.length, 2);
    const now = Date.now();
    for (const e of eps) {
      assert.notEqual(e.health.lastHealthAt, null, `${e.name} was checked before the swap`);
      assert.ok(e.routable(now), `${e.name} is routable at once`);
    }
  });
});
