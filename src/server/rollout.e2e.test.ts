// Seed 004's rollout stages and route rollback, end to end: simulated engines for the pools, a "legacy
// service" (a simulated engine behind a recording proxy, so the test sees what it was sent), the official
// openai client, the admin API and `tokengate rollout`. Shadow-label routes on paper and sends everything
// to the legacy service with the seed's labels; its gates refuse a promotion until they pass (or --force,
// which the history records); a canary keeps each tenant on its side while its percentage rises;
// legacy_passthrough sends requests unchanged, and switching it on and off under streaming load fails
// nothing.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runRolloutCommand } from "../cli/rollout.js";
import { ConfigControl } from "../control/config-control.js";
import { ConfigHistory } from "../control/config-history.js";
import { makeEngineConfig } from "../sim/engine-config.js";
import { SimReplica } from "../sim/replica.js";
import { openaiClient, type Platform, SECRET, startPlatform, versionWatch } from "../testing/platform.js";
import { type RecordingProxy, startRecordingProxy } from "../testing/recording-proxy.js";
import { streamingLoad } from "../testing/streaming-load.js";

const LIVE = { "x-ai-task": "live_ticket_summary", "x-ai-request-class": "interactive" };
const MESSAGES = [
  { role: "user" as const, content: "总结这段客服对话：用户反馈订单未发货，客服已经催促仓库。" },
];

const SHADOW = `  legacy: { url: "LEGACY" }
  rollout:
    stage: shadow-label
    write_headers: [X-AI-Task, X-AI-Request-Class, X-AI-Input-Tokens-Estimated]
    gates: { minRequests: 10 }`;

function canary(percent: number): string {
  return `  legacy: { url: "LEGACY" }
  rollout:
    stage: canary
    canary:
      match: { requestClass: interactive, inputTokensLte: 8192 }
      percent: ${percent}
      routeTo: summary-online
      stickyBy: tenant
    gates: { minRequests: 10 }`;
}

async function post(p: Platform, path: string, body: unknown) {
  const res = await p.admin(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe("rollout stages and route rollback", () => {
  let p: Platform;
  let legacyEngine: SimReplica;
  let legacy: RecordingProxy;
  let history: ConfigHistory;
  let work: string;
  let tokenFile: string;

  /** The platform's files with another version and another rollout block. */
  const files = (version: string, routeExtra: string) => {
    const f = { ...p.configTexts };
    f["route.yaml"] = f["route.yaml"]!.replace('"test-r1"', `"${version}"`).replace(
      /^ {2}legacy:[\s\S]*?(?=^ {2}modelAliases:)/m,
      `${routeExtra.replace("LEGACY", legacy.url)}\n`,
    );
    return f;
  };

  const rollout = async (...args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runRolloutCommand(
      [...args, "--admin", p.gateway.adminUrl, "--token-file", tokenFile, "--actor", "ops"],
      { out: (t) => out.push(t), err: (t) => err.push(t) },
    );
    return { code, out: out.join(""), err: err.join("") };
  };

  const folder = (name: string, f: Record<string, string>) => {
    const dir = join(work, name);
    rmSync(dir, { recursive: true, force: true });
    for (const [file, text] of Object.entries(f)) {
      writeFileSync(join(mkdirp(dir), file), text);
    }
    return dir;
  };

  before(async () => {
    legacyEngine = new SimReplica({
      name: "legacy-0",
      port: 0,
      engine: makeEngineConfig("instant", "summary-default", { maxModelLen: 65536 }),
      seed: 2,
    });
    await legacyEngine.start();
    legacy = await startRecordingProxy(legacyEngine.url);
    p = await startPlatform({ routeExtra: SHADOW.replace("LEGACY", legacy.url) });
    history = new ConfigHistory(":memory:");
    const control = new ConfigControl(history, null, {}, (e, f) => p.gateway.log.event(e, f));
    assert.ok(
      (await control.apply({ files: p.configTexts, replaces: null, actor: "test", action: "start" })).ok,
    );
    control.attach(p.gateway);
    p.gateway.control = control;
    work = mkdtempSync(join(tmpdir(), "tokengate-rollout-"));
    tokenFile = join(work, "token");
    writeFileSync(tokenFile, `${p.gateway.adminToken.reveal()}\n`);
  });
  after(async () => {
    await p.stop();
    await legacy.stop();
    await legacyEngine.stop();
    history.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("shadow-label: routed on paper, served by the legacy service with the seed's labels; the caller sees no difference", async () => {
    const client = openaiClient(p, LIVE);
    const before = p.lines.length;
    const reply = await client.chat.completions.create({
      model: "summary-default",
      messages: MESSAGES,
      max_tokens: 8,
    });
    assert.ok(reply.choices[0]!.message.content);
    const stream = await client.chat.completions.create({
      model: "summary-default",
      messages: MESSAGES,
      max_tokens: 8,
      stream: true,
    });
    let text = "";
    let sawUsage = false;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? "";
      if (c.usage) sawUsage = true;
    }
    assert.ok(text.length > 0);
    assert.equal(sawUsage, false, "the usage chunk the gateway asked for is not the caller's");
    const batch = openaiClient(p, { "x-ai-task": "batch_recompute_summary", "x-ai-request-class": "batch" });
    await batch.chat.completions.create({ model: "summary-default", messages: MESSAGES, max_tokens: 8 });
    // A model tokengate does not serve: refused on paper, still the legacy service's to answer.
    await assert.rejects(client.chat.completions.create({ model: "gpt-nope", messages: MESSAGES }), {
      status: 404,
    });

    const lines = p.lines.slice(before);
    assert.equal(lines.length, 4);
    for (const l of lines) {
      assert.equal(l.route_pool, "legacy");
      assert.equal(l.rollout_stage, "shadow-label");
      assert.equal(l.route_reason, "rollout=shadow-label");
      assert.equal(l.config_version, "test-r1");
    }
    assert.deepEqual(
      lines.map((l) => [l.would_route_pool, l.would_route_reason?.split(",")[0]]),
      [
        ["summary-online", "rule=live-summary-short"],
        ["summary-online", "rule=live-summary-short"],
        ["summary-batch", "rule=quality-batch"],
        [null, "model_not_found"],
      ],
    );
    assert.ok(lines[0]!.input_tokens_actual! > 0, "usage read from the legacy reply");
    assert.ok(lines[1]!.input_tokens_actual! > 0, "a stream's usage too");
    assert.equal(lines[3]!.status, "engine_rejected");
    const sent = legacy.requests.slice(-4);
    assert.equal(sent[0]!.headers["x-ai-task"], "live_ticket_summary");
    assert.equal(sent[0]!.headers["x-ai-request-class"], "interactive");
    assert.equal(sent[0]!.headers["x-ai-input-tokens-estimated"], String(lines[0]!.input_tokens_estimated));
    assert.equal(sent[0]!.path, "/v1/chat/completions");
    assert.equal(JSON.parse(sent[0]!.body.toString()).model, "summary-default", "the body goes as it came");
    assert.deepEqual(JSON.parse(sent[1]!.body.toString()).stream_options, { include_usage: true });
    for (const r of p.replicas.online) assert.equal(r.timings.list().length, 0, "no pool engine served");
  });

  it("report and promote: gates fail on an unknown task, --force goes past them and says so", async () => {
    const client = openaiClient(p, LIVE);
    for (let i = 0; i < 8; i++) {
      await client.chat.completions.create({ model: "summary-default", messages: MESSAGES, max_tokens: 4 });
    }
    const odd = openaiClient(p, { "x-ai-task": "mystery_task" });
    await odd.chat.completions.create({ model: "summary-default", messages: MESSAGES, max_tokens: 4 });
    const report = await rollout("report");
    assert.equal(report.code, 1, report.out + report.err);
    assert.match(report.out, /stage shadow-label/);
    assert.match(report.out, /PASS {2}requests/);
    assert.match(report.out, /PASS {2}labelled_ratio/);
    assert.match(report.out, /PASS {2}token_estimate_p90_error/);
    assert.match(report.out, /FAIL {2}unknown_task_ratio/);
    const view = (await (await p.admin("/admin/rollout")).json()) as any;
    assert.equal(view.report.stage, "shadow-label");
    assert.ok(view.report.requests >= 13);

    const next = folder("canary-5", files("test-r2", canary(5)));
    const refused = await rollout("promote", next);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /FAIL {2}unknown_task_ratio/);
    assert.match(refused.err, /refused \(rollout_gates_failed\)/);
    assert.equal(p.gateway.config.version, "test-r1");
    const same = await post(p, "/admin/rollout/promote", {
      files: files("test-r1b", SHADOW),
      replaces: "test-r1",
    });
    assert.equal(same.status, 400);
    assert.equal(same.body.error.code, "rollout_not_forward");
    const forced = await rollout("promote", next, "--force", "--note", "unknown task is a test client");
    assert.equal(forced.code, 0, forced.err);
    assert.match(forced.out, /now running test-r2 \(replaced test-r1\) \[forced past failed gates\]/);
    const act = history.acts()[0]!;
    assert.deepEqual([act.action, act.version, act.forced, act.actor], ["promote", "test-r2", true, "ops"]);
    assert.equal((await rollout("report")).out.match(/stage canary/)?.length, 1);
  });

  it("canary: each tenant stays on its side, and raising the percentage only moves tenants in", async () => {
    const applied = await post(p, "/admin/config", {
      files: files("test-r3", canary(40)),
      replaces: "test-r2",
    });
    assert.equal(applied.status, 200, JSON.stringify(applied.body));
    const tenants = Array.from({ length: 24 }, (_, i) => `tenant-${i}`);
    const sides = async () => {
      const side = new Map<string, Set<string>>();
      for (const t of tenants) {
        const client = openaiClient(p, { ...LIVE, "x-ai-tenant": t, "x-ai-upstream-secret": SECRET });
        for (let i = 0; i < 2; i++) {
          const before = p.lines.length;
          await client.chat.completions.create({
            model: "summary-default",
            messages: MESSAGES,
            max_tokens: 4,
          });
          const l = p.lines[before]!;
          assert.equal(l.tenant, t);
          if (!side.has(t)) side.set(t, new Set());
          side.get(t)!.add(l.route_pool === "legacy" ? "legacy" : "canary");
          if (l.route_pool !== "legacy") assert.match(l.route_reason!, /,canary=\d+%$/);
        }
      }
      for (const [t, s] of side) assert.equal(s.size, 1, `${t} was served by both sides`);
      return new Set([...side].filter(([, s]) => s.has("canary")).map(([t]) => t));
    };
    const at40 = await sides();
    assert.ok(at40.size > 0 && at40.size < tenants.length, `some tenants in the 40% canary: ${at40.size}`);
    const promoted = await rollout("promote", folder("canary-80", files("test-r4", canary(80))));
    assert.equal(promoted.code, 0, promoted.out + promoted.err);
    assert.equal(history.acts()[0]!.forced, false, "the canary's gates passed");
    const at80 = await sides();
    for (const t of at40) assert.ok(at80.has(t), `${t} left the canary when it grew`);
    assert.ok(at80.size > at40.size, `${at80.size} tenants at 80%, ${at40.size} at 40%`);
  });

  it("legacy_passthrough on and off under streaming load: unchanged requests, no failure", async () => {
    const client = openaiClient(p, LIVE);
    const load = streamingLoad(client, 8, { model: "summary-default", messages: MESSAGES, max_tokens: 24 });
    // Each change runs until requests have finished under it, however fast the machine is.
    const ran = versionWatch(p);
    await ran("test-r4", 3);
    const full = `  legacy: { url: "LEGACY" }\n  rollout: { stage: full }`;
    assert.equal(
      (await post(p, "/admin/config", { files: files("test-r5", full), replaces: "test-r4" })).status,
      200,
    );
    await ran("test-r5", 3);
    const passthrough = `  legacy: { url: "LEGACY" }\n  globalMode: legacy_passthrough\n  rollout: { stage: full }`;
    const on = await post(p, "/admin/config", { files: files("test-r6", passthrough), replaces: "test-r5" });
    assert.equal(on.status, 200, JSON.stringify(on.body));
    const sentBefore = legacy.requests.length;
    await ran("test-r6", 6);
    const back = await post(p, "/admin/config/rollback", { to: "test-r5", replaces: "test-r6" });
    assert.equal(back.status, 200);
    await ran("test-r5", 3);
    const { done, failures } = await load.stop();
    assert.deepEqual(failures, []);
    assert.ok(done >= 15, `${done} streams`);
    const during = p.lines.filter((l) => l.config_version === "test-r6");
    assert.ok(during.length > 5, `${during.length} requests under legacy_passthrough`);
    for (const l of during) {
      assert.equal(l.route_pool, "legacy");
      assert.equal(l.route_reason, "legacy_passthrough");
    }
    const unchanged = legacy.requests.slice(sentBefore, sentBefore + 3);
    assert.ok(unchanged.length > 0);
    for (const r of unchanged) {
      assert.equal(r.headers["x-ai-input-tokens-estimated"], undefined, "no labels on a passthrough");
      const body = JSON.parse(r.body.toString());
      assert.deepEqual(body, { model: "summary-default", messages: MESSAGES, max_tokens: 24, stream: true });
    }
    const after = p.lines.filter((l) => l.config_version === "test-r5");
    assert.ok(
      after.some((l) => l.route_pool === "summary-online"),
      "tokengate serves again after the switch back",
    );
    assert.ok(after.every((l) => l.route_pool !== "legacy"));
  });
});

function mkdirp(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}
