// The part of a request plan that every explanation shows and the log line records: one shape, so
// `POST /admin/explain`, `tokengate route explain --json` and the gateway can be held to the same answer.

import type { RequestPlan } from "./request-plan.js";

export interface PlanSummary {
  readonly pool: string;
  readonly rule: string | null;
  readonly reason: string;
  readonly upstream_model: string;
  readonly model_version: string;
  readonly target: string;
  readonly max_tokens: number;
  readonly input_tokens_estimated: number;
  readonly priority: number;
  readonly task: string | null;
  readonly request_class: string | null;
}

export function planSummary(plan: RequestPlan): PlanSummary {
  const d = plan.decision;
  return {
    pool: d.pool,
    rule: d.rule,
    reason: d.reason,
    upstream_model: d.upstreamModel,
    model_version: d.modelVersion,
    target: d.target.name,
    max_tokens: d.maxTokens,
    input_tokens_estimated: d.inputTokens,
    priority: d.priority,
    task: plan.profile.task,
    request_class: plan.profile.requestClass,
  };
}
