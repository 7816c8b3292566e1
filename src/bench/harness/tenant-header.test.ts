// The harness names each request's tenant: tokengate's request log shows the trace's tenant (not
// `anonymous`), and the nginx baselines pass the header through to the engines untouched.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { instantFleet } from "../../testing/instant-fleet.js";
import { skipWithout } from "../../testing/system-services.js";
import type { Scenario } from "../scenarios/scenario.js";
import { traceScenario } from "../scenarios/trace-replay.js";
import { startBaseline } from "../services/nginx.js";
import type { TraceRequest } from "../trace-formats/trace.js";
import { replay } from "../traffic/replay.js";
import { makeAgent } from "../traffic/stream-client.js";
import { runScenario } from "./runner.js";

const TENANTS = ["quiet-a", "quiet-b", "noisy"];

function trace(n: number): TraceRequest[] {
  return Array.from({ length: n }, (_, i) => ({
    t_ms: i * 20,
    id: `tn-${i}`,
    tenant: TENANTS[i % TENANTS.length]!,
    task: null,
    request_class: "interactive",
    input_tokens: 40,
    max_tokens: 3,
    stream: i % 2 === 0,
  }));
}

describe("tenants in the harness", () => {
  it("tokengate's request log shows each trace request's tenant, never anonymous", async () => {
    const requests = trace(9);
    const t = traceScenario("tenants", instantFleet("tenants")).topologies[0]!;
    const scenario: Scenario = {
      name: "tenants",
      description: "three tenants",
      liveClass: "interactive",
      longClass: null,
      topologies: [{ ...t, routers: ["tokengate"] }],
      generate: () => requests,
    };
    const dir = mkdtempSync(join(tmpdir(), "tokengate-tenants-"));
    try {
      const results = await runScenario(scenario, { seed: 1, quick: true, progress: false, keepLogDir: dir });
      const r = results.routers.tokengate!;
      assert.equal(r.status, "ok", r.reason);
      assert.equal(r.errors, 0);
      const tenantOf = new Map<string, unknown>();
      for (const line of readFileSync(join(dir, "gateway-tokengate.log"), "utf8").split("\n")) {
        if (!line.startsWith("{")) continue;
        const l = JSON.parse(line) as Record<string, unknown>;
        if (String(l.event).startsWith("inference.")) tenantOf.set(String(l.trace_id), l.tenant);
      }
      for (const req of requests) assert.equal(tenantOf.get(req.id), req.tenant, req.id);
      assert.deepEqual(Object.keys(r.by_tenant ?? {}), ["noisy", "quiet-a", "quiet-b"]);
      assert.deepEqual(
        Object.values(r.by_tenant!).map((g) => g.count),
        [3, 3, 3],
      );
      assert.deepEqual(Object.keys(r.by_input_size ?? {}), ["<1024"]);
      // Present whether or not the gateway logs predictions yet (a count of 0 then, not a failure).
      assert.ok(r.prediction_error && r.prediction_error.count <= requests.length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("an nginx baseline passes X-AI-Tenant through to the engine", skipWithout("nginx"), async () => {
    const seen: (string | undefined)[] = [];
    const engine = http.createServer((req, res) => {
      seen.push(req.headers["x-ai-tenant"] as string | undefined);
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write('data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n');
        res.end("data: [DONE]\n\n");
      });
    });
    await new Promise<void>((ok) => engine.listen(0, "127.0.0.1", ok));
    const url = `http://127.0.0.1:${(engine.address() as AddressInfo).port}`;
    const nginx = await startBaseline("least-request", [url]);
    assert.ok(!("skipped" in nginx), "nginx started");
    const agent = makeAgent(8);
    try {
      const requests = trace(3).map((r) => ({ ...r, stream: true }));
      const records = await replay(requests, { url: nginx.url, agent, model: "model" });
      assert.ok(records.every((x) => x.result.error === null));
      assert.deepEqual(seen.sort(), requests.map((r) => r.tenant).sort());
    } finally {
      await agent.close();
      await nginx.stop();
      engine.close();
    }
  });
});
