// The request pipeline from a plan to a placement, the same for every front door: the route decision
// counted → budget (budgeted tenants reserve their share or are refused) → candidates (the pool's
// endpoints that serve the target, narrowed by the door) → queue and pick (flow control's queue until
// one is below its bounds, the picker's choice among them). The door then hands the request off — the
// gateway forwards it (forward.ts), the EPP names the endpoint to Envoy — inside one attempt per
// endpoint tried (hooks.ts), and settles it at the end.

import type { EndpointState } from "../endpoints/endpoint-state.js";
import type { PickAmong, Placement } from "../flow/placement.js";
import type { ClientGone } from "../http/client-gone.js";
import type { RequestPlan } from "../plan/request-plan.js";
import { admitToBudget, budgeted } from "./budget-stage.js";
import { noEndpointError, servingEndpoints } from "./candidates.js";
import { pickerFor } from "./pick-among.js";
import type { Generation, PoolRuntime } from "./pool-runtime.js";
import { queueForEndpoint } from "./queue-stage.js";
import type { RequestRecord } from "./request-record.js";
import type { GatewayRuntime } from "./runtime.js";

/** A request placed: its pool, plan, candidates, how to pick among them again, and its placement. */
export interface Placed {
  readonly pool: PoolRuntime;
  readonly plan: RequestPlan;
  readonly candidates: readonly EndpointState[];
  /** Picks among candidates with this request (a retry picks again among those not yet tried). */
  readonly pickAmong: PickAmong;
  readonly placement: Placement;
}

/** What a front door adds to the stages. */
export interface PlaceOptions {
  /** Keeps only these candidates (the EPP's subset hint); `why` when none of them can take the request. */
  readonly narrow?: { readonly keep: (e: EndpointState) => boolean; readonly why: string } | null;
  /** The request is about to queue (the gateway arms a stream's heartbeat). */
  readonly queuing?: (() => void) | null;
  /** The pool's backup is offered when no endpoint can take the request (the gateway's door). */
  readonly offerBackupPool?: boolean;
}

export async function place(
  gw: GatewayRuntime,
  gen: Generation,
  plan: RequestPlan,
  rec: RequestRecord,
  clientGone: ClientGone,
  opts: PlaceOptions = {},
): Promise<Placed> {
  const { decision } = plan;
  gw.metrics.routeDecisions.labels(decision.pool, decision.reasonLabel).inc();
  if (budgeted(gen.config, rec.tenant)) await admitToBudget(gw, rec.tenant, plan, rec);
  const pool = gen.pools.get(decision.pool);
  if (!pool) throw noEndpointError(decision.pool, "it has no endpoints", null);
  const pickAmong = pickerFor(pool.picker, plan.pickRequest);
  const serving = servingEndpoints(pool, plan);
  const narrow = opts.narrow ?? null;
  const candidates = narrow === null ? serving : serving.filter(narrow.keep);
  // No endpoint can take it at all (none healthy): say so now rather than queue for nothing.
  const now = Date.now();
  if (!candidates.some((e) => e.routable(now))) {
    if (narrow !== null) throw noEndpointError(decision.pool, narrow.why, null);
    const pick = pickAmong(candidates);
    throw noEndpointError(decision.pool, pick.reason, opts.offerBackupPool ? pick.backupPool : null);
  }
  opts.queuing?.();
  const queued = queueForEndpoint(gw, gen, plan, rec, candidates, pickAmong, clientGone);
  const placement = queued instanceof Promise ? await queued : queued;
  return { pool, plan, candidates, pickAmong, placement };
}
