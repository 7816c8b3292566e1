import assert from "node:assert/strict";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { runRouteCommand } from "./route.js";

const config = fileURLToPath(new URL("../../examples/support-summary", import.meta.url));

async function run(argv: string[]) {
  let out = "";
  let err = "";
  const code = await runRouteCommand(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

describe("tokengate route explain", () => {
  let dir = "";
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "tokengate-route-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("prints the pool, reason, upstream model, max_tokens handling and the trace", async () => {
    const r = await run([
      "explain",
      "--config",
      config,
      "--task",
      "live_ticket_summary",
      "--input-tokens",
      "2864",
      "--max-tokens",
      "900",
    ]);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.split("\n");
    assert.deepEqual(lines.slice(0, 5), [
      "pool: summary-online",
      "reason: rule=live-summary-short,max_tokens_clamped=900->600 (metric label live-summary-short)",
      "upstream model: summary-7b, version summary-7b-2026-06-15",
      "input tokens: 2864 (given)",
      "max_tokens: 600 (clamped from 900: the pool's maxOutputTokens)",
    ]);
    assert.ok(lines.includes("config version: support-summary-2026-06-15-r3"));
    assert.ok(
      lines.includes(
        "  rule live-summary-short: match (task live_ticket_summary, input 2864 <= 8192) → pool summary-online",
      ),
    );
  });

  it("estimates tokens from a request file and reads task and class from its metadata", async () => {
    const file = join(dir, "batch.json");
    const text = "客服对话记录，用户询问订单物流状态。".repeat(3000);
    await writeFile(
      file,
      JSON.stringify({
        model: "summary-default",
        messages: [
          { role: "system", content: "对历史工单做完整摘要。" },
          { role: "user", content: text },
        ],
        max_tokens: 1800,
        metadata: { task: "batch_recompute_summary", request_class: "batch" },
      }),
    );
    const r = await run(["explain", "--config", config, "--request", file, "--json"]);
    assert.equal(r.code, 0, r.err);
    const d = JSON.parse(r.out);
    assert.equal(d.pool, "summary-batch");
    assert.equal(d.reason, "rule=quality-batch");
    assert.equal(d.maxTokens, 1800);
    assert.ok(
      d.explain.some(
        (l: string) => /input (\d+) tokens/.test(l) && Number(/input (\d+)/.exec(l)![1]) > 40000,
      ),
    );
  });

  it("prints the error JSON and exits 1 when the request is refused", async () => {
    const r = await run([
      "explain",
      "--config",
      config,
      "--task",
      "live_ticket_summary",
      "--input-tokens",
      "70000",
    ]);
    assert.equal(r.code, 1);
    const json = r.out.slice(0, r.out.indexOf("\ntrace:"));
    assert.deepEqual(JSON.parse(json).error, {
      message:
        "This request has about 70000 input tokens (estimated), more than the largest limit of model summary-default: 65536 tokens (pool summary-long). Shorten or split the input; it is never truncated.",
      type: "invalid_request_error",
      code: "context_length_exceeded",
      param: "messages",
      route: "summary-long",
      fallback_options: ["reduce_input", "split_input"],
    });
    const unknown = await run([
      "explain",
      "--config",
      config,
      "--model",
      "gpt-4",
      "--input-tokens",
      "10",
      "--json",
    ]);
    assert.equal(unknown.code, 1);
    assert.equal(JSON.parse(unknown.out).error.code, "model_not_found");
  });

  it("exits 2 on bad arguments", async () => {
    assert.equal((await run(["explain", "--config", config])).code, 2);
    assert.equal((await run(["explain", "--config", config, "--input-tokens", "-4"])).code, 2);
    assert.equal((await run(["explain", "--input-tokens", "4"])).code, 2);
    assert.equal(
      (await run(["explain", "--config", config, "--request", join(dir, "missing.json")])).code,
      2,
    );
    assert.equal((await run(["--help"])).code, 0);
  });

  it("says who serves the request under a rollout stage: the legacy service in shadow-label, a tenant's canary side", async () => {
    const staged = join(dir, "staged");
    await cp(config, staged, { recursive: true });
    const route = join(staged, "route.yaml");
    const text = await readFile(route, "utf8");
    const withRollout = (block: string) =>
      writeFile(
        route,
        text.replace("spec:\n", `spec:\n  legacy: { url: "http://legacy.internal:8000" }\n${block}`),
      );
    await withRollout("  rollout: { stage: shadow-label }\n");
    const args = ["explain", "--config", staged, "--task", "live_ticket_summary", "--input-tokens", "2864"];
    let r = await run(args);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^pool: summary-online$/m, "the decision on paper");
    assert.match(
      r.out,
      /^served by: the legacy service http:\/\/legacy.internal:8000 \(rollout=shadow-label\)$/m,
    );
    await withRollout(
      "  rollout:\n    stage: canary\n    canary: { match: { inputTokensLte: 8192 }, percent: 100, routeTo: summary-online }\n",
    );
    r = await run([...args, "--tenant", "support-basic"]);
    assert.match(r.out, /^served by: tokengate \(canary=100%\)$/m);
  });
});
