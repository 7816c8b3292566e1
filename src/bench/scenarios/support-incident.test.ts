import assert from "node:assert/strict";
import { test } from "node:test";
import { loadConfigTexts } from "../../config/index.js";
import { routeRequest } from "../../route/route-request.js";
import { countTokens } from "../../sim/tokenizer.js";
import type { TraceRequest } from "../trace-formats/trace.js";
import { buildMessages } from "../workload/messages.js";
import { phaseAt } from "./shipped.js";
import { supportIncident as s } from "./support-incident.js";

const full = s.generate({ seed: 11, quick: false });
const phases = s.phases({ seed: 11, quick: false });
const ofClass = (trace: TraceRequest[], cls: string) => trace.filter((r) => r.request_class === cls);
const promptTokens = (r: TraceRequest) => buildMessages(r).reduce((n, m) => n + countTokens(m.content), 0);
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

test("three phases: live alone, live with the backlog flood, batch alone", () => {
  assert.deepEqual(
    phases.map((p) => p.name),
    ["live-only", "backlog-flood", "batch-only"],
  );
  const [liveOnly, flood, batchOnly] = phases;
  for (const r of full) {
    const p = phaseAt(phases, r.t_ms);
    assert.ok(p, `${r.id} at ${r.t_ms} ms is in no phase`);
    if (r.request_class === "batch") assert.notEqual(p, liveOnly, `${r.id} arrives before the flood`);
    else assert.notEqual(p, batchOnly, `${r.id}: live traffic in the batch-only phase`);
  }
  assert.ok(ofClass(full, "batch").some((r) => phaseAt(phases, r.t_ms) === batchOnly));
  assert.ok(ofClass(full, "batch").some((r) => phaseAt(phases, r.t_ms) === flood));
});

test("the class mix is seed 004's: mostly live summaries, a few long ones, a batch backlog", () => {
  const live = ofClass(full, "interactive");
  const long = ofClass(full, "long");
  const batch = ofClass(full, "batch");
  assert.equal(live.length + long.length + batch.length, full.length);
  const liveSeconds = phases[1]!.endS;
  assert.ok(Math.abs(live.length / liveSeconds - 8) < 1, `${live.length} live in ${liveSeconds} s`);
  assert.ok(long.length >= 5 && long.length < live.length / 20);
  assert.ok(batch.length >= 40 && batch.length <= 100, `${batch.length} batch requests`);
  for (const r of live) {
    assert.deepEqual(
      [r.task, r.tenant, r.lang, r.max_tokens, r.stream],
      ["live_ticket_summary", "support-basic", "zh", 420, true],
    );
  }
  for (const r of long)
    assert.deepEqual([r.task, r.max_tokens, r.stream], ["live_ticket_summary", 600, true]);
  for (const r of batch) {
    assert.deepEqual(
      [r.task, r.tenant, r.lang, r.max_tokens, r.stream],
      ["batch_recompute_summary", "quality-job", "zh", 1800, false],
    );
  }
});

test("the backlog arrives in bursts: a page of batch requests within two seconds", () => {
  const batch = ofClass(full, "batch").filter((r) => phaseAt(phases, r.t_ms)?.name === "backlog-flood");
  const first = batch[0]!.t_ms;
  assert.ok(batch.filter((r) => r.t_ms < first + 2000).length >= 12);
});

test("built prompts have the sizes of seed 004 (~2,800, 12k–40k, ~52,000 tokens of Chinese)", () => {
  const live = ofClass(full, "interactive").slice(0, 30).map(promptTokens);
  assert.ok(Math.abs(median(live) - 2800) <= 2800 * 0.15, `live median ${median(live)}`);
  assert.ok(live.every((n) => n >= 1500 && n <= 6100));
  for (const r of ofClass(full, "long").slice(0, 5)) {
    const n = promptTokens(r);
    assert.ok(n >= 12_000 * 0.99 && n <= 40_000 * 1.01, `${r.id}: ${n}`);
  }
  const batch = ofClass(full, "batch").slice(0, 9).map(promptTokens);
  assert.ok(Math.abs(median(batch) - 52_000) <= 52_000 * 0.15, `batch median ${median(batch)}`);
  assert.ok(batch.every((n) => n <= 60_500));
});

test("live requests share their summary instructions byte for byte; batch ones theirs", () => {
  const [a, b] = ofClass(full, "interactive").map((r) => buildMessages(r));
  const [c] = ofClass(full, "batch").map((r) => buildMessages(r));
  assert.equal(a![0]!.content, b![0]!.content);
  assert.notEqual(a![0]!.content, c![0]!.content);
  assert.notEqual(a![1]!.content, b![1]!.content);
});

test("quick keeps the effect: live before and during a full page of the backlog, then batch alone", () => {
  const quick = s.generate({ seed: 11, quick: true });
  const qp = s.phases({ seed: 11, quick: true });
  assert.ok(qp.at(-1)!.endS <= 20);
  assert.ok(ofClass(quick, "batch").length >= 10, "one page of the backlog");
  assert.ok(ofClass(quick, "long").length >= 1);
  assert.ok(
    ofClass(quick, "interactive").filter((r) => phaseAt(qp, r.t_ms)?.name === "live-only").length >= 10,
  );
});

test("the original topology has 4 identical pods under every router; split pools run tokengate only", () => {
  const [original, split] = s.topologies;
  assert.equal(original!.name, "original-4-pods");
  assert.deepEqual(original!.routers, ["tokengate", "least-request", "round-robin", "random"]);
  assert.equal(original!.gpus, 8);
  assert.equal(split!.name, "split-pools");
  assert.deepEqual(split!.routers, ["tokengate"]);
  assert.deepEqual(
    split!.fleet.groups.map((g) => [g.name, g.replicas, g.profile]),
    [
      ["summary-online", 4, "h100-llama8b"],
      ["summary-long", 1, "h100x2-14b-long"],
      ["summary-batch", 1, "h100x2-14b-long"],
    ],
  );
});

test("on the split pools, tokengate's route sends each class where seed 004 meant it to go", () => {
  const split = s.topologies[1]!;
  const loaded = loadConfigTexts(
    split.gatewayConfig({
      "summary-online": [
        "http://127.0.0.1:9001",
        "http://127.0.0.1:9002",
        "http://127.0.0.1:9003",
        "http://127.0.0.1:9004",
      ],
      "summary-long": ["http://127.0.0.1:9011"],
      "summary-batch": ["http://127.0.0.1:9021"],
    }),
  );
  assert.ok(loaded.ok);
  const expected: Record<string, string> = {
    interactive: "summary-online",
    long: "summary-long",
    batch: "summary-batch",
  };
  for (const cls of Object.keys(expected)) {
    const r = ofClass(full, cls)[0]!;
    const decision = routeRequest(loaded.config, {
      modelAlias: "summary-default",
      task: r.task,
      requestClass: r.request_class,
      inputTokens: (r.input_tokens ?? 0) + (r.prefix_tokens ?? 0),
      maxTokens: r.max_tokens,
    });
    assert.ok(decision.ok, `${r.id} rejected`);
    assert.equal(decision.pool, expected[cls], r.id);
  }
});
