// The plan stage: the request's plan (profile, route decision, upstream body, pick request), written
// into its record — or, while a rollout stage or a route rollback runs, possibly the legacy service
// instead (rollout-stage.ts).

import { planRequest } from "../plan/request-plan.js";
import { parseJson, recordPlan } from "./plan-record.js";
import type { Generation } from "./pool-runtime.js";
import type { RequestRecord } from "./request-record.js";
import { type Staged, type StageInput, stageRequest } from "./rollout-stage.js";
import type { GatewayRuntime } from "./runtime.js";

export function planStage(
  gw: GatewayRuntime,
  gen: Generation,
  rec: RequestRecord,
  input: StageInput,
): Staged {
  const config = gen.config;
  if (gen.staged) return stageRequest(config, gw.correction, input, rec);
  const body = parseJson(input.raw);
  const plan = recordPlan(rec, config.gateway.logging.prompts, () =>
    planRequest(config, gw.correction, {
      kind: input.kind,
      body,
      headers: input.headers,
      tenant: input.tenant,
    }),
  );
  return { to: "route", plan };
}
