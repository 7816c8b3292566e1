// Tenant budgets end to end (seed 004's InferenceBudget, the in-memory store): simulated engines, the
// official openai client. Parallel requests never overshoot a concurrency limit; a single input over its
// limit, a day's input budget spent and a request outside the tenant's window are refused with the
// budget, used and limit, and when to retry; a stream's usage counts whether or not the caller asked for
// it; a cancelled stream, an engine failure and an engine crash give their slots back.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { KEYS, openaiClient, type Platform, SECRET, startPlatform } from "../testing/platform.js";

const LIVE = { "x-ai-task": "live_ticket_summary", "x-ai-request-class": "interactive" };

/** A window that began an hour ago or opens in two hours (UTC), as "HH:MM-HH:MM". */
function windowFrom(now: Date, startHours: number, lengthHours: number): string {
  const at = (h: number) => {
    const d = new Date(now.getTime() + h * 3_600_000);
    return `${String(d.getUTCHours()).padStart(2, "0")}:${String(d.getUTCMinutes()).padStart(2, "0")}`;
  };
  return `${at(startHours)}-${at(startHours + lengthHours)}`;
}

/** When the budget below was written: night-owl's window opens two hours later, to the minute. */
const WRITTEN = new Date();
const NIGHT_OWL_OPENS_MS = Math.floor((WRITTEN.getTime() + 2 * 3_600_000) / 60_000) * 60_000;

const BUDGET = `apiVersion: ai.example.com/v1alpha1
kind: InferenceBudget
metadata: { name: test-budget }
spec:
  timeZone: UTC
  tenants:
    - { name: quality-job, concurrentRequests: 3 }
    - { name: support-basic, maxSingleInputTokens: 600, dailyInputTokens: 2000 }
    - { name: night-owl, allowedWindows: ["${windowFrom(WRITTEN, 2, 1)}"] }
    - { name: streamer, concurrentRequests: 2 }
`;

async function usage(p: Platform, tenant: string) {
  const v = (await (await p.admin("/admin/budgets")).json()) as {
    tenants: { tenant: string; usage: { inputTokens: number; outputTokens: number; inFlight: number } }[];
  };
  return v.tenants.find((t) => t.tenant === tenant)!.usage;
}

function asTenant(p: Platform, tenant: string, headers: Record<string, string> = LIVE) {
  return openaiClient(p, { ...headers, "x-ai-tenant": tenant, "x-ai-upstream-secret": SECRET });
}

describe("tenant budgets", () => {
  let p: Platform;
  before(async () => {
    p = await startPlatform({ profile: "h100-llama8b", budgetYaml: BUDGET });
  });
  after(() => p.stop());

  it("never admits more than concurrentRequests at once; the rest get 429 concurrency_limit with Retry-After", async () => {
    const client = openaiClient(p, LIVE, KEYS.quality);
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        client.chat.completions
          .create({
            model: "summary-default",
            messages: [{ role: "user", content: `第${i}条：请总结这段较长的客服对话。` }],
            max_tokens: 120,
            stream: true,
          })
          .then(async (s) => {
            for await (const _ of s);
          }),
      ),
    );
    const ok = results.filter((r) => r.status === "fulfilled").length;
    const refused = results.flatMap((r) => (r.status === "rejected" ? [r.reason as any] : []));
    assert.equal(ok, 3, "exactly the limit ran");
    assert.equal(refused.length, 9);
    for (const e of refused) {
      assert.equal(e.status, 429);
      assert.equal(e.error?.code ?? e.code, "concurrency_limit");
      assert.equal(e.headers?.get?.("retry-after") ?? e.headers?.["retry-after"], "1");
    }
    const body = refused[0].error;
    assert.equal(body.budget, "concurrentRequests");
    assert.equal(body.limit, 3);
    assert.equal(body.used, 3);
    assert.equal((await usage(p, "quality-job")).inFlight, 0, "every slot came back");
    const rejections = await (await p.admin("/metrics")).text();
    assert.match(
      rejections,
      /ai_gateway_rejections_total\{code="concurrency_limit",tenant="quality-job"\} 9/,
    );
  });

  it("input_too_large names the field and the limit; a day's input budget refuses once spent, until the next day", async () => {
    const client = openaiClient(p, LIVE, KEYS.basic);
    await assert.rejects(
      client.chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: "用户反馈订单未发货。".repeat(200) }],
        max_tokens: 8,
      }),
      (e: any) => {
        assert.equal(e.status, 400);
        assert.equal(e.code, "input_too_large");
        assert.equal(e.param, "messages");
        assert.equal(e.error.limit, 600);
        assert.equal(e.error.retry_after_seconds, null);
        return true;
      },
    );
    const spent: number[] = [];
    let refusal: any = null;
    for (let i = 0; i < 20 && refusal === null; i++) {
      const before = p.lines.length;
      try {
        await client.chat.completions.create({
          model: "summary-default",
          messages: [
            { role: "user", content: `第${i}条：${"用户反馈订单未发货，客服已经催促仓库。".repeat(12)}` },
          ],
          max_tokens: 4,
        });
        spent.push(p.lines[before]!.input_tokens_actual!);
      } catch (e) {
        refusal = e;
      }
    }
    assert.ok(refusal, "the daily input budget ran out");
    assert.equal(refusal.status, 429);
    assert.equal(refusal.code, "budget_exceeded");
    assert.equal(refusal.error.budget, "dailyInputTokens");
    assert.equal(refusal.error.limit, 2000);
    const secondsToMidnight = Math.ceil(
      (Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) -
        Date.now()) /
        1000,
    );
    assert.ok(
      Math.abs(refusal.error.retry_after_seconds - secondsToMidnight) <= 5,
      "retry at the next budget day",
    );
    const u = await usage(p, "support-basic");
    assert.equal(
      u.inputTokens,
      spent.reduce((a, b) => a + b, 0),
      "settled with the engine's own counts",
    );
    assert.ok(u.inputTokens <= 2000, `never over the limit: ${u.inputTokens}`);
  });

  it("outside_allowed_window says when the window opens", async () => {
    await assert.rejects(
      asTenant(p, "night-owl").chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: "一句话总结。" }],
        max_tokens: 4,
      }),
      (e: any) => {
        assert.equal(e.status, 429);
        assert.equal(e.code, "outside_allowed_window");
        // However long the tests before this one took: the seconds from now until the window opens.
        const opensIn = (NIGHT_OWL_OPENS_MS - Date.now()) / 1000;
        assert.ok(
          Math.abs(e.error.retry_after_seconds - opensIn) <= 5,
          `Retry-After ${e.error.retry_after_seconds} s, the window opens in ${opensIn.toFixed(1)} s`,
        );
        return true;
      },
    );
  });

  it("counts a stream's usage whether or not the caller asked for it; a cancel and an engine failure give the slot back", async () => {
    const client = asTenant(p, "streamer");
    const before = p.lines.length;
    for (const include of [false, true]) {
      const s = await client.chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: "总结：用户要求退款，客服已经处理。" }],
        max_tokens: 16,
        stream: true,
        ...(include ? { stream_options: { include_usage: true } } : {}),
      });
      let sawUsage = false;
      for await (const c of s) if (c.usage) sawUsage = true;
      assert.equal(sawUsage, include);
    }
    const lines = p.lines.slice(before);
    const u = await usage(p, "streamer");
    assert.equal(u.inputTokens, lines[0]!.input_tokens_actual! + lines[1]!.input_tokens_actual!);
    assert.equal(u.outputTokens, lines[0]!.output_tokens! + lines[1]!.output_tokens!);

    // A client gone mid-stream: the slot comes back.
    const controller = new AbortController();
    const s = await client.chat.completions.create(
      {
        model: "summary-default",
        messages: [{ role: "user", content: "详细总结。" }],
        max_tokens: 300,
        stream: true,
      },
      { signal: controller.signal },
    );
    let chunks = 0;
    try {
      for await (const _ of s) {
        chunks++;
        controller.abort();
      }
    } catch {
      // The openai client may end an aborted stream with an error or quietly.
    }
    assert.ok(chunks >= 1 && chunks < 300, `the stream was cut after its first chunk (${chunks})`);
    for (let i = 0; i < 100 && (await usage(p, "streamer")).inFlight > 0; i++) await sleep(20);
    assert.equal((await usage(p, "streamer")).inFlight, 0, "the cancelled stream's slot came back");
    assert.ok(p.lines.some((l) => l.tenant === "streamer" && l.status === "client_cancelled"));

    // Every engine failing: the request fails, its slot comes back, nothing was spent.
    const spentBefore = await usage(p, "streamer");
    for (const r of p.replicas.online) r.faults = { ...r.faults, errorRate: 1, errorStatus: 500 };
    try {
      await assert.rejects(
        client.chat.completions.create({
          model: "summary-default",
          messages: [{ role: "user", content: "总结。" }],
          max_tokens: 8,
        }),
      );
    } finally {
      for (const r of p.replicas.online) r.faults = { ...r.faults, errorRate: 0 };
    }
    const after = await usage(p, "streamer");
    assert.equal(after.inFlight, 0);
    assert.equal(after.inputTokens, spentBefore.inputTokens, "a failure before any token costs nothing");

    // Every engine crashing under two streams in flight: the streams break, both slots come back.
    const streams = [0, 1].map(async () => {
      const st = await client.chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: "详细总结这段很长的客服对话。" }],
        max_tokens: 400,
        stream: true,
      });
      for await (const _ of st);
    });
    for (let i = 0; i < 100 && (await usage(p, "streamer")).inFlight < 2; i++) await sleep(10);
    assert.equal((await usage(p, "streamer")).inFlight, 2);
    for (const r of p.replicas.online) r.setFaults({ crashAtMs: 0, restartAfterMs: 300 });
    await Promise.allSettled(streams);
    for (let i = 0; i < 100 && (await usage(p, "streamer")).inFlight > 0; i++) await sleep(20);
    assert.equal((await usage(p, "streamer")).inFlight, 0, "an engine crash gave the slots back");
  });
});
