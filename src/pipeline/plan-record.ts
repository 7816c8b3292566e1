// The plan stage's bookkeeping: the body parsed as JSON (a clear 400 when it is not), and what the plan
// decided written into the request's record — also when it refuses the request.

import { GatewayError } from "../errors/gateway-error.js";
import type { RequestPlan } from "../plan/request-plan.js";
import type { RequestRecord } from "./request-record.js";

export function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw new GatewayError("invalid_json", `the request body is not valid JSON: ${(err as Error).message}`, {
      param: "body",
    });
  }
}

/** Runs the plan and writes what it decided into the record, also when it refuses the request. */
export function recordPlan(rec: RequestRecord, logPrompts: boolean, make: () => RequestPlan): RequestPlan {
  let plan: RequestPlan;
  try {
    plan = make();
  } catch (err) {
    if (err instanceof GatewayError) rec.pool = err.route;
    throw err;
  }
  const { profile, decision } = plan;
  rec.task = profile.task;
  rec.requestClass = profile.requestClass;
  rec.modelAlias = profile.modelAlias;
  rec.stream = profile.stream;
  if (logPrompts) rec.prompt = profile.kind === "chat" ? profile.body.messages : profile.body.prompt;
  rec.inputTokensEstimated = decision.inputTokens;
  rec.taskKnown = decision.taskKnown;
  rec.pool = decision.pool;
  rec.routeReason = decision.reason;
  rec.reasonLabel = decision.reasonLabel;
  rec.modelVersion = decision.modelVersion;
  rec.servedModel = decision.upstreamModel;
  rec.maxTokens = decision.maxTokens;
  return plan;
}
