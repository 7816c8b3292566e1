// What the endpoint picker is asked for one request: the served model, sizes, the prompt's block hashes
// (for prefix affinity) and the session key — built once, then picked among any set of candidates.

import type { IncomingHttpHeaders } from "node:http";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import { pickEndpoint } from "../picker/framework/pick-endpoint.js";
import type { PickRequest, PickResult } from "../picker/framework/types.js";
import { promptHashesFor } from "../picker/picker-profile.js";
import type { ApiKind } from "../profile/request-profile.js";
import type { PoolPicker } from "./gateway-runtime.js";
import { promptPartsOf } from "./prompt-parts.js";

export type PickAmong = (candidates: readonly EndpointState[]) => PickResult<EndpointState>;

/** The pick request for a routed request, and a function that picks among given candidates with it. */
export function pickerFor(
  picker: PoolPicker,
  kind: ApiKind,
  body: Record<string, unknown>,
  target: { upstreamModel: string; maxTokens: number; inputTokens: number },
  headers: IncomingHttpHeaders,
): { request: PickRequest; pickAmong: PickAmong } {
  const session = picker.sessionHeader ? headers[picker.sessionHeader] : undefined;
  const s = Array.isArray(session) ? session[0] : session;
  const request: PickRequest = {
    model: target.upstreamModel,
    modelVersion: null,
    lora: null,
    inputTokens: target.inputTokens,
    maxTokens: target.maxTokens,
    blockHashes: promptHashesFor(picker.config, promptPartsOf(kind, body), target.upstreamModel, null),
    sessionKey: s === undefined || s === "" ? null : s,
  };
  const pickAmong: PickAmong = (candidates) =>
    pickEndpoint(picker.profile, { request, now: Date.now(), prefixIndex: picker.index }, candidates);
  return { request, pickAmong };
}
