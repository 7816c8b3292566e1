import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticResults } from "../../testing/synthetic-results.js";
import type { BenchResults } from "../results.js";
import { renderReport } from "./markdown.js";

/** The cells of the table row whose first cell is `label`. */
function row(md: string, label: string): string[] {
  const line = md.split("\n").find((l) => l.startsWith(`| ${label} |`));
  assert.ok(line, `a row for ${label}`);
  return line.slice(2, -2).split(" | ");
}

describe("renderReport", () => {
  const md = renderReport(syntheticResults(), { charts: ["ttft-cdf.svg", "queue-tokengate.svg"] });

  it("opens with the scenario, date, seed and run mode", () => {
    assert.match(md, /^# Benchmark report: support-incident\n/);
    assert.match(md, /\*\*Date:\*\* 2026-06-15T10:16:23Z/);
    assert.match(md, /\*\*Seed:\*\* 4/);
    assert.match(md, /\*\*Run:\*\* quick/);
  });

  it("has seed 004's acceptance table with routers as columns, topology in the header", () => {
    const header = row(md, "Figure");
    assert.deepEqual(header, [
      "Figure",
      "Before",
      "Target",
      "tokengate (split-pools)",
      "least-request (original-4-pods)",
    ]);
  });

  it("judges each figure against the seed's target, next to the seed's before figure", () => {
    assert.deepEqual(row(md, "Live summary TTFT P95"), [
      "Live summary TTFT P95",
      "6400 ms",
      "< 1800 ms",
      "742 ms ✓",
      "6412 ms ✗",
    ]);
    assert.deepEqual(row(md, "Live summary end-to-end P95").slice(1), [
      "18.0 s",
      "< 7000 ms",
      "5230 ms ✓",
      "18.3 s ✗",
    ]);
    assert.deepEqual(row(md, "Runtime queue P95").slice(3), ["210 ms ✓", "4903 ms ✗"]);
    assert.deepEqual(row(md, "Long-context completion rate").slice(1), [
      "94.1%",
      "> 98.0%",
      "99.3% ✓",
      "94.1% ✗",
    ]);
  });

  it("writes n/a where a router does not measure a figure", () => {
    assert.deepEqual(row(md, "Route-log completeness").slice(1), ["61.0%", "> 99.0%", "99.8% ✓", "n/a"]);
    assert.deepEqual(row(md, "Unknown-task ratio").slice(1), ["7.8%", "< 1.0%", "0.4% ✓", "n/a"]);
  });

  it("lists a skipped router with its reason, and keeps it out of the tables", () => {
    assert.match(md, /\*\*round-robin\*\* on `original-4-pods`: \*\*skipped\*\* — nginx not found on PATH/);
    assert.match(md, /did not run: round-robin \(skipped: nginx not found on PATH\)/);
    assert.ok(!md.split("\n").some((l) => l.startsWith("| round-robin")));
  });

  it("lists a failed router with its reason", () => {
    const r = syntheticResults();
    r.routers.random = {
      ...r.routers["round-robin"]!,
      status: "failed",
      reason: "engine reset\n  timed out",
    };
    assert.match(
      renderReport(r),
      /\*\*random\*\* on `original-4-pods`: \*\*failed\*\* — engine reset timed out/,
    );
  });

  it("has a latency table per request class, seed 004's classes first", () => {
    const headings = [...md.matchAll(/^### (interactive|long|batch)$/gm)].map((m) => m[1]);
    assert.deepEqual(headings, ["interactive", "long", "batch"]);
    const lr = md
      .split("### interactive")[1]!
      .split("\n")
      .find((l) => l.startsWith("| least-request"))!;
    assert.equal(
      lr,
      "| least-request (original-4-pods) | 250 | 2 | 2100 ms | 5250 ms | 12.6 s | 7900 ms | 14.2 s | 27.6 s |",
    );
  });

  it("reports throughput, errors, prefix-cache hit rate and load balance", () => {
    const tp = md.split("## Throughput and load")[1]!;
    assert.match(
      tp,
      /\| tokengate \(split-pools\) \| 3\.33 req\/s \| 1433 tok\/s \| 4 \| 41\.2% \| 1\.62× \| 120 s \|/,
    );
    assert.match(
      tp,
      /\| least-request \(original-4-pods\) \| 3\.21 req\/s \| 1380 tok\/s \| 15 \| n\/a \| 1\.04× \| 120 s \|/,
    );
  });

  it("has a per-endpoint load table per router", () => {
    assert.match(md, /\| online-0 \| summary-online \| 84 \| 21\.0% \| 756,000 \| 50,400 \|/);
    assert.match(md, /\| pod-3 \| summary-default \| 100 \| 25\.0% \|/);
  });

  it("links the charts it is given", () => {
    assert.match(md, /!\[TTFT distribution per router and request class\]\(ttft-cdf\.svg\)/);
    assert.match(md, /!\[Engine waiting queue per endpoint: tokengate\]\(queue-tokengate\.svg\)/);
  });

  it("says so when no router ran, rather than printing an empty table", () => {
    const r: BenchResults = {
      ...syntheticResults(),
      routers: { "round-robin": syntheticResults().routers["round-robin"]! },
    };
    assert.match(renderReport(r), /No router completed a run\./);
  });

  it("keeps a reason with a pipe inside its table cell", () => {
    const r = syntheticResults();
    r.routers.tokengate!.topology = "a|b";
    assert.match(renderReport(r), /\| tokengate \(a\\\|b\) \|/);
  });
});

describe("renderReport: where TTFT went", () => {
  it("splits TTFT into the engine's part and the hop, per router, when the engines kept a record", () => {
    const r = syntheticResults();
    const c = r.routers.tokengate!.classes.interactive!;
    c.engine_ttft_ms = { p50: 30, p90: 55, p95: 70, p99: 90 };
    c.hop_ms = { p50: 2, p90: 5, p95: 8, p99: 20 };
    const md = renderReport(r);
    const section = md.slice(md.indexOf("## Where TTFT went"));
    assert.ok(section.startsWith("## Where TTFT went"));
    assert.deepEqual(row(section, "tokengate (split-pools)").slice(1), [
      "30 ms",
      "55 ms",
      "70 ms",
      "2 ms",
      "8 ms",
      "20 ms",
    ]);
  });

  it("leaves the section out for results without engine records (older results.json)", () => {
    assert.doesNotMatch(renderReport(syntheticResults()), /Where TTFT went/);
  });
});

describe("renderReport: LoRA adapter loads", () => {
  /** Two routers on one LoRA fleet, one class of requests, adapter loads as the engines counted them. */
  function loraResults(): BenchResults {
    const r = syntheticResults();
    delete r.routers["round-robin"];
    const fleet = ["engines-0", "engines-1"];
    const loads: Record<string, [number, number]> = { tokengate: [3, 5], "least-request": [21, 19] };
    for (const [name, [a, b]] of Object.entries(loads)) {
      const x = r.routers[name]!;
      x.topology = "4-replicas";
      x.classes = { interactive: x.classes.interactive! };
      x.endpoints = fleet.map((endpoint, i) => ({
        endpoint,
        group: "engines",
        requests: 100 + i,
        prompt_tokens: 70_000,
        generation_tokens: 15_000,
        lora_loads: i === 0 ? a : b,
      }));
      x.lora_loads = { total: a + b, by_endpoint: { "engines-0": a, "engines-1": b }, counter_total: a + b };
      x.by_model = {
        "adapter-0": { count: 74, errors: 0, ttft_ms: { p50: 40, p90: 90, p95: 120, p99: 300 } },
        "adapter-7": { count: 9, errors: 0, ttft_ms: { p50: 60, p90: 11_500, p95: 12_000, p99: 13_000 } },
      };
    }
    return r;
  }

  it("shows each router's adapter loads, in all and per endpoint, with its TTFT", () => {
    const md = renderReport(loraResults());
    const section = md.slice(md.indexOf("## LoRA adapter loads"));
    assert.ok(section.startsWith("## LoRA adapter loads"));
    assert.deepEqual(row(section, "Router"), [
      "Router",
      "Adapter loads",
      "engines-0",
      "engines-1",
      "TTFT P50",
      "TTFT P90",
      "TTFT P99",
    ]);
    assert.deepEqual(row(section, "tokengate (4-replicas)"), [
      "tokengate (4-replicas)",
      "8",
      "3",
      "5",
      "420 ms",
      "1050 ms",
      "2520 ms",
    ]);
    assert.deepEqual(row(section, "least-request (4-replicas)").slice(0, 4), [
      "least-request (4-replicas)",
      "40",
      "21",
      "19",
    ]);
    assert.doesNotMatch(section.split("## ")[1]!, /disagree/);
  });

  it("adds the loads to the per-endpoint tables and TTFT by requested model", () => {
    const md = renderReport(loraResults());
    const endpoints = md.slice(md.indexOf("## Load per endpoint"));
    assert.match(
      endpoints,
      /\| Endpoint \| Group \| Requests \| Share \| Prompt tokens \| Generated tokens \| Adapter loads \|/,
    );
    assert.match(endpoints, /\| engines-0 \| engines \| 100 \| 49\.8% \| 70,000 \| 15,000 \| 21 \|/);
    const models = md.slice(md.indexOf("## TTFT by requested model"));
    assert.deepEqual(row(models, "adapter-7"), ["adapter-7", "9", "60 ms / 11.5 s", "60 ms / 11.5 s"]);
  });

  it("says when the engines' counters disagree with their state, and leaves the section out without LoRA", () => {
    const r = loraResults();
    r.routers.tokengate!.lora_loads!.counter_total = 7;
    assert.match(renderReport(r), /counters disagree with their state for tokengate \(7\)/);
    assert.doesNotMatch(renderReport(syntheticResults()), /LoRA adapter loads|Adapter loads/);
  });
});
