// Holds the three places that say where a request goes — the gateway serving it, `POST /admin/explain`
// and `tokengate route explain --config` — to one answer, on a table of requests across tasks, classes,
// sizes, adapters, weighted targets, max_tokens clamps and refusals. All three call planRequest; this
// test keeps it so.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runRouteCommand } from "../cli/route.js";
import { sampleText } from "../sim/sample-text.js";
import { KEYS, type Platform, startPlatform } from "../testing/platform.js";

interface Case {
  readonly name: string;
  readonly body: Record<string, unknown>;
  readonly headers?: Record<string, string>;
  readonly key?: keyof typeof KEYS;
  readonly completion?: boolean;
}

const chat = (tokens: number, extra: Record<string, unknown> = {}, model = "summary-default") => ({
  model,
  messages: [{ role: "user", content: sampleText("en", tokens, tokens) }],
  max_tokens: 64,
  ...extra,
});
const LIVE = { "x-ai-task": "live_ticket_summary" };

const CASES: Case[] = [
  { name: "live short", body: chat(2800), headers: LIVE },
  { name: "agent assist", body: chat(1500), headers: { "x-ai-task": "agent_assist_summary" } },
  { name: "live long", body: chat(12_000), headers: LIVE },
  { name: "batch class", body: chat(3000), headers: { "x-ai-request-class": "batch" }, key: "quality" },
  {
    name: "batch class, large",
    body: chat(30_000),
    headers: { "x-ai-request-class": "batch" },
    key: "quality",
  },
  { name: "no task", body: chat(800) },
  { name: "no task, too large for the default pool", body: chat(12_000) },
  { name: "unknown task", body: chat(900), headers: { "x-ai-task": "mystery_task" } },
  { name: "max_tokens clamped", body: chat(2000, { max_tokens: 900 }), headers: LIVE },
  { name: "no max_tokens", body: chat(2000, { max_tokens: undefined }), headers: LIVE },
  {
    name: "max_completion_tokens",
    body: chat(2000, { max_tokens: undefined, max_completion_tokens: 100 }),
    headers: LIVE,
  },
  { name: "too large for every pool", body: chat(70_000), headers: LIVE },
  { name: "unknown model", body: chat(100, {}, "gpt-4") },
  { name: "adapter named directly", body: chat(1200, {}, "tone-a"), headers: LIVE },
  { name: "weighted alias, tenant basic", body: chat(1200, {}, "tone") },
  { name: "weighted alias, tenant quality", body: chat(1200, {}, "tone"), key: "quality" },
  { name: "weighted by header", body: chat(1200, {}, "tone-by-user"), headers: { "x-user-id": "u-17" } },
  {
    name: "weighted by header, another key",
    body: chat(1200, {}, "tone-by-user"),
    headers: { "x-user-id": "u-4242" },
  },
  { name: "task in metadata", body: chat(2000, { metadata: { task: "live_ticket_summary" } }) },
  { name: "class in metadata", body: chat(2000, { metadata: { request_class: "batch" } }), key: "quality" },
  {
    name: "completions API",
    body: { model: "summary-default", prompt: sampleText("en", 1000, 3), max_tokens: 16 },
    headers: LIVE,
    completion: true,
  },
  { name: "interactive live", body: chat(2500), headers: { ...LIVE, "x-ai-request-class": "interactive" } },
  { name: "streaming live", body: chat(2500, { stream: true }), headers: LIVE },
  { name: "adapter, clamped", body: chat(1200, { max_tokens: 5000 }, "tone-b"), headers: LIVE },
];

/** What each path says: the route, or the refusal's code. */
interface Answer {
  pool: string | null;
  reason: string | null;
  served_model: string | null;
  max_tokens: number | null;
  error: string | null;
}

describe("the gateway, /admin/explain and route explain agree", () => {
  let p: Platform;
  let dir: string;
  before(async () => {
    p = await startPlatform({
      onlineAdapters: ["tone-a", "tone-b"],
      extraAliases: `    tone:
      defaultPool: summary-online
      pools: [{ name: summary-online, maxInputTokens: 8192, maxOutputTokens: 600 }]
      targets: [{ adapter: tone-a, weight: 70 }, { adapter: tone-b, weight: 30 }]
    tone-by-user:
      defaultPool: summary-online
      pools: [{ name: summary-online, maxInputTokens: 8192, maxOutputTokens: 600 }]
      targets: [{ adapter: tone-a, weight: 50 }, { adapter: tone-b, weight: 50 }]
      stickyBy: header:x-user-id
`,
    });
    dir = mkdtempSync(join(tmpdir(), "tg-agree-"));
    for (const [name, text] of Object.entries(p.configTexts)) writeFileSync(join(dir, name), text);
  });
  after(async () => {
    await p.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`on a table of ${CASES.length} requests`, async () => {
    assert.ok(CASES.length >= 20);
    const answers: Answer[] = [];
    for (const c of CASES) {
      const tenant = c.key === "quality" ? "quality-job" : "support-basic";
      const explained = await viaAdmin(p, c, tenant);
      const cli = await viaCli(dir, c, tenant);
      const served = await viaGateway(p, c);
      assert.deepEqual(explained, served, `${c.name}: /admin/explain against what the gateway did`);
      assert.deepEqual(cli, served, `${c.name}: route explain against what the gateway did`);
      answers.push(served);
    }
    // The table reaches every kind of answer it is meant to compare.
    const seen = (f: (a: Answer) => string | null) => new Set(answers.map(f).filter((x) => x !== null));
    assert.deepEqual([...seen((a) => a.pool)].sort(), ["summary-batch", "summary-long", "summary-online"]);
    assert.deepEqual([...seen((a) => a.error)].sort(), ["context_length_exceeded", "model_not_found"]);
    for (const m of ["tone-a", "tone-b", "summary-7b", "summary-14b-long"])
      assert.ok(seen((a) => a.served_model).has(m), m);
    for (const r of [
      /max_tokens_clamped=900->600/,
      /size_fallback=summary-long/,
      /adapter=tone-a/,
      /target=tone-[ab]\(\d+%\)/,
    ]) {
      assert.ok(
        [...seen((a) => a.reason)].some((x) => r.test(x)),
        `some reason matches ${r}`,
      );
    }
  });
});

async function viaGateway(p: Platform, c: Case): Promise<Answer> {
  const traceId = `agree-${Math.random().toString(36).slice(2)}`;
  const res = await fetch(`${p.url}${c.completion ? "/v1/completions" : "/v1/chat/completions"}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${KEYS[c.key ?? "basic"]}`,
      "x-ai-trace-id": traceId,
      ...c.headers,
    },
    body: JSON.stringify(c.body),
  });
  const text = await res.text();
  if (!res.ok) return refusal((JSON.parse(text) as { error: { code: string } }).error.code);
  for (let i = 0; i < 200; i++) {
    const line = p.lines.find((l) => l.trace_id === traceId);
    if (line) {
      return {
        pool: line.route_pool,
        reason: line.route_reason,
        served_model: line.served_model,
        max_tokens: line.max_tokens,
        error: null,
      };
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no log line for ${c.name}`);
}

async function viaAdmin(p: Platform, c: Case, tenant: string): Promise<Answer> {
  const res = await p.admin("/admin/explain", {
    method: "POST",
    headers: { "content-type": "application/json", ...c.headers },
    body: JSON.stringify({ kind: c.completion ? "completion" : "chat", body: c.body, tenant }),
  });
  const out = (await res.json()) as { route: Record<string, unknown> & { error?: { code: string } } };
  if (out.route.error) return refusal(out.route.error.code);
  return {
    pool: out.route.pool as string,
    reason: out.route.reason as string,
    served_model: out.route.upstream_model as string,
    max_tokens: out.route.max_tokens as number,
    error: null,
  };
}

async function viaCli(dir: string, c: Case, tenant: string): Promise<Answer> {
  const file = join(dir, "request.json");
  writeFileSync(file, JSON.stringify(c.body));
  const args = ["explain", "--config", dir, "--request", file, "--json", "--tenant", tenant];
  const h = c.headers ?? {};
  if (h["x-ai-task"]) args.push("--task", h["x-ai-task"]);
  if (h["x-ai-request-class"]) args.push("--class", h["x-ai-request-class"]);
  for (const [k, v] of Object.entries(h)) if (!k.startsWith("x-ai-")) args.push("--header", `${k}: ${v}`);
  let out = "";
  let err = "";
  const code = await runRouteCommand(args, { out: (s) => (out += s), err: (s) => (err += s) });
  assert.ok(code === 0 || code === 1, `route explain exited ${code}: ${err}`);
  const d = JSON.parse(out) as Record<string, unknown> & {
    error?: { code: string };
    summary?: { pool: string; reason: string; upstream_model: string; max_tokens: number };
  };
  if (d.error) return refusal(d.error.code);
  const s = d.summary!;
  return {
    pool: s.pool,
    reason: s.reason,
    served_model: s.upstream_model,
    max_tokens: s.max_tokens,
    error: null,
  };
}

function refusal(code: string): Answer {
  return { pool: null, reason: null, served_model: null, max_tokens: null, error: code };
}
