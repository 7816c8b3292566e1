// Where a request leaves the gateway's queue for: the endpoint, the lease that holds its share of the
// endpoint until the request ends, and the pick that chose it (for the log and explain).

import type { EndpointState } from "../endpoints/endpoint-state.js";
import type { Lease } from "../endpoints/lease.js";
import type { PickResult } from "../picker/framework/types.js";

export interface Placement {
  readonly endpoint: EndpointState;
  readonly lease: Lease;
  readonly pick: PickResult<EndpointState>;
}

/** Picks among candidates with one request's pick request (built once per request, pipeline/pick-among.ts). */
export type PickAmong = (candidates: readonly EndpointState[]) => PickResult<EndpointState>;
