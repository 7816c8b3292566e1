// The queue stage (flow control): the request waits in the gateway's queue until a candidate endpoint is
// below its saturation bounds, then leaves with a placement — the endpoint the picker chose and the
// lease that holds its share of it. Its wait, and why, go on the request's record and metrics.

import type { EndpointState } from "../endpoints/endpoint-state.js";
import type { PickAmong, Placement } from "../flow/placement.js";
import { RequestTicket } from "../flow/request-ticket.js";
import type { ClientGone } from "../http/client-gone.js";
import type { RequestPlan } from "../plan/request-plan.js";
import type { Generation } from "./pool-runtime.js";
import type { RequestRecord } from "./request-record.js";
import type { GatewayRuntime } from "./runtime.js";

const RETRY_LATER: readonly string[] = ["retry_later"];

/** The placement at once when an endpoint has room (no promise), else a promise of it. */
export function queueForEndpoint(
  gw: GatewayRuntime,
  gen: Generation,
  plan: RequestPlan,
  rec: RequestRecord,
  candidates: readonly EndpointState[],
  pickAmong: PickAmong,
  clientGone: ClientGone,
): Placement | Promise<Placement> {
  const { decision } = plan;
  const flow = gen.flow.pools.get(decision.pool)!;
  const ticket = new RequestTicket({
    priority: decision.priority,
    tenant: rec.tenant ?? "anonymous",
    cost: plan.cost,
    work: decision.inputTokens,
    maxQueueMs: decision.maxQueueMs,
    gate: gen.flow.gateFor(decision.rule),
    fallbackOptions: decision.queuePolicy?.fallbackOptions ?? RETRY_LATER,
    endpoints: candidates,
    bounds: flow.settings,
    longPrefill: flow.longPrefill,
    pickAmong,
    clientGone,
    stream: plan.profile.stream,
    pickRequest: plan.pickRequest,
  });
  const pausedAtAdmit = ticket.gate?.paused === true;
  const queuedAt = performance.now();
  const admitted = flow.admit(ticket);
  if (!(admitted instanceof Promise)) return dispatched(gw, plan, rec, admitted);
  return waited(gw, plan, rec, ticket, admitted, queuedAt, pausedAtAdmit);
}

async function waited(
  gw: GatewayRuntime,
  plan: RequestPlan,
  rec: RequestRecord,
  ticket: RequestTicket,
  admitted: Promise<Placement>,
  queuedAt: number,
  pausedAtAdmit: boolean,
): Promise<Placement> {
  let placement: Placement;
  try {
    placement = await admitted;
  } catch (err) {
    rec.queueLeftAt = performance.now();
    throw err;
  } finally {
    rec.queueReason = ticket.waitReason(queuedAt, pausedAtAdmit);
    rec.heldWhileIdleMs = ticket.heldWhileIdleMs;
  }
  return dispatched(gw, plan, rec, placement);
}

/** The request leaves the queue: when, and how long it waited, on its record and metrics. */
function dispatched(
  gw: GatewayRuntime,
  plan: RequestPlan,
  rec: RequestRecord,
  placement: Placement,
): Placement {
  const pool = plan.decision.pool;
  rec.dispatchedAt = performance.now();
  gw.metrics.queueSeconds.labels(pool).observe((rec.dispatchedAt - rec.t0) / 1000);
  if (rec.heldWhileIdleMs !== null && rec.heldWhileIdleMs > 0 && rec.queueReason !== "paused")
    gw.metrics.heldWhileIdleSeconds.labels(pool, rec.tenant ?? "anonymous").inc(rec.heldWhileIdleMs / 1000);
  return placement;
}
