// Picking among candidates with one request's pick request: the pool's plugins, its prefix index and the
// current time. Built once per request, then called for the first pick and for every retry.

import type { EndpointState } from "../endpoints/endpoint-state.js";
import { pickEndpoint } from "../picker/framework/pick-endpoint.js";
import type { PickRequest, PickResult } from "../picker/framework/types.js";
import type { PoolPicker } from "./gateway-runtime.js";

export type PickAmong = (candidates: readonly EndpointState[]) => PickResult<EndpointState>;

export function pickerFor(picker: PoolPicker, request: PickRequest): PickAmong {
  return (candidates) =>
    pickEndpoint(picker.profile, { request, now: Date.now(), prefixIndex: picker.index }, candidates);
}
