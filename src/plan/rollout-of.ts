// The rollout stage's answer for one request, as the gateway, `POST /admin/explain` and `route explain`
// all ask it: the plan's labels (or, for a request the plan refused, the labels it names), its decision,
// and its sticky key.

import type { IncomingHttpHeaders } from "node:http";
import type { GatewayConfigSet } from "../config/config-set.js";
import { routingLabels } from "../profile/request-profile.js";
import { type RolloutEffect, rolloutEffect } from "../route/rollout-effect.js";
import { type RequestPlan, stickyKeyOf } from "./request-plan.js";

export interface RolloutAnswer {
  readonly effect: RolloutEffect;
  readonly task: string | null;
  readonly requestClass: string | null;
}

export function rolloutOf(
  config: GatewayConfigSet,
  plan: RequestPlan | null,
  body: unknown,
  headers: IncomingHttpHeaders,
  tenant: string | null,
  explain: string[] | null = null,
): RolloutAnswer {
  const labels = plan
    ? { task: plan.profile.task, requestClass: plan.profile.requestClass }
    : routingLabels(headers, body);
  const effect = rolloutEffect(
    config.route,
    labels,
    plan?.decision ?? null,
    (by) => stickyKeyOf(by, tenant, headers),
    explain,
  );
  return { effect, ...labels };
}
