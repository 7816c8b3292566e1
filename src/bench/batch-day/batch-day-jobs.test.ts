import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TraceRequest } from "../trace-formats/trace.js";
import { backlogJobs, batchDayWorkload, jobInput } from "./batch-day-jobs.js";

function line(id: string, tMs: number): TraceRequest {
  return {
    t_ms: tMs,
    id,
    tenant: "quality-job",
    task: "batch_recompute_summary",
    request_class: "batch",
    input_tokens: 10,
    max_tokens: 5,
    stream: false,
  };
}

describe("batch-day jobs", () => {
  it("makes a job of each page of the backlog (split at maxJobLines) and one of the tail", () => {
    // flood from 10 s to 100 s: pages at 10 s and 50 s (every 40 s); the tail after 100 s
    const backlog = [
      line("b1", 10_500),
      line("b2", 11_000),
      line("b3", 11_900),
      line("b4", 50_200),
      line("b5", 101_000),
      line("b6", 120_000),
    ];
    const jobs = backlogJobs(backlog, 10, 100, 2);
    assert.deepEqual(
      jobs.map((j) => [j.name, j.atMs, j.lines.map((l) => l.id)]),
      [
        ["page-1a", 10_500, ["b1", "b2"]],
        ["page-1b", 11_900, ["b3"]],
        ["page-2", 50_200, ["b4"]],
        ["tail", 101_000, ["b5", "b6"]],
      ],
    );
    const input = jobInput(jobs[0]!).toString("utf8").trim().split("\n");
    assert.equal(input.length, 2);
    const first = JSON.parse(input[0]!);
    assert.equal(first.custom_id, "b1");
    assert.equal(first.url, "/v1/chat/completions");
    assert.equal(first.body.model, "summary-default");
    assert.equal(first.body.max_tokens, 5);
    assert.equal(first.body.stream, undefined);
  });

  it("takes support-incident's own live summaries and backlog, every backlog line in exactly one job", () => {
    const w = batchDayWorkload({ seed: 1, quick: true, durationS: 16, maxJobLines: 4 });
    assert.equal(w.live.length + w.backlog.length, w.trace.length);
    assert.ok(w.backlog.length > 0 && w.live.length > 0);
    assert.ok(w.live.every((r) => r.request_class !== "batch"));
    const inJobs = w.jobs.flatMap((j) => j.lines.map((l) => l.id)).sort();
    assert.deepEqual(inJobs, w.backlog.map((r) => r.id).sort());
    assert.ok(w.jobs.every((j) => j.lines.length <= 4));
  });
});
