import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { runRouteCommand } from "../cli/route.js";
import { sampleText } from "../sim/sample-text.js";
import { SEED_LOG_FIELDS } from "../telemetry/request-log.js";
import { KEYS, openaiClient, type Platform, SECRET, startPlatform } from "../testing/platform.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `cond` holds or `ms` pass (a loaded machine can be slow); the caller asserts after. */
async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !cond() && Date.now() < end; ) await sleep(10);
}

const client = openaiClient;

async function raw(
  p: Platform,
  body: string,
  headers: Record<string, string> = {},
  path = "/v1/chat/completions",
): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(`${p.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${KEYS.basic}`, ...headers },
    body,
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null, headers: res.headers };
}

const LIVE = { "x-ai-task": "live_ticket_summary", "x-ai-request-class": "interactive" };
const SEED_FIELDS = SEED_LOG_FIELDS;

/** The gateway's log line for a trace id, waiting for the batched writer. */
async function lineFor(p: Platform, traceId: string) {
  for (let i = 0; i < 100; i++) {
    const l = p.lines.find((x) => x.trace_id === traceId);
    if (l) return l;
    await sleep(10);
  }
  throw new Error(`no log line for ${traceId}`);
}

describe("gateway end to end, through the official openai client", () => {
  let p: Platform;
  before(async () => {
    p = await startPlatform();
  });
  after(() => p.stop());

  it("serves a non-streaming live summary on summary-online and says why", async () => {
    const { data, response } = await client(p, LIVE)
      .chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: sampleText("zh", 2800, 1) }],
        max_tokens: 40,
      })
      .withResponse();
    assert.equal(data.usage!.completion_tokens, 40);
    assert.equal(data.model, "summary-7b");
    assert.equal(response.headers.get("x-ai-route-pool"), "summary-online");
    assert.equal(response.headers.get("x-ai-route-reason"), "rule=live-summary-short");
    const trace = response.headers.get("x-ai-trace-id")!;
    assert.ok(trace);
    const line = await lineFor(p, trace);
    for (const f of SEED_FIELDS) assert.ok(f in line, `log line has ${f}`);
    assert.equal(line.tenant, "support-basic");
    assert.equal(line.route_pool, "summary-online");
    assert.equal(line.model_version, "summary-7b-2026-06-15");
    assert.equal(line.output_tokens, 40);
    assert.equal(line.status, "ok");
    assert.equal(line.gpu_memory_used_ratio, null, "not reported by vLLM: null, never invented");
    assert.ok(line.input_tokens_actual! > 2700);
    const err =
      Math.abs(line.input_tokens_estimated! - line.input_tokens_actual!) / line.input_tokens_actual!;
    assert.ok(err < 0.1, `estimate ${line.input_tokens_estimated} vs actual ${line.input_tokens_actual}`);
    assert.ok(line.prefill_ms !== null && line.decode_ms !== null && line.runtime_queue_ms !== null);
  });

  it("streams, keeping the usage chunk only when the caller asked for it", async () => {
    const c = client(p, LIVE);
    const collect = async (includeUsage: boolean) => {
      const stream = await c.chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: "请总结" }],
        max_tokens: 12,
        stream: true,
        ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
      });
      let text = "";
      let usageChunks = 0;
      for await (const chunk of stream) {
        if (chunk.usage) usageChunks++;
        text += chunk.choices[0]?.delta.content ?? "";
      }
      return { text, usageChunks };
    };
    const withUsage = await collect(true);
    const without = await collect(false);
    assert.equal(withUsage.usageChunks, 1);
    assert.equal(without.usageChunks, 0);
    assert.ok(without.text.length >= 12);
    await sleep(50);
    const streamed = p.lines.filter((l) => l.stream === true);
    assert.ok(streamed.length >= 2);
    for (const l of streamed) assert.equal(l.output_tokens, 12, "usage is known to the gateway either way");
    for (const l of streamed) assert.ok(l.ttft_ms !== null && l.ttft_ms > 0);
  });

  it("routes by task, request class and input tokens", async () => {
    const ask = async (headers: Record<string, string>, tokens: number, maxTokens = 4) => {
      const { response } = await client(p, headers)
        .chat.completions.create({
          model: "summary-default",
          messages: [{ role: "user", content: sampleText("en", tokens, tokens) }],
          max_tokens: maxTokens,
        })
        .withResponse();
      return [response.headers.get("x-ai-route-pool"), response.headers.get("x-ai-route-reason")];
    };
    assert.deepEqual(await ask(LIVE, 500), ["summary-online", "rule=live-summary-short"]);
    assert.deepEqual(await ask(LIVE, 12_000), ["summary-long", "rule=live-summary-long"]);
    assert.deepEqual(
      await ask({ "x-ai-task": "batch_recompute_summary", "x-ai-request-class": "batch" }, 20_000),
      ["summary-batch", "rule=quality-batch"],
    );
    assert.deepEqual(await ask({}, 300), ["summary-online", "default"]);
    const [pool, reason] = await ask(LIVE, 300, 900);
    assert.equal(pool, "summary-online");
    assert.match(reason!, /max_tokens_clamped=900->600/);
  });

  it("counts unknown tasks in metrics without making them labels", async () => {
    await client(p, { "x-ai-task": "some_new_task" }).chat.completions.create({
      model: "summary-default",
      messages: [{ role: "user", content: "x" }],
      max_tokens: 2,
    });
    const text = await (await p.admin("/metrics")).text();
    assert.match(text, /ai_gateway_tasks_total\{known="false"\} [1-9]/);
    assert.doesNotMatch(text, /some_new_task/);
    assert.match(text, /ai_gateway_route_decisions_total\{pool="summary-online",reason="default"\}/);
    assert.match(text, /ai_gateway_ttft_seconds_bucket\{pool="summary-online",le="0.5"\}/);
  });

  it("accepts X-AI-Tenant only from a trusted upstream", async () => {
    const forged = await raw(
      p,
      JSON.stringify({ model: "summary-default", messages: [{ role: "user", content: "x" }] }),
      {
        "x-ai-tenant": "quality-job",
      },
    );
    assert.equal(forged.status, 403);
    assert.equal(forged.json.error.code, "untrusted_tenant_header");
    const trusted = await raw(
      p,
      JSON.stringify({ model: "summary-default", messages: [{ role: "user", content: "x" }], max_tokens: 2 }),
      { "x-ai-tenant": "quality-job", "x-ai-upstream-secret": SECRET },
    );
    assert.equal(trusted.status, 200);
    const line = await lineFor(p, trusted.headers.get("x-ai-trace-id")!);
    assert.equal(line.tenant, "quality-job");
  });

  it("explains a request against the live pool without sending it (admin API and route explain --gateway)", async () => {
    const before = p.lines.length;
    const body = {
      model: "summary-default",
      messages: [{ role: "user", content: sampleText("zh", 2800, 4) }],
      max_tokens: 100,
    };
    const res = await p.admin("/admin/explain", {
      method: "POST",
      headers: { "content-type": "application/json", ...LIVE },
      body: JSON.stringify({ kind: "chat", body }),
    });
    const out = (await res.json()) as any;
    assert.equal(out.route.pool, "summary-online");
    assert.equal(out.route.reason, "rule=live-summary-short");
    assert.ok(out.pick.endpoint);
    assert.match(out.pick.mode, /metrics|predicted|p2c/);
    assert.ok(out.pick.top_scores.length > 0 && "perScorer" in out.pick.top_scores[0]);
    assert.ok(out.pick.prompt_blocks > 10);
    // The step law's TTFT estimate for an idle engine (its API server, then a step), and the ranking value.
    assert.ok(out.pick.predicted_ttft_ms > 10, `predicted ${out.pick.predicted_ttft_ms} ms`);
    assert.equal(typeof out.pick.ranked_delay_ms, "number");
    assert.equal(out.queue.priority, 100);
    assert.equal(out.queue.max_queue_ms, 800);
    assert.equal(out.queue.would_wait, false);
    assert.equal(out.queue.pause, null);
    assert.deepEqual(
      out.queue.endpoints.map((e: { saturated: unknown }) => e.saturated),
      [null, null],
    );
    await sleep(30);
    assert.equal(p.lines.length, before, "nothing was sent, so nothing is logged");
    for (const e of p.gateway.pools.get("summary-online")!.endpoints) assert.equal(e.inflightRequests, 0);

    const dir = mkdtempSync(join(tmpdir(), "tg-explain-"));
    writeFileSync(join(dir, "body.json"), JSON.stringify(body));
    const tokenFile = join(dir, "admin-token");
    writeFileSync(tokenFile, p.gateway.adminToken.reveal());
    let printed = "";
    const code = await runRouteCommand(
      [
        "explain",
        "--gateway",
        p.gateway.adminUrl,
        "--token-file",
        tokenFile,
        "--request",
        join(dir, "body.json"),
        "--task",
        "live_ticket_summary",
      ],
      { out: (t: string) => (printed += t), err: (t: string) => (printed += t) },
    );
    rmSync(dir, { recursive: true });
    assert.equal(code, 0, printed);
    assert.match(printed, /"pool": "summary-online"/);
    assert.match(printed, /"top_scores"/);
  });

  it("returns the caller's trace id", async () => {
    const res = await raw(
      p,
      JSON.stringify({ model: "summary-default", messages: [{ role: "user", content: "x" }], max_tokens: 2 }),
      { "x-ai-trace-id": "req_live_8c13" },
    );
    assert.equal(res.headers.get("x-ai-trace-id"), "req_live_8c13");
    assert.equal((await lineFor(p, "req_live_8c13")).status, "ok");
  });
});

describe("gateway errors: OpenAI shape, stable code, the field at fault, nothing left behind", () => {
  let p: Platform;
  before(async () => {
    p = await startPlatform();
  });
  after(() => p.stop());

  const cases: {
    name: string;
    body: string;
    headers?: Record<string, string>;
    status: number;
    code: string;
    param?: string;
  }[] = [
    { name: "malformed JSON", body: "{not json", status: 400, code: "invalid_json", param: "body" },
    {
      name: "wrong type",
      body: JSON.stringify({
        model: "summary-default",
        messages: [{ role: "user", content: "x" }],
        max_tokens: "10",
      }),
      status: 400,
      code: "invalid_request",
      param: "max_tokens",
    },
    {
      name: "missing messages",
      body: JSON.stringify({ model: "summary-default" }),
      status: 400,
      code: "invalid_request",
      param: "messages",
    },
    {
      name: "unknown alias",
      body: JSON.stringify({ model: "gpt-9", messages: [{ role: "user", content: "x" }] }),
      status: 404,
      code: "model_not_found",
      param: "model",
    },
    {
      name: "input larger than every pool",
      body: JSON.stringify({
        model: "summary-default",
        messages: [{ role: "user", content: sampleText("en", 70_000, 3) }],
      }),
      status: 400,
      code: "context_length_exceeded",
      param: "messages",
    },
    {
      name: "no API key",
      body: JSON.stringify({ model: "summary-default", messages: [{ role: "user", content: "x" }] }),
      headers: { authorization: "" },
      status: 401,
      code: "missing_api_key",
    },
    {
      name: "wrong API key",
      body: JSON.stringify({ model: "summary-default", messages: [{ role: "user", content: "x" }] }),
      headers: { authorization: "Bearer sk-nope" },
      status: 401,
      code: "invalid_api_key",
    },
    {
      name: "bad X-AI-Task",
      body: JSON.stringify({ model: "summary-default", messages: [{ role: "user", content: "x" }] }),
      headers: { "x-ai-task": "has spaces" },
      status: 400,
      code: "invalid_request",
      param: "x-ai-task",
    },
  ];
  for (const c of cases) {
    it(`${c.name} → ${c.status} ${c.code}`, async () => {
      const before = p.lines.length;
      const res = await raw(p, c.body, c.headers ?? {});
      assert.equal(res.status, c.status);
      assert.equal(res.json.error.code, c.code);
      assert.equal(typeof res.json.error.message, "string");
      if (c.param) assert.equal(res.json.error.param, c.param);
      assert.ok(res.json.error.trace_id);
      await sleep(20);
      assert.equal(p.lines.length, before + 1, "one log line");
      assert.equal(p.lines.at(-1)!.error_code, c.code);
    });
  }

  it("a body over the size limit → 413 request_too_large", async () => {
    const res = await raw(
      p,
      JSON.stringify({
        model: "summary-default",
        messages: [{ role: "user", content: "x".repeat(1_100_000) }],
      }),
    );
    assert.equal(res.status, 413);
    assert.equal(res.json.error.code, "request_too_large");
  });

  it("an unknown path → 404 not_found in the same shape", async () => {
    const res = await raw(p, "{}", {}, "/v1/embeddings");
    assert.equal(res.status, 404);
    assert.equal(res.json.error.code, "not_found");
  });

  it("whole replies — errors and non-streaming completions — carry a Content-Length, not chunks", async () => {
    const bad = await raw(p, "{not json");
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get("content-length"), String(Buffer.byteLength(JSON.stringify(bad.json))));
    assert.equal(bad.headers.get("transfer-encoding"), null);
    const ok = await raw(
      p,
      JSON.stringify({ model: "summary-default", messages: [{ role: "user", content: "x" }], max_tokens: 3 }),
      LIVE,
    );
    assert.equal(ok.status, 200);
    assert.equal(ok.json.usage.completion_tokens, 3);
    assert.ok(Number(ok.headers.get("content-length")) > 0);
    assert.equal(ok.headers.get("transfer-encoding"), null);
  });

  it("the openai client raises typed errors", async () => {
    await assert.rejects(
      client(p).chat.completions.create({ model: "nope", messages: [{ role: "user", content: "x" }] }),
      (e: unknown) =>
        e instanceof OpenAI.NotFoundError &&
        (e as InstanceType<typeof OpenAI.APIError>).code === "model_not_found",
    );
  });

  it("no healthy endpoint → 503 with Retry-After, and the pool is named", async () => {
    for (const r of p.replicas.long) r.setFaults({ healthFail: true });
    await until(() => !p.gateway.pools.get("summary-long")!.endpoints.some((e) => e.healthy));
    const res = await raw(
      p,
      JSON.stringify({
        model: "summary-default",
        messages: [{ role: "user", content: sampleText("en", 9000, 9) }],
      }),
      LIVE,
    );
    assert.equal(res.status, 503);
    assert.equal(res.json.error.code, "no_healthy_endpoint");
    assert.equal(res.json.error.route, "summary-long");
    assert.equal(res.headers.get("retry-after"), "1");
    for (const r of p.replicas.long) r.setFaults({ healthFail: false });
  });
});

describe("gateway failure handling", () => {
  it("a client that disconnects aborts the engine request and releases every counter", async () => {
    const p = await startPlatform({ profile: "h100-llama8b", online: 1 });
    try {
      const stream = await client(p, LIVE).chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: "long answer" }],
        max_tokens: 500,
        stream: true,
      });
      let n = 0;
      for await (const _ of stream) if (++n === 3) break;
      const engine = p.replicas.online[0]!.engine;
      await until(() => engine.stats.finished.abort > 0);
      assert.equal(engine.stats.finished.abort, 1, "the engine saw the abort");
      assert.equal(engine.numRunning, 0);
      const ep = p.gateway.pools.get("summary-online")!.endpoints[0]!;
      assert.equal(ep.inflightRequests, 0);
      assert.equal(ep.inflightTokens, 0);
      await sleep(30);
      const line = p.lines.at(-1)!;
      assert.equal(line.client_cancelled, true);
      assert.equal(line.status, "client_cancelled");
    } finally {
      await p.stop();
    }
  });

  it("an engine crashing mid-stream ends the stream with an error the client raises", async () => {
    const p = await startPlatform({ profile: "h100-llama8b", online: 1 });
    try {
      const stream = await client(p, LIVE).chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: "long answer" }],
        max_tokens: 500,
        stream: true,
      });
      let n = 0;
      await assert.rejects(async () => {
        for await (const _ of stream) if (++n === 5) p.replicas.online[0]!.crash();
      }, /engine connection failed mid-stream|error/);
      await sleep(30);
      const line = p.lines.at(-1)!;
      assert.equal(line.status, "broken_stream");
      assert.equal(p.gateway.pools.get("summary-online")!.endpoints[0]!.inflightRequests, 0);
    } finally {
      await p.stop();
    }
  });

  it("retries on another endpoint when the first fails before the first byte", async () => {
    const p = await startPlatform({ online: 2 });
    try {
      // Prefix affinity keeps this conversation's prefix on one replica: learn which, then fail it.
      const c = client(p, LIVE);
      const shared = sampleText("en", 600, 4);
      await c.chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: shared }],
        max_tokens: 3,
      });
      await sleep(30);
      const sticky = p.lines.at(-1)!.endpoint;
      const failing = p.replicas.online.find((r) => r.url.endsWith(sticky ?? "?"))!;
      assert.ok(failing, `the first request went to a known replica (${sticky})`);
      failing.setFaults({ errorRate: 1 });
      p.lines.length = 0;
      for (let i = 0; i < 6; i++) {
        const res = await c.chat.completions.create({
          model: "summary-default",
          messages: [{ role: "user", content: `${shared} question ${i}` }],
          max_tokens: 3,
          stream: i % 2 === 0,
        });
        if (!(Symbol.asyncIterator in res)) assert.equal(res.usage!.completion_tokens, 3);
        else for await (const _ of res);
      }
      await sleep(30);
      const retried = p.lines.filter((l) => l.attempts === 2);
      assert.ok(retried.length > 0, "some requests hit the failing replica first");
      for (const l of retried) {
        assert.match(l.fallback_reason ?? "", /retry:.*status=503/);
        assert.equal(l.status, "ok");
      }
      assert.equal(p.lines.length, 6, "exactly one log line per request");
    } finally {
      await p.stop();
    }
  });

  it("a crashed endpoint (connection refused) is retried elsewhere and then avoided", async () => {
    const p = await startPlatform({ online: 2 });
    try {
      await p.replicas.online[0]!.stop();
      const c = client(p, LIVE);
      for (let i = 0; i < 4; i++) {
        const r = await c.chat.completions.create({
          model: "summary-default",
          messages: [{ role: "user", content: "x" }],
          max_tokens: 2,
        });
        assert.equal(r.usage!.completion_tokens, 2);
      }
    } finally {
      await p.stop();
    }
  });
});

describe("gateway deadlines", () => {
  const gatewayYaml = `
apiVersion: tokengate.dev/v1alpha1
kind: GatewayConfig
metadata: { name: test }
spec:
  listen: { host: 127.0.0.1, port: 0 }
  auth: { allowAnonymous: true, apiKeys: [{ key: ${KEYS.basic}, tenant: support-basic }] }
  timeouts: { connectMs: 500, firstByteMs: 400, idleMs: 400, totalMs: 1500 }
  retry: { maxAttempts: 2, budgetPercent: 100 }
  limits: { bodyReadMs: 500 }
`;

  it("a body that does not all arrive in time → 408 request_timeout, and the connection is closed", async () => {
    const p = await startPlatform({ online: 1, gatewayYaml });
    try {
      const { hostname, port } = new URL(p.url);
      const sock = connect({ host: hostname, port: Number(port) });
      let reply = "";
      sock.on("data", (d) => (reply += d));
      const closed = new Promise<void>((r) => sock.on("close", () => r()));
      const t0 = performance.now();
      sock.write(
        `POST /v1/chat/completions HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\n` +
          `x-ai-trace-id: slow-body\r\ncontent-length: 100\r\n\r\n{"model":`,
      );
      await closed;
      const waited = performance.now() - t0;
      assert.ok(waited >= 450, `answered after ${waited} ms, before the deadline`);
      assert.match(reply, /^HTTP\/1\.1 408 /);
      assert.match(reply, /\r\nconnection: close\r\n/i);
      const error = JSON.parse(reply.slice(reply.indexOf("{"), reply.lastIndexOf("}") + 1)).error;
      assert.equal(error.code, "request_timeout");
      assert.equal(error.param, "body");
      assert.match(error.message, /bodyReadMs \(500 ms\): 9 bytes came/);
      const line = await lineFor(p, "slow-body");
      assert.equal(line.error_code, "request_timeout");
      assert.equal(line.http_status, 408);
    } finally {
      await p.stop();
    }
  });

  it("a stream with no first token in time is retried on another endpoint", async () => {
    const p = await startPlatform({ online: 2, gatewayYaml });
    try {
      p.replicas.online[0]!.setFaults({ stallAfterTokens: 0 });
      const c = client(p, LIVE);
      // Ties between the two endpoints break at random: send until the stalled one has been
      // picked (each request has an even chance; 2^-24 that 24 never do).
      const retriedLines = () => p.lines.filter((l) => /retry:.*:timeout/.test(l.fallback_reason ?? ""));
      for (let i = 0; i < 24 && retriedLines().length === 0; i++) {
        const stream = await c.chat.completions.create({
          model: "summary-default",
          messages: [{ role: "user", content: `q${i}` }],
          max_tokens: 3,
          stream: true,
        });
        let n = 0;
        for await (const chunk of stream) if (chunk.choices[0]?.delta.content) n++;
        assert.equal(n, 3);
        await sleep(5);
      }
      await sleep(30);
      const retried = retriedLines();
      assert.ok(retried.length > 0, "the stalled endpoint was tried and left");
      for (const l of retried) assert.equal(l.status, "ok");
    } finally {
      await p.stop();
    }
  });

  it("a stream that goes quiet mid-way ends with an error event after the idle deadline", async () => {
    const p = await startPlatform({ online: 1, gatewayYaml });
    try {
      p.replicas.online[0]!.setFaults({ stallAfterTokens: 2 });
      const stream = await client(p, LIVE).chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: "x" }],
        max_tokens: 10,
        stream: true,
      });
      await assert.rejects(async () => {
        for await (const _ of stream);
      }, /stalled|idle/);
      await sleep(30);
      assert.equal(p.lines.at(-1)!.status, "broken_stream");
    } finally {
      await p.stop();
    }
  });

  it("a non-streaming reply past the total deadline → 504 upstream_timeout, not retried", async () => {
    const p = await startPlatform({ online: 2, profile: "h100-llama8b", gatewayYaml });
    try {
      const res = await raw(
        p,
        JSON.stringify({
          model: "summary-default",
          messages: [{ role: "user", content: "x" }],
          max_tokens: 590,
        }),
        { ...LIVE, authorization: "" },
      );
      assert.equal(res.status, 504);
      assert.equal(res.json.error.code, "upstream_timeout");
      await sleep(30);
      assert.equal(p.lines.at(-1)!.attempts, 1);
    } finally {
      await p.stop();
    }
  });
});
