// Seed 004's acceptance table (验收标准): each figure, its value before the change, and its target.

import type { Acceptance } from "../results.js";

export type AcceptanceKey = keyof Acceptance;

export interface AcceptanceTarget {
  key: AcceptanceKey;
  /** The row's name in the report. */
  label: string;
  unit: "ms" | "rate";
  /** The seed's strict bound: "小于" (below) or "大于" (above). */
  bound: "below" | "above";
  target: number;
  /** The seed's figure before the change, for scale. */
  before: number;
}

export const SEED_004_TARGETS: readonly AcceptanceTarget[] = [
  {
    key: "live_ttft_p95_ms",
    label: "Live summary TTFT P95",
    unit: "ms",
    bound: "below",
    target: 1800,
    before: 6400,
  },
  {
    key: "live_e2e_p95_ms",
    label: "Live summary end-to-end P95",
    unit: "ms",
    bound: "below",
    target: 7000,
    before: 18000,
  },
  {
    key: "runtime_queue_p95_ms",
    label: "Runtime queue P95",
    unit: "ms",
    bound: "below",
    target: 600,
    before: 4900,
  },
  {
    key: "long_context_completion_rate",
    label: "Long-context completion rate",
    unit: "rate",
    bound: "above",
    target: 0.98,
    before: 0.941,
  },
  {
    key: "route_log_completeness",
    label: "Route-log completeness",
    unit: "rate",
    bound: "above",
    target: 0.99,
    before: 0.61,
  },
  {
    key: "unknown_task_ratio",
    label: "Unknown-task ratio",
    unit: "rate",
    bound: "below",
    target: 0.01,
    before: 0.078,
  },
];

/** Whether a measured figure meets its target; null when there is no figure to judge. */
export function meetsTarget(t: AcceptanceTarget, value: number | null | undefined): boolean | null {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  return t.bound === "below" ? value < t.target : value > t.target;
}
