// The director's service against fake regions on loopback, with a stub core (StubDirectorCore; the real
// decision is director-core's, tested on its own and end to end in director-e2e.test.ts): the L7 door
// relays replies and streams intact, redirect sends a 307, the answer API agrees with the L7 door,
// pushes and polls reach the core, a failure before the first byte is retried once elsewhere, and
// metrics and the log line say what was decided.

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import OpenAI from "openai";
import {
  directorConfigOf,
  FakeRegion,
  replyWords,
  StubDirectorCore,
  summaryOf,
} from "../testing/fake-region.js";
import { type RunningDirector, startDirector } from "./director-service.js";
import type { DirectorConfig, RegionCandidate, RegionState } from "./director-types.js";

async function waitFor(what: string, ok: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Setup {
  director: RunningDirector;
  core: StubDirectorCore;
  regions: FakeRegion[];
  /** Every `director.decision` line (and other events) logged. */
  events: { event: string; fields: Record<string, unknown> }[];
}

const running: { stop(): Promise<void> }[] = [];
after(async () => {
  for (const r of running.reverse()) await r.stop();
});

/** Fake regions `a` (headroom 0.9) and `b` (0.3), a director in front, polled once before it returns. */
async function setup(over: Partial<DirectorConfig> = {}, extra: FakeRegion[] = []): Promise<Setup> {
  const a = await FakeRegion.start({ name: "a", headroom: 0.9 });
  const b = await FakeRegion.start({ name: "b", headroom: 0.3 });
  const regions = [a, b, ...extra];
  running.push(...regions);
  const config = directorConfigOf(regions, over);
  const core = new StubDirectorCore(config.regions.map((r) => r.name));
  const director = await startDirector({ config, core, logDestination: "none" });
  running.push(director);
  const events: Setup["events"] = [];
  director.log.eventListener = (event, fields) => events.push({ event, fields });
  await waitFor("the first polls", async () => (await fetch(`${director.url}/ready`)).status === 200);
  return { director, core, regions, events };
}

const chatBody = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], ...extra });

function post(url: string, body: string, headers: Record<string, string> = {}) {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
}

const decisionsOf = (s: Setup) =>
  s.events.filter((e) => e.event === "director.decision").map((e) => e.fields);

describe("director, L7 mode", () => {
  it("relays a stream chunk by chunk and in order to the openai client (no buffering)", {
    timeout: 30_000,
  }, async () => {
    const s = await setup();
    const [a] = s.regions;
    const release = a!.holdStreams();
    const client = new OpenAI({ baseURL: `${s.director.url}/v1`, apiKey: "sk-test", maxRetries: 0 });
    const { data: stream, response } = await client.chat.completions
      .create({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true })
      .withResponse();
    assert.equal(response.headers.get("x-ai-director-region"), "a");
    assert.equal(response.headers.get("x-ai-director-reason"), "home");
    const words: string[] = [];
    for await (const chunk of stream) {
      const text = chunk.choices[0]?.delta.content ?? "";
      words.push(text.trim());
      // The region holds the rest until now: the first chunk came through on its own.
      if (words.length === 1) release();
    }
    assert.deepEqual(words, replyWords("a"));
    assert.equal(a!.requests.length, 1);
    assert.equal(a!.requests[0]!.body.stream, true);
  });

  it("relays a JSON reply intact, passes the caller's headers on and names the region", async () => {
    const s = await setup();
    const client = new OpenAI({ baseURL: `${s.director.url}/v1`, apiKey: "sk-test", maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create(
        { model: "m", messages: [{ role: "user", content: "hi" }] },
        { headers: { "x-ai-tenant": "acme" } },
      )
      .withResponse();
    assert.equal(data.choices[0]?.message.content, replyWords("a").join(" "));
    assert.equal(response.headers.get("x-fake-region"), "a", "the region's own headers come through");
    assert.equal(response.headers.get("x-ai-director-region"), "a");
    const seen = s.regions[0]!.requests[0]!;
    assert.equal(seen.headers["x-ai-tenant"], "acme");
    assert.equal(seen.headers.authorization, "Bearer sk-test");
    assert.equal(seen.headers["x-ai-trace-id"], response.headers.get("x-ai-trace-id"));
    assert.deepEqual(s.core.outcomes, [{ region: "a", ok: true }]);
  });

  it("ends the region's stream when the client goes away, and logs client_cancelled", {
    timeout: 30_000,
  }, async () => {
    const s = await setup();
    const release = s.regions[0]!.holdStreams();
    const res = await post(`${s.director.url}/v1/chat/completions`, chatBody({ stream: true }), {
      "x-ai-trace-id": "gone-1",
    });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /^data: /);
    await reader.cancel();
    await waitFor("the line", () => decisionsOf(s).some((l) => l.trace_id === "gone-1"));
    release();
    const line = decisionsOf(s).find((l) => l.trace_id === "gone-1")!;
    assert.equal(line.status, "client_cancelled");
    assert.equal(s.director.activeRequests, 0);
    assert.deepEqual(s.core.outcomes, [], "a client leaving is no fault of the region");
  });

  it("retries a 5xx before the first byte once, on another region; a second 5xx is relayed", async () => {
    const s = await setup();
    const [a, b] = s.regions;
    a!.failNext = 1;
    const res = await post(`${s.director.url}/v1/chat/completions`, chatBody());
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-ai-director-region"), "b");
    assert.equal(res.headers.get("x-ai-director-reason"), "failover");
    assert.equal(((await res.json()) as any).choices[0].message.content, replyWords("b").join(" "));
    assert.deepEqual(s.core.outcomes, [
      { region: "a", ok: false },
      { region: "b", ok: true },
    ]);
    a!.failNext = 1;
    b!.failNext = 1;
    const both = await post(`${s.director.url}/v1/chat/completions`, chatBody());
    assert.equal(both.status, 503);
    assert.equal(both.headers.get("x-ai-director-region"), "b");
    assert.match(((await both.json()) as any).error.message, /b is failing/);
    assert.equal(a!.requests.length, 2);
    assert.equal(b!.requests.length, 2, "one retry, not more");
    const lines = decisionsOf(s);
    assert.equal(lines[0]!.attempts, 2);
    assert.equal(lines[0]!.retried_from, "a");
    assert.equal(lines[0]!.region, "b");
    assert.equal(lines[1]!.status, "upstream_error");
    const metrics = await (await fetch(`${s.director.url}/metrics`)).text();
    assert.match(metrics, /^ai_director_forward_failures_total\{region="a"\} 2$/m);
    assert.match(metrics, /^ai_director_forward_failures_total\{region="b"\} 1$/m);
  });

  it("retries a connect failure on another region", async () => {
    const a = await FakeRegion.start({ name: "a", headroom: 0.5 });
    // x's summary says it is the best region, but its gateway URL points at a closed port.
    const x = await FakeRegion.start({ name: "x", headroom: 1 });
    const closed = await FakeRegion.start({ name: "closed" });
    await closed.stop();
    running.push(a, x);
    const config = directorConfigOf([x, a]);
    const regions = config.regions.map((r) => (r.name === "x" ? { ...r, gatewayUrl: closed.url } : r));
    const core = new StubDirectorCore(["x", "a"]);
    const d = await startDirector({ config: { ...config, regions }, core, logDestination: "none" });
    running.push(d);
    await waitFor("both summaries", () => core.summaries.size === 2);
    const res = await post(`${d.url}/v1/chat/completions`, chatBody());
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-ai-director-region"), "a");
    assert.equal(res.headers.get("x-ai-director-reason"), "failover");
    await res.arrayBuffer();
    assert.deepEqual(core.outcomes, [
      { region: "x", ok: false },
      { region: "a", ok: true },
    ]);
  });
});

describe("director, redirect mode", () => {
  it("answers 307 to the chosen region's gateway with the director's headers", async () => {
    const s = await setup({ mode: "redirect" });
    const res = await fetch(`${s.director.url}/v1/chat/completions?x=1`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: chatBody(),
      redirect: "manual",
    });
    assert.equal(res.status, 307);
    assert.equal(res.headers.get("location"), `${s.regions[0]!.url}/v1/chat/completions?x=1`);
    assert.equal(res.headers.get("x-ai-director-region"), "a");
    assert.equal(res.headers.get("x-ai-director-reason"), "home");
    assert.equal(s.regions[0]!.requests.length, 0, "the director sent nothing itself");
    assert.equal(decisionsOf(s)[0]!.http_status, 307);
  });
});

describe("director, answer API", () => {
  it("agrees with the L7 door's choice for the same request", async () => {
    const s = await setup();
    const q = "tenant=acme&model=m&caller_region=eu";
    const answer = (await (await fetch(`${s.director.url}/director/answer?${q}`)).json()) as any;
    const dry = (await (await fetch(`${s.director.url}/director/answer?${q}&dry_run=1`)).json()) as any;
    const explain = (await (await fetch(`${s.director.url}/director/explain?${q}`)).json()) as any;
    const res = await post(`${s.director.url}/v1/chat/completions`, chatBody(), {
      "x-ai-tenant": "acme",
      "x-ai-caller-region": "eu",
    });
    await res.arrayBuffer();
    assert.equal(answer.region, res.headers.get("x-ai-director-region"));
    assert.equal(answer.reason, res.headers.get("x-ai-director-reason"));
    assert.equal(dry.region, answer.region);
    assert.equal(explain.decision.region, answer.region);
    assert.equal(answer.gateway_url, s.regions[0]!.url);
    assert.equal(answer.ttl_s, 5);
    assert.equal(answer.candidates.length, 2);
    assert.deepEqual(explain.query, {
      tenant: "acme",
      model: "m",
      version: null,
      callerRegion: "eu",
      session: "acme",
    });
    assert.equal(s.core.decisions, 2, "answer and the L7 request decided; the dry run and explain did not");
    assert.deepEqual(
      decisionsOf(s).map((l) => [l.front, l.region]),
      [
        ["answer", "a"],
        ["forward", "a"],
      ],
    );
  });

  it("refuses with the OpenAI error shape: 503 and Retry-After naming the constraint, 400 without a model", async () => {
    const s = await setup();
    const refused = await fetch(`${s.director.url}/director/answer?model=nope`);
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get("retry-after"), "1");
    const body = (await refused.json()) as any;
    assert.equal(body.error.code, "model_unavailable");
    assert.match(body.error.message, /"nope"/);
    const l7 = await post(`${s.director.url}/v1/chat/completions`, chatBody({ model: "nope" }));
    assert.equal(l7.status, 503);
    assert.equal(((await l7.json()) as any).error.code, "model_unavailable");
    const noModel = await post(`${s.director.url}/v1/chat/completions`, JSON.stringify({ messages: [] }));
    assert.equal(noModel.status, 400);
    assert.equal(((await noModel.json()) as any).error.param, "model");
    const notJson = await post(`${s.director.url}/v1/completions`, "{");
    assert.equal(((await notJson.json()) as any).error.code, "invalid_json");
    const answerNoModel = await fetch(`${s.director.url}/director/answer?tenant=t`);
    assert.equal(answerNoModel.status, 400);
    assert.equal((await fetch(`${s.director.url}/v1/chat/completions`)).status, 405);
    assert.equal((await fetch(`${s.director.url}/nowhere`)).status, 404);
    const metrics = await (await fetch(`${s.director.url}/metrics`)).text();
    assert.match(metrics, /^ai_director_refusals_total\{code="model_unavailable"\} 2$/m);
  });

  it("refuses a body past the cap with 413", async () => {
    const a = await FakeRegion.start({ name: "a" });
    running.push(a);
    const config = directorConfigOf([a]);
    const d = await startDirector({
      config,
      core: new StubDirectorCore(["a"]),
      logDestination: "none",
      maxBodyBytes: 1024,
    });
    running.push(d);
    const res = await post(`${d.url}/v1/chat/completions`, chatBody({ pad: "x".repeat(2048) }));
    assert.equal(res.status, 413);
  });
});

describe("director, summaries", () => {
  it("lists the models its regions serve to the openai client, by the tenant's residency", async () => {
    const c = await FakeRegion.start({ name: "c", models: ["m", "c-only"] });
    const s = await setup({ residency: { "t-ab": ["a", "b"] } }, [c]);
    const client = (tenant?: string) =>
      new OpenAI({
        baseURL: `${s.director.url}/v1`,
        apiKey: "sk-test",
        maxRetries: 0,
        defaultHeaders: tenant ? { "x-ai-tenant": tenant } : {},
      });
    const ids = async (tenant?: string) => {
      const list = await client(tenant).models.list();
      return list.data.map((m) => m.id);
    };
    assert.deepEqual(await ids(), ["c-only", "m"]);
    assert.deepEqual(await ids("t-ab"), ["m"]);
    const one = await client().models.retrieve("c-only");
    assert.deepEqual([one.id, one.object, one.owned_by], ["c-only", "model", "tokengate"]);
    await assert.rejects(client("t-ab").models.retrieve("c-only"), (err: unknown) => {
      assert.ok(err instanceof OpenAI.NotFoundError);
      assert.equal((err.error as any).code, "model_not_found");
      return true;
    });
    assert.equal((await post(`${s.director.url}/v1/models`, "{}")).status, 405);
  });

  it("uses a pushed summary; refuses a bad one with 400 naming the field", async () => {
    const s = await setup({ polling: { intervalMs: 60_000, staleAfterMs: 120_000, timeoutMs: 500 } });
    const push = (summary: unknown) =>
      post(`${s.director.url}/director/summary`, JSON.stringify(summary)).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as any,
      }));
    const before = (await (await fetch(`${s.director.url}/director/answer?model=m`)).json()) as any;
    assert.equal(before.region, "a");
    assert.equal((await push(summaryOf("b", ["m"], 0.99))).status, 200);
    const afterPush = (await (await fetch(`${s.director.url}/director/answer?model=m`)).json()) as any;
    assert.equal(afterPush.region, "b");
    const bad = await push({ ...summaryOf("b", ["m"], 0.5), pools: [{ pool: "p", headroom: 2 }] });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, "pools[0].headroom");
    const unknown = await push(summaryOf("zz", ["m"], 0.5));
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.param, "region");
  });

  it("marks a region whose summary endpoint stops answering with poll failures", async () => {
    const s = await setup({ polling: { intervalMs: 50, staleAfterMs: 10_000, timeoutMs: 200 } });
    const [a] = s.regions;
    assert.ok(s.core.rtts.get("a")! >= 0, "a poll's round trip is measured");
    a!.summaryMode = "hang";
    await waitFor("a failed poll of a", () => s.core.pollFailures.some((f) => f.region === "a"));
    assert.match(
      s.core.pollFailures.find((f) => f.region === "a")!.why,
      /no answer within polling.timeoutMs \(200 ms\)/,
    );
    const res = await post(`${s.director.url}/v1/chat/completions`, chatBody());
    assert.equal(res.headers.get("x-ai-director-region"), "b");
    await res.arrayBuffer();
    const regions = (await (await fetch(`${s.director.url}/director/regions`)).json()) as any;
    assert.equal(regions.regions.find((r: RegionState) => r.region === "a").breaker, "open");
    const metrics = await (await fetch(`${s.director.url}/metrics`)).text();
    assert.match(metrics, /^ai_director_poll_failures_total\{region="a"\} [1-9]\d*$/m);
    assert.match(metrics, /^ai_director_breaker_state\{region="a"\} 1$/m);
    assert.ok(s.events.some((e) => e.event === "director.poll-failed" && e.fields.region === "a"));
    a!.summaryMode = "error";
    await waitFor("a failure by status", () =>
      s.core.pollFailures.some((f) => f.why.startsWith("status 500")),
    );
  });

  it("sends the region's bearer token with each poll", async () => {
    const t = await FakeRegion.start({ name: "t", summaryToken: "s3cret" });
    const w = await FakeRegion.start({ name: "w", summaryToken: "other" });
    running.push(t, w);
    const config = directorConfigOf([t, w]);
    const regions = config.regions.map((r) => ({ ...r, summaryToken: "s3cret" }));
    const core = new StubDirectorCore(["t", "w"]);
    const d = await startDirector({ config: { ...config, regions }, core, logDestination: "none" });
    running.push(d);
    await waitFor(
      "t's summary and w's refusal",
      () => core.summaries.has("t") && core.pollFailures.length > 0,
    );
    assert.match(core.pollFailures[0]!.why, /^status 401/);
    assert.equal(core.pollFailures[0]!.region, "w");
  });

  it("is not ready until every region was polled once", async () => {
    const slow = await FakeRegion.start({ name: "slow" });
    running.push(slow);
    slow.summaryMode = "hang";
    const config = directorConfigOf([slow], {
      polling: { intervalMs: 100, staleAfterMs: 60_000, timeoutMs: 2_000 },
    });
    const core = new StubDirectorCore(["slow"]);
    const d = await startDirector({ config, core, logDestination: "none" });
    running.push(d);
    const early = await fetch(`${d.url}/ready`);
    assert.equal(early.status, 503);
    assert.deepEqual(((await early.json()) as any).waiting_for, ["slow"]);
    await waitFor("readiness", async () => (await fetch(`${d.url}/ready`)).status === 200);
    assert.equal(core.pollFailures.length >= 1, true, "a failed poll counts as heard from");
    assert.equal((await (await fetch(`${d.url}/health`)).text()).trim(), "ok");
  });
});

describe("director, metrics and log", () => {
  it("show the decision: counters, region gauges and one JSON line with the candidates", async () => {
    const s = await setup();
    const res = await post(`${s.director.url}/v1/chat/completions`, chatBody(), {
      "x-ai-trace-id": "trace-director-1",
      "x-ai-tenant": "acme",
      "x-ai-caller-region": "eu",
    });
    await res.arrayBuffer();
    const metrics = await (await fetch(`${s.director.url}/metrics`)).text();
    assert.match(metrics, /^ai_director_decisions_total\{region="a",reason="home"\} 1$/m);
    assert.match(metrics, /^ai_director_breaker_state\{region="a"\} 0$/m);
    assert.match(metrics, /^ai_director_summary_age_seconds\{region="b"\} \d/m);
    assert.match(metrics, /^ai_director_region_headroom\{region="a",model="m"\} 0.9$/m);
    const line = decisionsOf(s).find((l) => l.trace_id === "trace-director-1")!;
    assert.ok(line, "one line for the request");
    assert.equal(line.front, "forward");
    assert.equal(line.tenant, "acme");
    assert.equal(line.model, "m");
    assert.equal(line.caller_region, "eu");
    assert.equal(line.region, "a");
    assert.equal(line.reason, "home");
    assert.equal(line.status, "ok");
    assert.equal(line.http_status, 200);
    assert.equal(typeof line.latency_ms, "number");
    const candidates = line.candidates as RegionCandidate[];
    assert.deepEqual(
      candidates.map((c) => [c.region, c.score]),
      [
        ["a", 0.9],
        ["b", 0.3],
      ],
    );
  });
});
