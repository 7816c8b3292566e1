// The director end to end with its real decision core (RegionDirectorCore) in front of two fake regions,
// eu and us, on loopback: each caller goes to its nearest region through every front door alike, a
// stream comes through the openai client intact, failed polls open a region's breaker and move traffic,
// a 5xx before the first byte is retried once on the other region, and residency refusals name the rule.

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import OpenAI from "openai";
import { directorConfigOf, FakeRegion, replyWords } from "../testing/fake-region.js";
import { RegionDirectorCore } from "./director-core.js";
import { type RunningDirector, startDirector } from "./director-service.js";
import type { DirectorConfig, RegionState } from "./director-types.js";

const running: { stop(): Promise<void> }[] = [];
after(async () => {
  for (const r of running.reverse()) await r.stop();
});

async function waitFor(what: string, ok: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Setup {
  director: RunningDirector;
  eu: FakeRegion;
  us: FakeRegion;
  lines: Record<string, unknown>[];
}

/** eu and us, each 10 ms from its own callers and 150 ms from the other's; tenant `eu-only` is EU-only. */
async function setup(over: Partial<DirectorConfig> = {}): Promise<Setup> {
  const eu = await FakeRegion.start({ name: "eu", headroom: 0.8 });
  const us = await FakeRegion.start({ name: "us", headroom: 0.8 });
  running.push(eu, us);
  const config = directorConfigOf([eu, us], {
    latencyMs: { eu: { eu: 10, us: 150 }, us: { eu: 150, us: 10 } },
    residency: { "eu-only": ["eu"] },
    affinity: { header: "x-session-id", ttlMs: 60_000 },
    polling: { intervalMs: 50, staleAfterMs: 10_000, timeoutMs: 500 },
    ...over,
  });
  const director = await startDirector({
    config,
    core: new RegionDirectorCore(config),
    logDestination: "none",
  });
  running.push(director);
  const lines: Record<string, unknown>[] = [];
  director.log.eventListener = (event, fields) => {
    if (event === "director.decision") lines.push(fields);
  };
  await waitFor("the first polls", async () => (await fetch(`${director.url}/ready`)).status === 200);
  return { director, eu, us, lines };
}

const json = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
};

function chat(url: string, headers: Record<string, string>) {
  return fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
  });
}

async function regionState(d: RunningDirector, region: string): Promise<RegionState> {
  const { body } = await json(`${d.url}/director/regions`);
  return body.regions.find((r: RegionState) => r.region === region);
}

describe("director with RegionDirectorCore", () => {
  it("sends each caller to its nearest region alike through the answer API, explain and the L7 door", async () => {
    const s = await setup();
    for (const caller of ["eu", "us"]) {
      const q = `tenant=t-${caller}&model=m&caller_region=${caller}&session=s-${caller}`;
      const dry = await json(`${s.director.url}/director/answer?${q}&dry_run=1`);
      const explain = await json(`${s.director.url}/director/explain?${q}`);
      const answer = await json(`${s.director.url}/director/answer?${q}`);
      const res = await chat(s.director.url, {
        "x-ai-tenant": `t-${caller}`,
        "x-ai-caller-region": caller,
        "x-session-id": `s-${caller}`,
      });
      await res.arrayBuffer();
      assert.equal(answer.body.region, caller, `caller ${caller}`);
      assert.equal(dry.body.region, caller);
      assert.equal(explain.body.decision.region, caller);
      assert.equal(res.headers.get("x-ai-director-region"), answer.body.region);
      assert.equal(res.headers.get("x-ai-director-reason"), answer.body.reason);
      assert.equal(answer.body.gateway_url, (caller === "eu" ? s.eu : s.us).url);
      const scored = explain.body.decision.candidates.filter((c: any) => c.score !== null);
      assert.equal(scored.length, 2, "both regions scored, with their terms");
      assert.ok(scored.every((c: any) => typeof c.terms.latency === "number"));
    }
    assert.equal(s.eu.requests.length, 1);
    assert.equal(s.us.requests.length, 1);
    const forwarded = s.lines.filter((l) => l.front === "forward");
    assert.deepEqual(
      forwarded.map((l) => [l.caller_region, l.region, l.affinity]),
      [
        ["eu", "eu", "kept"],
        ["us", "us", "kept"],
      ],
      "the answer API recorded the session's region as a send does",
    );
  });

  it("relays a stream intact to the openai client from the caller's region", {
    timeout: 30_000,
  }, async () => {
    const s = await setup();
    const release = s.us.holdStreams();
    const client = new OpenAI({
      baseURL: `${s.director.url}/v1`,
      apiKey: "sk-test",
      maxRetries: 0,
      defaultHeaders: { "x-ai-caller-region": "us" },
    });
    const stream = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    });
    const words: string[] = [];
    for await (const chunk of stream) {
      words.push((chunk.choices[0]?.delta.content ?? "").trim());
      if (words.length === 1) release();
    }
    assert.deepEqual(words, replyWords("us"));
  });

  it("opens a region's breaker on failed polls and fails its callers over", async () => {
    const s = await setup({
      breaker: { errorRateToOpen: 0.5, failuresToOpen: 2, openMs: 60_000, halfOpenProbes: 1 },
    });
    const home = await chat(s.director.url, { "x-ai-caller-region": "us" });
    await home.arrayBuffer();
    assert.equal(home.headers.get("x-ai-director-region"), "us");
    s.us.summaryMode = "error";
    await waitFor(
      "us's breaker to open",
      async () => (await regionState(s.director, "us")).breaker === "open",
    );
    assert.match((await regionState(s.director, "us")).breakerReason ?? "", /poll/);
    const res = await chat(s.director.url, { "x-ai-caller-region": "us" });
    await res.arrayBuffer();
    assert.equal(res.headers.get("x-ai-director-region"), "eu");
    assert.equal(res.headers.get("x-ai-director-reason"), "failover");
    const explain = await json(`${s.director.url}/director/explain?model=m&caller_region=us`);
    const us = explain.body.decision.candidates.find((c: any) => c.region === "us");
    assert.equal(us.filtered, "breaker_open");
    const metrics = await (await fetch(`${s.director.url}/metrics`)).text();
    assert.match(metrics, /^ai_director_breaker_state\{region="us"\} 1$/m);
    assert.match(metrics, /^ai_director_breaker_state\{region="eu"\} 0$/m);
    assert.match(metrics, /^ai_director_decisions_total\{region="eu",reason="failover"\} 1$/m);
  });

  it("retries a 5xx before the first byte once, on the other region", async () => {
    const s = await setup();
    s.eu.failNext = 1;
    const res = await chat(s.director.url, { "x-ai-caller-region": "eu" });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-ai-director-region"), "us");
    assert.equal(((await res.json()) as any).choices[0].message.content, replyWords("us").join(" "));
    assert.equal(s.eu.requests.length, 1);
    assert.equal(s.us.requests.length, 1);
    const line = s.lines.at(-1)!;
    assert.equal(line.retried_from, "eu");
    assert.equal(line.attempts, 2);
  });

  it("refuses a tenant whose only regions are down: 503, Retry-After, the residency named", async () => {
    const s = await setup({
      breaker: { errorRateToOpen: 0.5, failuresToOpen: 2, openMs: 60_000, halfOpenProbes: 1 },
    });
    s.eu.summaryMode = "error";
    await waitFor(
      "eu's breaker to open",
      async () => (await regionState(s.director, "eu")).breaker === "open",
    );
    const answer = await json(`${s.director.url}/director/answer?tenant=eu-only&model=m&caller_region=eu`);
    assert.equal(answer.status, 503);
    assert.ok(Number(answer.headers.get("retry-after")) >= 1);
    assert.equal(answer.body.error.code, "residency_unavailable");
    assert.match(answer.body.error.message, /"eu-only".*data residency/);
    const res = await chat(s.director.url, { "x-ai-tenant": "eu-only", "x-ai-caller-region": "eu" });
    assert.equal(res.status, 503);
    assert.equal(((await res.json()) as any).error.code, "residency_unavailable");
    assert.equal(s.us.requests.length, 0, "never outside the tenant's regions");
    const other = await chat(s.director.url, { "x-ai-tenant": "anyone", "x-ai-caller-region": "eu" });
    await other.arrayBuffer();
    assert.equal(other.headers.get("x-ai-director-region"), "us");
    const metrics = await (await fetch(`${s.director.url}/metrics`)).text();
    assert.match(metrics, /^ai_director_refusals_total\{code="residency_unavailable"\} 2$/m);
  });
});
