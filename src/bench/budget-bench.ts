// `npm run bench -- --only budgets`: what tenant budgets cost and whether they hold across replicas.
//   1. Admission cost: four `tokengate gateway` processes in front of the same instant engines — no
//      budget, the memory store, the SQLite store, the Redis store (a real redis-server) — each under the
//      same closed loop of small requests from one budgeted tenant, in alternating rounds; the gateway's
//      CPU per request from /proc, and each store's against no budget.
//   2. budget-replicas: three gateway replicas behind a round-robin front, a tenant allowed N requests
//      at once pushing 2N long streams; the requests admitted at once (sampled from the stores), shared
//      through Redis against three unshared in-memory budgets, in the same run.
// Writes budgets.json and budgets.md.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";
import { fixedRateClient } from "./overhead/overhead-client.js";
import { type Child, cpuSeconds, startInstantEngines, startTokengate } from "./services/child-process.js";
import { startRedis } from "./services/redis-server.js";
import { round } from "./stats.js";
import { runClosedLoop } from "./traffic/load.js";

const MODEL = "m";
const TENANT = "bench-tenant";
const BODY = JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 16 });
const LIMIT = 8;
const ADMIN_TOKEN = "budget-bench-admin-token";

type Store = "none" | "memory" | "sqlite" | "redis";

export interface BudgetBenchOptions {
  readonly outDir: string;
  readonly quick?: boolean;
}

/** `redis.namespace`: the key prefix — one per run, so replicas share it and runs do not. */
function configFiles(
  dir: string,
  engines: string[],
  store: Store,
  redis: { url: string; namespace: string },
  concurrency: number,
): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "config.yaml"),
    `apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: p }
spec: { engine: vllm, model: ${MODEL}, endpoints: [${engines.map((e) => `"${e}"`).join(", ")}] }
---
apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata: { name: r, annotations: { ai.example.com/route-config-version: "budget-bench" } }
spec:
  modelAliases:
    ${MODEL}: { defaultPool: p, pools: [{ name: p, maxInputTokens: 100000, maxOutputTokens: 4096, maxQueueMs: 10000, priority: 1 }] }
---
apiVersion: tokengate.dev/v1alpha1
kind: GatewayConfig
metadata: { name: g }
spec:
  listen: { host: 127.0.0.1, port: 0 }
  auth: { allowAnonymous: true, defaultTenant: ${TENANT} }
${store === "none" ? "" : `  budgets: { store: ${store}${store === "sqlite" ? `, path: "${join(dir, "budgets.db")}"` : ""}${store === "redis" ? `, redis: { url: "${redis.url}", namespace: "${redis.namespace}" }` : ""} }`}
${
  store === "none"
    ? ""
    : `---
apiVersion: ai.example.com/v1alpha1
kind: InferenceBudget
metadata: { name: b }
spec:
  tenants: [{ name: ${TENANT}, concurrentRequests: ${concurrency}, dailyInputTokens: 100000000000, dailyOutputTokens: 100000000000 }]
`
}`,
  );
}

async function gateway(dir: string): Promise<{ child: Child; url: string; admin: string }> {
  const child = await startTokengate(
    ["gateway", "--config", dir, "--no-watch", "--log", "/dev/null", "--history", join(dir, "history.db")],
    /listening on http:\/\/[\d.]+:\d+/,
    15_000,
    { env: { TOKENGATE_ADMIN_TOKEN: ADMIN_TOKEN } },
  );
  const out = child.output();
  const url = /listening on (http:\/\/[\d.]+:\d+)/.exec(out)![1]!;
  const admin = /metrics at (http:\/\/[\d.]+:\d+)\/metrics/.exec(out)![1]!;
  return { child, url, admin };
}

interface CostRow {
  store: Store;
  requests: number;
  errors: number;
  rps: number;
  cpuUsPerRequest: number;
  /** CPU per request against no budget's, in the same run. */
  vsNone: number | null;
}

export async function runBudgetBench(
  opts: BudgetBenchOptions,
): Promise<{ cost: CostRow[]; replicas: unknown }> {
  const seconds = opts.quick ? 2 : 6;
  const rounds = opts.quick ? 1 : 6;
  const tmp = mkdtempSync(join(tmpdir(), "tokengate-budget-bench-"));
  const children: Child[] = [];
  const redis = await startRedis();
  try {
    const { child: sim, urls: engines } = await startInstantEngines(MODEL);
    children.push(sim);
    const stores: Store[] = ["none", "memory", "sqlite", "redis"];
    const gws = new Map<Store, { child: Child; url: string }>();
    for (const s of stores) {
      configFiles(join(tmp, s), engines, s, { url: redis.url, namespace: "bench-cost" }, 100_000);
      const g = await gateway(join(tmp, s));
      children.push(g.child);
      gws.set(s, g);
    }
    const totals = new Map<Store, { ok: number; errors: number; cpu: number; wall: number }>();
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? stores : [...stores].reverse();
      for (const s of order) {
        const g = gws.get(s)!;
        const client = fixedRateClient([g.url], 128);
        let cpu0 = 0;
        const res = await runClosedLoop({
          concurrency: 32,
          warmupMs: 500,
          onMeasureStart: () => {
            cpu0 = cpuSeconds(g.child.pid);
          },
          durationMs: seconds * 1000,
          send: (_c, seq) => client.send(seq, BODY, false),
        });
        const cpu = cpuSeconds(g.child.pid) - cpu0;
        await client.close();
        const ok = res.results.filter((x) => !x.error).length;
        const t = totals.get(s) ?? { ok: 0, errors: 0, cpu: 0, wall: 0 };
        totals.set(s, {
          ok: t.ok + ok,
          errors: t.errors + res.results.length - ok,
          cpu: t.cpu + cpu,
          wall: t.wall + res.elapsedMs / 1000,
        });
      }
    }
    const us = (s: Store) => {
      const t = totals.get(s)!;
      return (t.cpu / Math.max(1, t.ok)) * 1e6;
    };
    const cost: CostRow[] = stores.map((s) => {
      const t = totals.get(s)!;
      return {
        store: s,
        requests: t.ok,
        errors: t.errors,
        rps: round(t.ok / t.wall, 0),
        cpuUsPerRequest: round(us(s), 1),
        vsNone: s === "none" ? null : round(us(s) / us("none"), 3),
      };
    });
    for (const s of stores) {
      const g = gws.get(s)!;
      await g.child.stop();
    }
    const replicas = await replicaRun(tmp, redis.url, opts.quick === true);
    const report = { date: new Date().toISOString(), seconds, rounds, cost, replicas };
    mkdirSync(opts.outDir, { recursive: true });
    writeFileSync(join(opts.outDir, "budgets.json"), `${JSON.stringify(report, null, 2)}\n`);
    const md = markdown(cost, replicas);
    writeFileSync(join(opts.outDir, "budgets.md"), md);
    process.stdout.write(md);
    return { cost, replicas };
  } finally {
    for (const c of children) await c.stop().catch(() => {});
    await redis.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

interface ReplicaRow {
  store: "redis" | "memory";
  limit: number;
  pushed: number;
  maxAdmittedAtOnce: number;
  admittedAboveLimit: number;
  ok: number;
  refused: number;
}

/** Three replicas, round-robin, 2 × LIMIT long streams kept going; the most admitted at once. */
async function replicaRun(tmp: string, redisUrl: string, quick: boolean): Promise<ReplicaRow[]> {
  const sim = await startTokengate(
    ["sim", "--replicas", "2", "--port", "0", "--profile", "h100-llama8b", "--model", MODEL],
    /simulated replica\(s\)/,
  );
  const engines = [...new Set(sim.output().match(/http:\/\/[\d.]+:\d+/g) ?? [])];
  const rows: ReplicaRow[] = [];
  try {
    for (const store of ["redis", "memory"] as const) {
      const gws: { child: Child; url: string; admin: string }[] = [];
      for (let i = 0; i < 3; i++) {
        const dir = join(tmp, `replica-${store}-${i}`);
        configFiles(dir, engines, store, { url: redisUrl, namespace: "bench-replicas" }, LIMIT);
        gws.push(await gateway(dir));
      }
      if (store === "redis") await sleep(1200); // each replica's first heartbeat
      let stop = false;
      let seq = 0;
      let ok = 0;
      let refused = 0;
      const pushed = 2 * LIMIT;
      const loop = async () => {
        while (!stop) {
          const g = gws[seq++ % gws.length]!;
          const res = await request(`${g.url}/v1/chat/completions`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              model: MODEL,
              messages: [{ role: "user", content: "总结这段对话。" }],
              max_tokens: 48,
              stream: true,
            }),
          });
          await res.body.text();
          if (res.statusCode === 200) ok++;
          else {
            refused++;
            await sleep(20);
          }
        }
      };
      let maxAtOnce = 0;
      const sampler = (async () => {
        while (!stop) {
          const counts = await Promise.all(
            (store === "redis" ? gws.slice(0, 1) : gws).map(async (g) => {
              const r = await request(`${g.admin}/admin/budgets`, {
                headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
              });
              const v = (await r.body.json()) as { tenants: { usage: { inFlight: number } }[] };
              return v.tenants[0]?.usage.inFlight ?? 0;
            }),
          );
          maxAtOnce = Math.max(
            maxAtOnce,
            counts.reduce((a, b) => a + b, 0),
          );
          await sleep(25);
        }
      })();
      const loops = Array.from({ length: pushed }, loop);
      await sleep(quick ? 3000 : 10_000);
      stop = true;
      await Promise.all([...loops, sampler]);
      rows.push({
        store,
        limit: LIMIT,
        pushed,
        maxAdmittedAtOnce: maxAtOnce,
        admittedAboveLimit: Math.max(0, maxAtOnce - LIMIT),
        ok,
        refused,
      });
      for (const g of gws) await g.child.stop();
    }
  } finally {
    await sim.stop();
  }
  return rows;
}

function markdown(cost: CostRow[], replicas: ReplicaRow[]): string {
  const c = cost
    .map(
      (r) =>
        `| ${r.store} | ${r.rps} | ${r.errors} | ${r.cpuUsPerRequest} | ${r.vsNone === null ? "–" : `${r.vsNone}× (${r.vsNone >= 1 ? "+" : ""}${round((r.vsNone - 1) * 100, 1)}%)`} |`,
    )
    .join("\n");
  const rr = replicas
    .map(
      (r) =>
        `| ${r.store === "redis" ? "shared (Redis)" : "three unshared memory budgets"} | ${r.limit} | ${r.pushed} | ${r.maxAdmittedAtOnce} | **${r.admittedAboveLimit}** | ${r.ok} | ${r.refused} |`,
    )
    .join("\n");
  return `# Tenant budgets

## Admission cost (closed loop, 32 clients, small non-streaming requests, one budgeted tenant)

| store | req/s | errors | gateway CPU µs/request | against no budget |
|---|---:|---:|---:|---:|
${c}

## budget-replicas: three replicas, round-robin, a tenant allowed ${LIMIT} at once pushing ${2 * LIMIT}

| budgets | limit | streams pushed | most admitted at once | admitted above the limit | completed | refused |
|---|---:|---:|---:|---:|---:|---:|
${rr}
`;
}
