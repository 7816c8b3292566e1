// Picking among candidates with one request's pick request: the pool's plugins, its prefix index and the
// current time. Built once per request, then called for the first pick and for every retry.

import type { PickAmong } from "../flow/placement.js";
import { pickEndpoint } from "../picker/framework/pick-endpoint.js";
import type { PickRequest } from "../picker/framework/types.js";
import type { PoolPicker } from "./pool-runtime.js";

export function pickerFor(picker: PoolPicker, request: PickRequest): PickAmong {
  return (candidates) =>
    pickEndpoint(picker.profile, { request, now: Date.now(), prefixIndex: picker.index }, candidates);
}
