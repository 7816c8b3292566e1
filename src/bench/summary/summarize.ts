// Turns one router's raw run (client records, engine samples, the gateway's log) into the figures of
// results.json: per-class latency, seed 004's acceptance table, throughput, cache hits and load balance.

import { parseServerTiming } from "../../proxy/server-timing.js";
import type { RequestTiming } from "../../sim/request-timings.js";
import { SEED_LOG_FIELDS } from "../../telemetry/request-log.js";
import type {
  Acceptance,
  ClassResult,
  EndpointLoad,
  LoraLoadResult,
  ModelResult,
  RouterResult,
} from "../results.js";
import type { Scenario } from "../scenarios/scenario.js";
import type { ScenarioPhase, ShippedScenario } from "../scenarios/shipped.js";
import { latencyQuantiles, round } from "../stats.js";
import type { EngineSampler, EngineTarget } from "../traffic/engine-sampler.js";
import type { ReplayRecord } from "../traffic/replay.js";
import { breakdownByPhase, byInputSize, byTenant, groupResult } from "./breakdowns.js";
import { burstIsolation } from "./burst-isolation.js";
import { predictionError } from "./prediction-error.js";
import { tenantFlow } from "./tenant-flow.js";

/** Re-exported for the harness: the fields a complete route-log line has. */
export const ROUTE_LOG_FIELDS = SEED_LOG_FIELDS;

export interface SummarizeInput {
  records: ReplayRecord[];
  sampler: EngineSampler;
  fleet: readonly EngineTarget[];
  durationS: number;
  /** The gateway's log lines, for routers that keep one. */
  log: Record<string, unknown>[] | null;
  scenario: Scenario;
  topology: string;
  /** The engines' own timings by request id (GET /admin/requests of the simulator). */
  engineTimings: Map<string, RequestTiming>;
  /** Adapter loads the engines counted over the run, on fleets with LoRA enabled. */
  loraLoads?: LoraLoadResult;
  /** The scenario's phases for this run (none for a user's trace): per-phase tables, the burst's. */
  phases?: readonly ScenarioPhase[];
}

const q = latencyQuantiles;

/** Engine-side queue time: the engine's own record, else its Server-Timing header or trailer. */
function runtimeQueueMs(r: ReplayRecord, timings: Map<string, RequestTiming>): number {
  const t = timings.get(r.req.id);
  if (t) return t.queue_ms;
  const h = r.result.headers["server-timing"] ?? r.result.trailers["server-timing"];
  return parseServerTiming(h as string | undefined).queueMs ?? Number.NaN;
}

/** Engine-side TTFT (queue + prefill) from the engine's own record; NaN when it has none. */
function engineTtftMs(r: ReplayRecord, timings: Map<string, RequestTiming>): number {
  const t = timings.get(r.req.id);
  return t && t.prefill_ms !== null ? t.queue_ms + t.prefill_ms : Number.NaN;
}

export function summarize(input: SummarizeInput): RouterResult {
  const { records, sampler, durationS } = input;
  const byClass = new Map<string, ReplayRecord[]>();
  for (const r of records) {
    const list = byClass.get(r.req.request_class) ?? [];
    list.push(r);
    byClass.set(r.req.request_class, list);
  }
  const classes: Record<string, ClassResult> = {};
  for (const [cls, list] of byClass) {
    const ok = list.filter((r) => !r.result.error);
    classes[cls] = {
      count: list.length,
      errors: list.length - ok.length,
      ttft_ms: q(ok.map((r) => r.result.ttftMs)),
      e2e_ms: q(ok.map((r) => r.result.e2eMs)),
      runtime_queue_ms: q(ok.map((r) => runtimeQueueMs(r, input.engineTimings))),
      engine_ttft_ms: q(ok.map((r) => engineTtftMs(r, input.engineTimings))),
      hop_ms: q(ok.map((r) => r.result.ttftMs - engineTtftMs(r, input.engineTimings))),
      completion_rate: list.length === 0 ? 0 : round(ok.length / list.length, 4),
      output_tokens: ok.reduce((a, r) => a + (r.result.completionTokens ?? 0), 0),
    };
  }
  const ok = records.filter((r) => !r.result.error);
  const totals = Object.values(sampler.totals);
  const hits = totals.reduce((a, t) => a + t.prefixHits, 0);
  const queries = totals.reduce((a, t) => a + t.prefixQueries, 0);
  const endpoints: EndpointLoad[] = input.fleet.map((t) => ({
    endpoint: t.name,
    group: t.group,
    requests: sampler.totals[t.name]?.requests ?? 0,
    prompt_tokens: sampler.totals[t.name]?.promptTokens ?? 0,
    generation_tokens: sampler.totals[t.name]?.generationTokens ?? 0,
    ...(input.loraLoads ? { lora_loads: input.loraLoads.by_endpoint[t.name] ?? 0 } : {}),
  }));
  const byModel = modelResults(records);
  const phases = input.phases ?? [];
  const byPhase = breakdownByPhase(records, phases);
  const burst = (input.scenario as Partial<ShippedScenario>).burst;
  const isolation = burst ? burstIsolation(records, phases, burst) : null;
  const t0 = records.length > 0 ? Math.min(...records.map((r) => r.sentAtMs)) : 0;
  return {
    status: "ok",
    topology: input.topology,
    classes,
    acceptance: acceptance(input, classes),
    prefix_cache_hit_rate: queries > 0 ? round(hits / queries, 4) : null,
    throughput_rps: round(ok.length / durationS, 2),
    output_tokens_per_s: round(ok.reduce((a, r) => a + (r.result.completionTokens ?? 0), 0) / durationS, 1),
    errors: records.length - ok.length,
    endpoint_load_max_over_mean: loadImbalance(endpoints),
    endpoints,
    ...(input.loraLoads ? { lora_loads: input.loraLoads } : {}),
    ...(byModel ? { by_model: byModel } : {}),
    overall: groupResult(records),
    by_tenant: byTenant(records),
    by_input_size: byInputSize(records),
    ...(byPhase ? { by_phase: byPhase } : {}),
    ...(isolation ? { burst_isolation: isolation } : {}),
    tenant_flow: tenantFlow(records, (r) => engineTtftMs(r, input.engineTimings), input.log),
    ...(input.log ? { prediction_error: predictionError(input.log) } : {}),
    queue_depth: sampler.queue,
    kv_usage: sampler.kv,
    samples: records.map((r) => ({
      cls: r.req.request_class,
      ttft_ms: Number.isFinite(r.result.ttftMs) ? round(r.result.ttftMs) : null,
      e2e_ms: round(r.result.e2eMs),
      ok: !r.result.error,
      t_s: round((r.sentAtMs - t0) / 1000, 2),
    })),
    duration_s: round(durationS, 1),
  };
}

/** TTFT by the model each request named, when the trace names any; null otherwise. */
function modelResults(records: readonly ReplayRecord[]): Record<string, ModelResult> | null {
  if (!records.some((r) => r.req.model !== undefined)) return null;
  const byModel = new Map<string, ReplayRecord[]>();
  for (const r of records) {
    const m = r.req.model ?? "(router default)";
    const list = byModel.get(m);
    if (list) list.push(r);
    else byModel.set(m, [r]);
  }
  const out: Record<string, ModelResult> = {};
  for (const m of [...byModel.keys()].sort()) {
    const list = byModel.get(m)!;
    const ok = list.filter((r) => !r.result.error);
    out[m] = {
      count: list.length,
      errors: list.length - ok.length,
      ttft_ms: q(ok.map((r) => r.result.ttftMs)),
    };
  }
  return out;
}

/** Busiest endpoint's requests over the mean, within each group of replicas; the worst group counts. */
function loadImbalance(endpoints: EndpointLoad[]): number | null {
  const groups = new Map<string, number[]>();
  for (const e of endpoints) groups.set(e.group, [...(groups.get(e.group) ?? []), e.requests]);
  let worst: number | null = null;
  for (const counts of groups.values()) {
    const mean = counts.reduce((a, b) => a + b, 0) / counts.length;
    if (mean <= 0 || counts.length < 2) continue;
    const ratio = Math.max(...counts) / mean;
    worst = worst === null ? ratio : Math.max(worst, ratio);
  }
  return worst === null ? null : round(worst, 3);
}

function acceptance(input: SummarizeInput, classes: Record<string, ClassResult>): Acceptance {
  const live = classes[input.scenario.liveClass];
  const long = input.scenario.longClass ? classes[input.scenario.longClass] : undefined;
  let completeness: number | null = null;
  let unknown: number | null = null;
  if (input.log) {
    const lines = new Map<string, Record<string, unknown>>();
    for (const l of input.log) {
      if (typeof l.trace_id === "string" && String(l.event).startsWith("inference."))
        lines.set(l.trace_id, l);
    }
    const complete = input.records.filter((r) => {
      const line = lines.get(r.req.id);
      return line !== undefined && ROUTE_LOG_FIELDS.every((f) => f in line);
    }).length;
    completeness = input.records.length > 0 ? round(complete / input.records.length, 4) : null;
    const routed = [...lines.values()].filter((l) => typeof l.task_known === "boolean");
    unknown =
      routed.length > 0
        ? round(routed.filter((l) => l.task_known === false).length / routed.length, 4)
        : null;
  }
  return {
    live_ttft_p95_ms: live?.ttft_ms.p95 ?? null,
    live_e2e_p95_ms: live?.e2e_ms.p95 ?? null,
    runtime_queue_p95_ms: live?.runtime_queue_ms.p95 ?? null,
    long_context_completion_rate: long ? long.completion_rate : null,
    route_log_completeness: completeness,
    unknown_task_ratio: unknown,
  };
}
