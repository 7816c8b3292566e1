// Loads the project's ext_proc and gRPC health protos (proto/ at the repository root) at runtime, and
// types the plain objects @grpc/proto-loader turns their messages into (snake_case fields, as declared).

import { fileURLToPath } from "node:url";
import type * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

/**
 * proto/ resolved from this module: tsc does not copy .proto files, so dist/epp/protos.js reaches
 * ../../proto just as src/epp/protos.ts does.
 */
export const PROTO_ROOT = fileURLToPath(new URL("../../proto/", import.meta.url));

const FILES = ["envoy/service/ext_proc/v3/external_processor.proto", "grpc/health/v1/health.proto"];

/** Full names of the two services, as Envoy's health check and gRPC clients spell them. */
export const EXT_PROC_SERVICE = "envoy.service.ext_proc.v3.ExternalProcessor";
export const HEALTH_SERVICE = "grpc.health.v1.Health";

let loaded: protoLoader.PackageDefinition | null = null;

/** The package definition of both protos, loaded once. Enums are numbers; bytes are Buffers. */
export function eppProtos(): protoLoader.PackageDefinition {
  loaded ??= protoLoader.loadSync(FILES, {
    includeDirs: [PROTO_ROOT],
    keepCase: true,
    longs: String,
    defaults: true,
    oneofs: true,
  });
  return loaded;
}

/** The service definition of `name` (EXT_PROC_SERVICE or HEALTH_SERVICE), for Server.addService. */
export function serviceDefinition(name: string): grpc.ServiceDefinition {
  const def = eppProtos()[name];
  if (!def || !("Process" in def || "Check" in def))
    throw new Error(`epp: no service ${name} in ${PROTO_ROOT}`);
  return def as grpc.ServiceDefinition;
}

// google.protobuf.Struct comes from protobufjs's bundled copy, whose fields are camelCase.

/** google.protobuf.Value: one of its fields is set (`kind` names which when decoded). */
export interface ProtoValue {
  kind?: string;
  nullValue?: number;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: ProtoStruct | null;
  listValue?: { values?: ProtoValue[] } | null;
}

/** google.protobuf.Struct. */
export interface ProtoStruct {
  fields?: Record<string, ProtoValue>;
}

/** envoy.config.core.v3.HeaderValue: Envoy sends `raw_value`; older Envoys sent `value`. */
export interface HeaderValue {
  key: string;
  value?: string;
  raw_value?: Uint8Array;
}

export interface HeaderMap {
  headers?: HeaderValue[];
}

export interface Metadata {
  filter_metadata?: Record<string, ProtoStruct>;
}

export interface HttpHeaders {
  headers?: HeaderMap | null;
  end_of_stream?: boolean;
}

export interface HttpBody {
  body?: Uint8Array;
  end_of_stream?: boolean;
}

export interface HttpTrailers {
  trailers?: HeaderMap | null;
}

/** envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.BodySendMode. */
export const BodySendMode = {
  NONE: 0,
  STREAMED: 1,
  BUFFERED: 2,
  BUFFERED_PARTIAL: 3,
  FULL_DUPLEX_STREAMED: 4,
} as const;

export interface ProtocolConfiguration {
  request_body_mode?: number;
  response_body_mode?: number;
}

/** envoy.service.ext_proc.v3.ProcessingRequest: Envoy → processor. */
export interface ProcessingRequest {
  request?: string;
  request_headers?: HttpHeaders | null;
  response_headers?: HttpHeaders | null;
  request_body?: HttpBody | null;
  response_body?: HttpBody | null;
  request_trailers?: HttpTrailers | null;
  response_trailers?: HttpTrailers | null;
  metadata_context?: Metadata | null;
  observability_mode?: boolean;
  protocol_config?: ProtocolConfiguration | null;
}

/** envoy.config.core.v3.HeaderValueOption.HeaderAppendAction. */
export const OVERWRITE_IF_EXISTS_OR_ADD = 2;

export interface HeaderValueOption {
  header: HeaderValue;
  append_action?: number;
}

export interface HeaderMutation {
  set_headers?: HeaderValueOption[];
  remove_headers?: string[];
}

export interface StreamedBodyResponse {
  body: Uint8Array;
  end_of_stream: boolean;
}

export interface CommonResponse {
  status?: number;
  header_mutation?: HeaderMutation | null;
  body_mutation?: { streamed_response?: StreamedBodyResponse | null; mutation?: string } | null;
  clear_route_cache?: boolean;
}

export interface ImmediateResponse {
  status: { code: number };
  headers?: HeaderMutation | null;
  body?: string;
  details?: string;
}

/** envoy.service.ext_proc.v3.ProcessingResponse: processor → Envoy. */
export interface ProcessingResponse {
  response?: string;
  request_headers?: { response?: CommonResponse | null } | null;
  response_headers?: { response?: CommonResponse | null } | null;
  request_body?: { response?: CommonResponse | null } | null;
  response_body?: { response?: CommonResponse | null } | null;
  request_trailers?: { header_mutation?: HeaderMutation | null } | null;
  response_trailers?: { header_mutation?: HeaderMutation | null } | null;
  immediate_response?: ImmediateResponse | null;
  dynamic_metadata?: ProtoStruct | null;
}
