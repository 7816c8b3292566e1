// report.md's flow-control section (issue 6): the targets per router, then batch work per phase
// and the batch pause as measured. Baseline for batch throughput: the least-request router.

import type { RouterResult } from "../results.js";
import { formatCount, formatMs, formatNumber } from "./format.js";
import { figuresRight, mdTable } from "./md-table.js";

/** The phase in which no live traffic competes with batch work. */
export const NO_LIVE_PHASE = "batch-only";

type Ran = [name: string, result: RouterResult][];

export interface FlowTargets {
  liveTtftP95Ms: number | null;
  liveE2eP95Ms: number | null;
  runtimeQueueP95Ms: number | null;
  longCompletion: number | null;
  pauseEffectiveS: number | null;
  batchLost: number | null;
  /** Batch throughput in the no-live phase over the baseline's. */
  batchThroughputRatio: number | null;
}

/** Issue 6's figures for one router, the batch-throughput ratio against `baseline`. */
export function flowTargets(r: RouterResult, baseline: RouterResult | null, liveClass: string): FlowTargets {
  const live = r.classes[liveClass];
  const tput = (x: RouterResult | null) =>
    x?.flow?.batch_throughput_by_phase[NO_LIVE_PHASE]?.output_tokens_per_s;
  const mine = tput(r);
  const base = tput(baseline);
  return {
    liveTtftP95Ms: live?.ttft_ms.p95 ?? null,
    liveE2eP95Ms: live?.e2e_ms.p95 ?? null,
    runtimeQueueP95Ms: live?.runtime_queue_ms.p95 ?? null,
    longCompletion: r.acceptance?.long_context_completion_rate ?? null,
    pauseEffectiveS: r.flow?.pause?.effective_after_s ?? null,
    batchLost: r.flow ? r.flow.batch_lost : null,
    batchThroughputRatio: mine !== undefined && base !== undefined && base > 0 ? mine / base : null,
  };
}

const mark = (ok: boolean | null) => (ok === null ? "" : ok ? " ✓" : " ✗");

export function flowSection(ran: Ran, liveClass: string): string {
  const withFlow = ran.filter(([, r]) => r.flow);
  if (withFlow.length === 0) return "";
  const baselineEntry = ran.find(([name]) => name.startsWith("least-request")) ?? null;
  const baseline = baselineEntry ? baselineEntry[1] : null;
  const head = ["Figure", "Target", ...withFlow.map(([name]) => name)];
  const t = withFlow.map(([, r]) => flowTargets(r, baseline, liveClass));
  const row = (label: string, target: string, cell: (x: FlowTargets) => string) => [
    label,
    target,
    ...t.map(cell),
  ];
  const ms = (v: number | null, limit: number, strict = false) =>
    v === null ? "n/a" : `${formatMs(v)}${mark(strict ? v < limit : v <= limit)}`;
  const targets = [
    row("Live TTFT P95", "≤ 1.0 s", (x) => ms(x.liveTtftP95Ms, 1000)),
    row("Live end-to-end P95", "< 7 s", (x) => ms(x.liveE2eP95Ms, 7000, true)),
    row("Runtime queue P95 (live)", "< 600 ms", (x) => ms(x.runtimeQueueP95Ms, 600, true)),
    row("Long-context completion", "> 98%", (x) =>
      x.longCompletion === null
        ? "n/a"
        : `${formatNumber(x.longCompletion * 100, 1)}%${mark(x.longCompletion > 0.98)}`,
    ),
    row("Batch pause effective after", "≤ 5 s", (x) =>
      x.pauseEffectiveS === null
        ? "n/a"
        : `${formatNumber(x.pauseEffectiveS, 2)} s${mark(x.pauseEffectiveS <= 5)}`,
    ),
    row("Batch requests lost", "0", (x) =>
      x.batchLost === null ? "n/a" : `${x.batchLost}${mark(x.batchLost === 0)}`,
    ),
    row(`Batch throughput, ${NO_LIVE_PHASE} phase, vs least-request`, "≥ 90%", (x) =>
      x.batchThroughputRatio === null
        ? "n/a"
        : `${formatNumber(x.batchThroughputRatio * 100, 0)}%${mark(x.batchThroughputRatio >= 0.9)}`,
    ),
  ];
  const intro =
    "Issue 6's targets. Batch throughput is output tokens per second of batch replies finished within " +
    `the ${NO_LIVE_PHASE} phase, over least-request's in the same run. The pause is effective once the ` +
    "last batch request dispatched after the live TTFT P95 (over the rule's window, as the clients saw it) " +
    "passed the threshold has left.";
  const parts = [
    `## Flow control (issue 6)\n\n${intro}\n\n${mdTable(head, targets, figuresRight(head.length, 2))}`,
  ];
  parts.push(batchTable(withFlow));
  const pauses = withFlow.filter(([, r]) => r.flow?.pause);
  if (pauses.length > 0) parts.push(pauseTable(pauses));
  return parts.join("\n\n");
}

function batchTable(ran: Ran): string {
  const phases = [...new Set(ran.flatMap(([, r]) => Object.keys(r.flow!.batch_throughput_by_phase)))];
  const head = [
    "Router",
    "Sent",
    "Done",
    "Lost",
    "Last done",
    ...phases.map((p) => `${p} (tok/s)`),
    "Queue P95",
  ];
  const rows = ran.map(([name, r]) => {
    const f = r.flow!;
    const queue = Object.entries(f.gateway_queue_p95_ms)
      .map(([cls, v]) => `${cls} ${formatMs(v)}`)
      .join(", ");
    return [
      name,
      formatCount(f.batch_sent),
      formatCount(f.batch_completed),
      formatCount(f.batch_lost),
      f.batch_last_completion_s === null ? "n/a" : `${formatNumber(f.batch_last_completion_s, 0)} s`,
      ...phases.map((p) => formatNumber(f.batch_throughput_by_phase[p]?.output_tokens_per_s ?? 0, 0)),
      queue || "n/a",
    ];
  });
  return `### Batch work per phase\n\nBatch output tokens per second finished in each phase; gateway queue wait P95 per class (tokengate only).\n\n${mdTable(head, rows, figuresRight(head.length))}`;
}

function pauseTable(ran: Ran): string {
  const head = [
    "Router",
    "Watched pool",
    "Threshold",
    "Passed at",
    "Paused at",
    "Resumed at",
    "Effective after",
    "Dispatched while paused",
  ];
  const list = (v: number[]) =>
    v.length === 0 ? "never" : v.map((x) => `${formatNumber(x, 1)} s`).join(", ");
  const rows = ran.map(([name, r]) => {
    const p = r.flow!.pause!;
    return [
      name,
      p.watched_pool,
      `TTFT P95 > ${p.threshold_ms} ms over ${p.window_s} s`,
      p.threshold_passed_s === null ? "never" : `${formatNumber(p.threshold_passed_s, 1)} s`,
      list(p.paused_at_s),
      list(p.resumed_at_s),
      p.effective_after_s === null ? "n/a" : `${formatNumber(p.effective_after_s, 2)} s`,
      formatCount(p.batch_dispatched_while_paused),
    ];
  });
  return `### Batch pause\n\nTimes from the start of the run.\n\n${mdTable(head, rows, figuresRight(head.length, 2))}`;
}
