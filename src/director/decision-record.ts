// What the director keeps of each decision: the metrics it moves and its JSON log line (an event of the
// request log, `director.decision`, one per request at a front door), with every candidate's score
// terms or filter reason, so a line alone says why traffic went where it went.

import type { RequestLog } from "../telemetry/request-log.js";
import type { DirectorMetrics } from "./director-metrics.js";
import type { DirectorDecision, DirectorQuery, RegionCandidate } from "./director-types.js";

export const DECISION_EVENT = "director.decision";

/** The front door a request came through. */
export type Front = "forward" | "redirect" | "answer";

/** The fields of a `director.decision` line (null when unknown, never invented). */
export interface DecisionLine {
  trace_id: string;
  front: Front;
  tenant: string | null;
  model: string | null;
  caller_region: string | null;
  region: string | null;
  reason: string | null;
  affinity: string | null;
  candidates: readonly RegionCandidate[];
  /** Regions tried (forward): 2 when the first failed before its first byte and another was tried. */
  attempts: number;
  /** The region tried first, when the request was retried on another. */
  retried_from: string | null;
  /** ok, refused, rejected (a bad request), upstream_error, upstream_timeout, broken_stream, client_cancelled. */
  status: string;
  http_status: number;
  error_code: string | null;
  latency_ms: number;
}

/** Counts a decision: the region and reason it chose, or the refusal's code. */
export function countDecision(metrics: DirectorMetrics, d: DirectorDecision): void {
  if (d.kind === "region") metrics.decisions.labels(d.region, d.reason).inc();
  else metrics.refusals.labels(d.code).inc();
}

/** A line with the decision's fields filled in, the rest from `rest`. */
export function decisionLine(
  q: DirectorQuery | null,
  d: DirectorDecision | null,
  rest: Pick<DecisionLine, "trace_id" | "front" | "status" | "http_status"> & Partial<DecisionLine>,
): DecisionLine {
  const { trace_id, front, ...others } = rest;
  return {
    trace_id,
    front,
    tenant: q?.tenant ?? null,
    model: q?.model ?? null,
    caller_region: q?.callerRegion ?? null,
    region: d?.kind === "region" ? d.region : null,
    reason: d?.kind === "region" ? d.reason : null,
    affinity: d?.kind === "region" ? d.affinity : null,
    candidates: d?.candidates ?? [],
    attempts: d?.kind === "region" ? 1 : 0,
    retried_from: null,
    error_code: d?.kind === "refuse" ? d.code : null,
    latency_ms: 0,
    ...others,
  };
}

export function logDecision(log: RequestLog, line: DecisionLine): void {
  log.event(DECISION_EVENT, { ...line, latency_ms: Math.round(line.latency_ms * 1000) / 1000 });
}
