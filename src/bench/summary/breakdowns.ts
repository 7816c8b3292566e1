// Latency per tenant and per input-size bucket (issue 13; seed 004's own diagnosis step, 按
// input_tokens 分桶), over the whole run and within each scenario phase, next to the per-class tables.

import { countTokens } from "../../sim/tokenizer.js";
import type { Breakdown, GroupResult } from "../results.js";
import { phaseAt, type ScenarioPhase } from "../scenarios/shipped.js";
import { latencyQuantiles } from "../stats.js";
import type { TraceRequest } from "../trace-formats/trace.js";
import type { ReplayRecord } from "../traffic/replay.js";

export interface InputSizeBucket {
  /** The key in results.json. */
  key: string;
  /** The name in report.md. */
  label: string;
  /** Inputs of fewer tokens than this fall in the bucket (or an earlier one). */
  below: number;
}

/** Seed 004's boundaries: the online pool's 8,192-token limit, and steps of prefill work under it. */
export const INPUT_SIZE_BUCKETS: readonly InputSizeBucket[] = [
  { key: "<1024", label: "< 1,024", below: 1024 },
  { key: "1024-4095", label: "1,024–4,095", below: 4096 },
  { key: "4096-8191", label: "4,096–8,191", below: 8192 },
  { key: ">=8192", label: "≥ 8,192", below: Number.POSITIVE_INFINITY },
];

/** The bucket of short prompts, which issue 13 judges apart. */
export const SHORT_BUCKET = INPUT_SIZE_BUCKETS[0]!;

/** The trace's `input_tokens`, or its `input_text` counted by the simulator's tokenizer. */
export function inputTokensOf(req: TraceRequest): number {
  return req.input_tokens ?? countTokens(req.input_text ?? "");
}

export function inputSizeBucket(tokens: number): InputSizeBucket {
  return INPUT_SIZE_BUCKETS.find((b) => tokens < b.below)!;
}

/** Count, errors, and TTFT and E2E quantiles of the requests that finished without error. */
export function groupResult(records: readonly ReplayRecord[]): GroupResult {
  const ok = records.filter((r) => !r.result.error);
  return {
    count: records.length,
    errors: records.length - ok.length,
    ttft_ms: latencyQuantiles(ok.map((r) => r.result.ttftMs)),
    e2e_ms: latencyQuantiles(ok.map((r) => r.result.e2eMs)),
  };
}

function grouped(
  records: readonly ReplayRecord[],
  keyOf: (r: ReplayRecord) => string,
  order: (keys: string[]) => string[],
): Record<string, GroupResult> {
  const groups = new Map<string, ReplayRecord[]>();
  for (const r of records) {
    const k = keyOf(r);
    const list = groups.get(k);
    if (list) list.push(r);
    else groups.set(k, [r]);
  }
  const out: Record<string, GroupResult> = {};
  for (const k of order([...groups.keys()])) out[k] = groupResult(groups.get(k)!);
  return out;
}

export function byTenant(records: readonly ReplayRecord[]): Record<string, GroupResult> {
  return grouped(
    records,
    (r) => r.req.tenant,
    (keys) => keys.sort(),
  );
}

export function byInputSize(records: readonly ReplayRecord[]): Record<string, GroupResult> {
  return grouped(
    records,
    (r) => inputSizeBucket(inputTokensOf(r.req)).key,
    (keys) => INPUT_SIZE_BUCKETS.map((b) => b.key).filter((k) => keys.includes(k)),
  );
}

export function breakdown(records: readonly ReplayRecord[]): Breakdown {
  return { by_tenant: byTenant(records), by_input_size: byInputSize(records) };
}

/** The phase a request arrived in (the trace's t_ms); an arrival past the last phase's end, the last. */
export function arrivalPhase(phases: readonly ScenarioPhase[], r: ReplayRecord): ScenarioPhase {
  return phaseAt(phases, r.req.t_ms) ?? phases.at(-1)!;
}

/**
 * The breakdown within each phase, by arrival time, in phase order; null for a run of one phase (the
 * whole-run tables say it all).
 */
export function breakdownByPhase(
  records: readonly ReplayRecord[],
  phases: readonly ScenarioPhase[],
): Record<string, Breakdown> | null {
  if (phases.length < 2) return null;
  const of = new Map<string, ReplayRecord[]>(phases.map((p) => [p.name, []]));
  for (const r of records) of.get(arrivalPhase(phases, r).name)!.push(r);
  const out: Record<string, Breakdown> = {};
  for (const p of phases) out[p.name] = breakdown(of.get(p.name)!);
  return out;
}
