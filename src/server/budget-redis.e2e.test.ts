// Budgets shared through a real redis-server (started by the test): three `tokengate gateway` processes
// admit no more than a tenant's concurrency limit together; Redis stopped mid-run and started again, in
// both of its modes — `refuse` (503 budget_store_unavailable, readiness and the metric say so, then
// admitted again once Redis answers) and `local` (admitted against a local share of the limit).

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type RedisServer, startRedis } from "../bench/services/redis-server.js";
import { makeEngineConfig } from "../sim/engine-config.js";
import { SimReplica } from "../sim/replica.js";
import { CLI_MAIN, type CliGateway, spawnGateway } from "../testing/cli-gateway.js";
import { KEYS, type Platform, startPlatform } from "../testing/platform.js";
import { missingService } from "../testing/system-services.js";

const SKIP = missingService("redis-server");
const KEY = "sk-redis-test-0001";

function config(engines: readonly SimReplica[], redisUrl: string): string {
  return `apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: p }
spec:
  engine: vllm
  model: m-base
  endpoints: [${engines.map((e) => `"${e.url}"`).join(", ")}]
  metrics: { intervalMs: 100 }
  health: { intervalMs: 100 }
---
apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata:
  name: r
  annotations: { ai.example.com/route-config-version: "redis-test-1" }
spec:
  modelAliases:
    m:
      defaultPool: p
      pools: [{ name: p, maxInputTokens: 4096, maxOutputTokens: 400, maxQueueMs: 5000, priority: 1 }]
---
apiVersion: tokengate.dev/v1alpha1
kind: GatewayConfig
metadata: { name: g }
spec:
  listen: { host: 127.0.0.1, port: 0 }
  auth:
    apiKeys: [{ key: ${KEY}, tenant: shared-tenant }]
  budgets:
    store: redis
    redis: { url: "${redisUrl}", leaseMs: 3000 }
  shutdown: { drainMs: 2000 }
---
apiVersion: ai.example.com/v1alpha1
kind: InferenceBudget
metadata: { name: b }
spec:
  tenants:
    - { name: shared-tenant, concurrentRequests: 4 }
`;
}

/** A stream long enough to overlap every other; resolves with the HTTP status. */
async function longStream(url: string, key: string): Promise<{ status: number; code: string | null }> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({
      model: "m",
      messages: [{ role: "user", content: "请详细总结这段客服对话。" }],
      max_tokens: 200,
      stream: true,
    }),
  });
  const text = await res.text();
  const code =
    res.status === 200 ? null : ((JSON.parse(text) as { error: { code: string } }).error.code ?? null);
  return { status: res.status, code };
}

describe("budgets shared through Redis", { skip: SKIP ?? false }, () => {
  let redis: RedisServer;
  let engines: SimReplica[];
  let dir: string;
  const gateways: CliGateway[] = [];
  before(async () => {
    redis = await startRedis();
    engines = await Promise.all(
      [0, 1].map(async (i) => {
        const r = new SimReplica({
          name: `e${i}`,
          port: 0,
          engine: makeEngineConfig("h100-llama8b", "m-base", { maxModelLen: 4096 }),
          seed: i + 1,
        });
        await r.start();
        return r;
      }),
    );
    dir = mkdtempSync(join(tmpdir(), "tokengate-redis-"));
    writeFileSync(join(dir, "config.yaml"), config(engines, redis.url));
  });
  after(async () => {
    for (const g of gateways) g.proc.kill("SIGKILL");
    await Promise.all(gateways.map((g) => g.exited));
    await Promise.all(engines.map((e) => e.stop()));
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("three gateway processes admit no more than the tenant's concurrency limit together", async () => {
    for (let i = 0; i < 3; i++) {
      gateways.push(
        await spawnGateway(CLI_MAIN, [
          "gateway",
          "--config",
          dir,
          "--no-watch",
          "--log",
          "none",
          "--history",
          join(dir, `history-${i}.db`),
        ]),
      );
    }
    // Each process has said hello to Redis (its first heartbeat) before the burst.
    await sleep(1500);
    const results = await Promise.all(
      Array.from({ length: 18 }, (_, i) => longStream(gateways[i % 3]!.url, KEY)),
    );
    const ok = results.filter((r) => r.status === 200).length;
    assert.equal(ok, 4, `admitted together: ${ok} (${JSON.stringify(results)})`);
    for (const r of results.filter((x) => x.status !== 200)) {
      assert.deepEqual(r, { status: 429, code: "concurrency_limit" });
    }
    // Every slot came back: the next four are admitted again. A gateway gives its slot back to Redis
    // just after the client has read the stream's end, so on a busy machine the first try can still
    // find one held; a leaked slot would never come back, so a few tries within 5 s tell them apart.
    const deadline = Date.now() + 5000;
    let again: { status: number }[] = [];
    for (;;) {
      again = await Promise.all(Array.from({ length: 4 }, (_, i) => longStream(gateways[i % 3]!.url, KEY)));
      if (again.every((r) => r.status === 200) || Date.now() > deadline) break;
      await sleep(200);
    }
    assert.deepEqual(
      again.map((r) => r.status),
      [200, 200, 200, 200],
    );
  });
});

describe("Redis stopped mid-run and started again", { skip: SKIP ?? false }, () => {
  let redis: RedisServer;
  let p: Platform | null = null;
  const budget = `apiVersion: ai.example.com/v1alpha1
kind: InferenceBudget
metadata: { name: b }
spec:
  tenants:
    - { name: support-basic, concurrentRequests: 4 }
`;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await p?.stop();
    await redis.stop();
  });

  const ask = (plat: Platform) =>
    fetch(`${plat.url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${KEYS.basic}`,
        "x-ai-task": "live_ticket_summary",
      },
      body: JSON.stringify({
        model: "summary-default",
        messages: [{ role: "user", content: "总结。" }],
        max_tokens: 4,
      }),
    });
  const waitFor = async (cond: () => boolean) => {
    for (let i = 0; i < 200 && !cond(); i++) await sleep(25);
    assert.ok(cond());
  };

  for (const mode of ["refuse", "local"] as const) {
    it(`unreachable: ${mode}`, async () => {
      await p?.stop();
      p = await startPlatform({
        budgetYaml: budget,
        gatewayExtra: `  budgets:\n    store: redis\n    redis: { url: "${redis.url}", leaseMs: 1500, timeoutMs: 200, unreachable: ${mode} }\n`,
      });
      const plat = p;
      await waitFor(() => plat.gateway.budgets.up === true);
      assert.equal((await ask(plat)).status, 200);
      await redis.stop();
      const during = await ask(plat);
      const body = (await during.json()) as any;
      if (mode === "refuse") {
        assert.equal(during.status, 503);
        assert.equal(body.error.code, "budget_store_unavailable");
        assert.equal(during.headers.get("retry-after"), "1");
      } else {
        assert.equal(during.status, 200, JSON.stringify(body));
      }
      assert.equal(plat.gateway.budgets.up, false);
      const ready = (await (await fetch(`${plat.url}/ready`)).json()) as any;
      assert.deepEqual(ready.budget_store, { store: "redis", up: false });
      assert.match(
        await (await plat.admin("/metrics")).text(),
        /ai_gateway_budget_store_up\{store="redis"\} 0/,
      );
      assert.ok(plat.events.some((e) => e.event === "budget.store-down" && e.fields.mode === mode));
      await redis.start();
      await waitFor(() => plat.gateway.budgets.up === true);
      assert.ok(plat.events.some((e) => e.event === "budget.store-up"));
      assert.equal((await ask(plat)).status, 200, "admitted through Redis again");
    });
  }
});
