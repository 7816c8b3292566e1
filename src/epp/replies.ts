// The ProcessingResponses the endpoint picker sends Envoy in FULL_DUPLEX_STREAMED mode: header answers
// with mutations, bodies as StreamedBodyResponse chunks, trailer answers and ImmediateResponses.

import { headerMap } from "./metadata.js";
import {
  type HeaderMutation,
  OVERWRITE_IF_EXISTS_OR_ADD,
  type ProcessingResponse,
  type ProtoStruct,
} from "./protos.js";

/** Upstream's recommended ceiling for one StreamedBodyResponse chunk. */
export const MAX_BODY_CHUNK_BYTES = 64 * 1024;

/** Which half of the exchange a reply answers. */
export type Direction = "request" | "response";

/** Headers set, each overwriting whatever the client sent under that name. */
export function setHeaders(headers: Readonly<Record<string, string>>): HeaderMutation {
  return {
    set_headers: (headerMap(headers).headers ?? []).map((header) => ({
      header,
      append_action: OVERWRITE_IF_EXISTS_OR_ADD,
    })),
  };
}

/**
 * The answer to request headers once the picker has decided: the route cache cleared so Envoy routes on
 * the new destination header, and the destination list as dynamic metadata.
 */
export function routedHeadersReply(
  headers: Readonly<Record<string, string>>,
  dynamicMetadata: ProtoStruct,
): ProcessingResponse {
  return {
    request_headers: { response: { clear_route_cache: true, header_mutation: setHeaders(headers) } },
    dynamic_metadata: dynamicMetadata,
  };
}

/** Headers let through unchanged. */
export function continueHeadersReply(direction: Direction): ProcessingResponse {
  return direction === "request"
    ? { request_headers: { response: {} } }
    : { response_headers: { response: {} } };
}

/** One body chunk sent back as a StreamedBodyResponse. */
export function bodyChunkReply(
  direction: Direction,
  chunk: Uint8Array,
  endOfStream: boolean,
): ProcessingResponse {
  const response = { body_mutation: { streamed_response: { body: chunk, end_of_stream: endOfStream } } };
  return direction === "request" ? { request_body: { response } } : { response_body: { response } };
}

/** A whole body as StreamedBodyResponse chunks of at most 64 KiB; one empty chunk for an empty body. */
export function bodyReplies(direction: Direction, body: Buffer, endOfStream: boolean): ProcessingResponse[] {
  const out: ProcessingResponse[] = [];
  for (let at = 0; at < body.length || out.length === 0; at += MAX_BODY_CHUNK_BYTES) {
    const end = Math.min(at + MAX_BODY_CHUNK_BYTES, body.length);
    out.push(bodyChunkReply(direction, body.subarray(at, end), endOfStream && end === body.length));
  }
  return out;
}

/** Trailers let through unchanged. */
export function trailersReply(direction: Direction): ProcessingResponse {
  return direction === "request" ? { request_trailers: {} } : { response_trailers: {} };
}

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  404: "invalid_request_error",
  413: "invalid_request_error",
  429: "rate_limit_error",
  500: "server_error",
  503: "service_unavailable_error",
};

/** What Envoy answers the client in place of the upstream. */
export interface Refusal {
  status: number;
  code: string;
  message: string;
  retryAfterSeconds?: number | undefined;
}

/** The OpenAI-shaped error body: `{"error":{"message","type","code"}}`. */
export function refusalBody(r: Refusal): string {
  const type = ERROR_TYPES[r.status] ?? (r.status >= 500 ? "server_error" : "invalid_request_error");
  return JSON.stringify({ error: { message: r.message, type, code: r.code } });
}

/** An ImmediateResponse: Envoy ends the request with this status, JSON body and headers. */
export function immediateReply(r: Refusal): ProcessingResponse {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (r.retryAfterSeconds !== undefined)
    headers["retry-after"] = String(Math.max(0, Math.ceil(r.retryAfterSeconds)));
  return {
    immediate_response: {
      status: { code: r.status },
      headers: setHeaders(headers),
      body: refusalBody(r),
      details: `tokengate_epp_${r.code}`,
    },
  };
}
