// `npm run bench -- --only rollback-drill`: seed 004's three rollbacks, drilled under steady streaming
// load. A gateway with a config history runs in front of simulated engines — summary-online's engines at
// two model versions, two engines that fail every request, a legacy service — and, while streaming
// clients keep it busy, the operator's acts follow one another through the admin API, as `tokengate
// config` sends them:
//   1. apply a bad version (summary-online points at the failing engines)
//   2. config rollback to the good one
//   3. route rollback: globalMode legacy_passthrough on
//   4. ... and off again
//   5. model-alias rollback: defaultVersion back to the older model, rollbackFrom the newer
// For each act: how long after the command every new request followed it, and the requests that failed
// because of it (those the bad version itself failed are counted apart). Target: each act in effect
// within 1 s, no request failed by an act. Writes rollback-drill.json and rollback-drill.md.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";
import { loadConfigTexts } from "../../config/loader.js";
import { ConfigControl } from "../../control/config-control.js";
import { ConfigHistory } from "../../control/config-history.js";
import { Gateway } from "../../server/gateway.js";
import { makeEngineConfig } from "../../sim/engine-config.js";
import { SimReplica } from "../../sim/replica.js";
import type { RequestLogLine } from "../../telemetry/request-log.js";
import {
  type DrillAct,
  type DrillFigures,
  type DrillRequest,
  drillFigures,
  drillMarkdown,
} from "./rollback-drill-figures.js";

const PROFILE = "h100-llama8b";
const NEW = "summary-7b-2026-06-15";
const OLD = "summary-7b-2026-06-10";
const STREAMS = 12;
const MAX_TOKENS = 32;

export interface DrillOptions {
  readonly outDir: string;
  readonly quick?: boolean;
}

interface Engines {
  readonly fresh: SimReplica[];
  readonly old: SimReplica[];
  readonly failing: SimReplica[];
  readonly legacy: SimReplica;
}

export async function runRollbackDrill(opts: DrillOptions): Promise<DrillFigures> {
  const phaseMs = opts.quick ? 2000 : 6000;
  const engines = await startEngines();
  const dir = mkdtempSync(join(tmpdir(), "tokengate-drill-"));
  const history = new ConfigHistory(join(dir, "history.db"));
  const lines = new Map<string, RequestLogLine>();
  let gw: Gateway | null = null;
  try {
    const r1 = files(engines, { version: "drill-r1", online: [...engines.fresh, ...engines.old] });
    const loaded = loadConfigTexts(r1);
    if (!loaded.ok) throw new Error(`drill config: ${JSON.stringify(loaded.errors)}`);
    gw = new Gateway(loaded.config, { logDestination: "none" });
    gw.log.listener = (l) => lines.set(l.trace_id, l);
    const control = new ConfigControl(history, null);
    const first = await control.apply({ files: r1, replaces: null, actor: "drill", action: "start" });
    if (!first.ok) throw new Error(first.message);
    control.attach(gw);
    gw.control = control;
    await gw.start();
    const admin = adminClient(gw);

    const sent: { id: string; startedAt: number; ok: boolean; failure: string | null }[] = [];
    let stop = false;
    let seq = 0;
    const url = `${gw.url}/v1/chat/completions`;
    const loop = async () => {
      while (!stop) {
        const id = `drill-${++seq}`;
        const startedAt = performance.now();
        const failure = await streamOnce(url, id, seq);
        sent.push({ id, startedAt, ok: failure === null, failure });
      }
    };
    const loops = Array.from({ length: STREAMS }, loop);
    await sleep(phaseMs);

    const acts: DrillAct[] = [];
    const act = async (
      name: string,
      command: string,
      run: () => Promise<unknown>,
      follows: DrillAct["follows"],
      badVersion?: string,
    ) => {
      const at = performance.now();
      await run();
      acts.push({
        name,
        command,
        at,
        commandMs: performance.now() - at,
        follows,
        ...(badVersion ? { badVersion } : {}),
      });
      await sleep(phaseMs);
    };
    const goodNames = new Set([...engines.fresh, ...engines.old].map((r) => r.name));
    const bad = files(engines, { version: "drill-r2-bad", online: engines.failing });
    await act(
      "bad version",
      "tokengate config apply drill-r2-bad/",
      () => admin.apply(bad, "drill-r1"),
      (r) => r.configVersion === "drill-r2-bad",
      "drill-r2-bad",
    );
    await act(
      "config rollback",
      "tokengate config rollback --to drill-r1",
      () => admin.post("/admin/config/rollback", { to: "drill-r1", replaces: "drill-r2-bad" }),
      (r) => r.configVersion === "drill-r1" && r.endpoint !== null && goodNames.has(r.endpoint),
    );
    const legacyOn = files(engines, {
      version: "drill-r3-legacy",
      online: [...engines.fresh, ...engines.old],
      legacyPassthrough: true,
    });
    await act(
      "route rollback on",
      "globalMode: legacy_passthrough (tokengate config apply drill-r3-legacy/)",
      () => admin.apply(legacyOn, "drill-r1"),
      (r) => r.pool === "legacy",
    );
    const legacyOff = files(engines, {
      version: "drill-r4-rules",
      online: [...engines.fresh, ...engines.old],
    });
    await act(
      "route rollback off",
      "globalMode: rules (tokengate config apply drill-r4-rules/)",
      () => admin.apply(legacyOff, "drill-r3-legacy"),
      (r) => r.pool === "summary-online",
    );
    const alias = files(engines, {
      version: "drill-r5-alias",
      online: [...engines.fresh, ...engines.old],
      aliasRollback: true,
    });
    await act(
      "model-alias rollback",
      `defaultVersion: ${OLD}, rollbackFrom: ${NEW} (tokengate config apply drill-r5-alias/)`,
      () => admin.apply(alias, "drill-r4-rules"),
      (r) => r.modelVersion === OLD,
    );
    stop = true;
    const endAt = performance.now();
    await Promise.all(loops);
    await sleep(100);
    const requests: DrillRequest[] = sent.map((s) => {
      const l = lines.get(s.id);
      return {
        startedAt: s.startedAt,
        ok: s.ok,
        failure: s.failure,
        configVersion: l?.config_version ?? null,
        pool: l?.route_pool ?? null,
        endpoint: l?.endpoint ?? null,
        modelVersion: l?.model_version ?? null,
      };
    });
    const figures = drillFigures(requests, acts, endAt);
    const setup =
      `${STREAMS} streaming clients (max_tokens ${MAX_TOKENS}, profile ${PROFILE}) without pause against one gateway: ` +
      `summary-online on 2 engines at ${NEW} and 2 at ${OLD} (the alias serves ${NEW}), 2 engines that answer ` +
      `every request with 500 (the bad version's pool), a legacy service (one engine). ${phaseMs / 1000} s between acts. ` +
      "Every act goes through the admin API with the admin token, as `tokengate config` sends it.";
    mkdirSync(opts.outDir, { recursive: true });
    writeFileSync(
      join(opts.outDir, "rollback-drill.json"),
      `${JSON.stringify({ date: new Date().toISOString(), setup, ...figures }, null, 2)}\n`,
    );
    writeFileSync(join(opts.outDir, "rollback-drill.md"), drillMarkdown(figures, setup));
    process.stdout.write(summary(figures));
    return figures;
  } finally {
    await gw?.stop();
    await Promise.all(
      [...engines.fresh, ...engines.old, ...engines.failing, engines.legacy].map((r) => r.stop()),
    );
    history.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function summary(f: DrillFigures): string {
  const acts = f.acts
    .map(
      (a) =>
        `${a.name}: in effect after ${a.effectiveMs} ms, ${a.failedByAct} failed by the act (${a.failedByBadVersion} by the bad version)`,
    )
    .join("; ");
  return `rollback-drill: ${acts}; targets ${f.targets.met && f.targets.noFailedRequestByAnAct ? "met" : "NOT met"}\n`;
}

async function startEngines(): Promise<Engines> {
  const make = async (name: string, model: string, version: string | null, failing = false) => {
    const r = new SimReplica({
      name,
      port: 0,
      engine: makeEngineConfig(PROFILE, model, { maxModelLen: 8192 }),
      seed: 1,
      modelVersion: version,
      ...(failing ? { faults: { errorRate: 1, errorStatus: 500 } } : {}),
    });
    await r.start();
    return r;
  };
  const fresh = [
    await make("online-new-0", "summary-7b", NEW),
    await make("online-new-1", "summary-7b", NEW),
  ];
  const old = [await make("online-old-0", "summary-7b", OLD), await make("online-old-1", "summary-7b", OLD)];
  const failing = [
    await make("bad-0", "summary-7b", NEW, true),
    await make("bad-1", "summary-7b", NEW, true),
  ];
  const legacy = await make("legacy-0", "summary-default", null);
  return { fresh, old, failing, legacy };
}

interface Variant {
  readonly version: string;
  readonly online: readonly SimReplica[];
  readonly legacyPassthrough?: boolean;
  readonly aliasRollback?: boolean;
}

/** One version of the drill's config. */
function files(engines: Engines, v: Variant): Record<string, string> {
  const version = (r: SimReplica) => (engines.old.includes(r) ? OLD : NEW);
  const endpoints = v.online
    .map((r) => `    - { url: "${r.url}", name: ${r.name}, modelVersion: ${version(r)} }`)
    .join("\n");
  return {
    "pools.yaml": `apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: summary-online }
spec:
  engine: vllm
  model: summary-7b
  modelVersion: ${NEW}
  endpoints:
${endpoints}
  metrics: { intervalMs: 250 }
  health: { intervalMs: 500 }
`,
    "route.yaml": `apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata:
  name: drill-route
  annotations:
    ai.example.com/route-config-version: "${v.version}"
spec:
  legacy: { url: "${engines.legacy.url}" }
  globalMode: ${v.legacyPassthrough ? "legacy_passthrough" : "rules"}
  modelAliases:
    summary-default:
      defaultPool: summary-online
      defaultVersion: ${v.aliasRollback ? OLD : NEW}
${v.aliasRollback ? `      rollbackFrom: ${NEW}\n` : ""}      pools:
        - { name: summary-online, maxInputTokens: 8192, maxOutputTokens: 600, maxQueueMs: 5000, priority: 100 }
`,
    "gateway.yaml": `apiVersion: tokengate.dev/v1alpha1
kind: GatewayConfig
metadata: { name: drill }
spec:
  listen: { host: 127.0.0.1, port: 0 }
  auth: { allowAnonymous: true }
  timeouts: { connectMs: 500, firstByteMs: 10000, idleMs: 5000, totalMs: 30000 }
`,
  };
}

function adminClient(gw: Gateway) {
  const post = async (path: string, body: unknown) => {
    const res = await request(`${gw.adminUrl}${path}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${gw.adminToken.reveal()}`,
        "content-type": "application/json",
        "x-ai-actor": "drill",
      },
      body: JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}: ${text}`);
    return JSON.parse(text) as unknown;
  };
  return {
    post,
    apply: (f: Record<string, string>, replaces: string) => post("/admin/config", { files: f, replaces }),
  };
}

/** One streamed request; null when it finished cleanly, else why not. */
async function streamOnce(url: string, id: string, n: number): Promise<string | null> {
  try {
    const res = await request(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-ai-trace-id": id,
        "x-ai-task": "live_ticket_summary",
        "x-ai-request-class": "interactive",
      },
      body: JSON.stringify({
        model: "summary-default",
        messages: [
          { role: "user", content: `第${n % 50}号工单：用户反馈订单未发货，客服已经催促仓库，请总结。` },
        ],
        max_tokens: MAX_TOKENS,
        stream: true,
      }),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) return `HTTP ${res.statusCode}: ${text.slice(0, 160)}`;
    if (text.includes('"error"')) return `error event: ${text.slice(text.indexOf('"error"'), 200)}`;
    if (!text.includes("data: [DONE]")) return "stream ended without [DONE]";
    return null;
  } catch (err) {
    return `client: ${(err as Error).message}`;
  }
}
