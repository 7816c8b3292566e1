// A stand-in for Envoy's ext_proc filter in FULL_DUPLEX_STREAMED mode, for the endpoint picker's tests:
// it sends an HTTP exchange as ProcessingRequests in Envoy's order and collects the replies in order.

import * as grpc from "@grpc/grpc-js";
import type { EppDecision, EppPicker, EppRequest } from "../epp/decision.js";
import { headerMap, LB_NAMESPACE, SERVED_KEY, SUBSET_KEY, SUBSET_NAMESPACE } from "../epp/metadata.js";
import {
  BodySendMode,
  EXT_PROC_SERVICE,
  type Metadata,
  type ProcessingRequest,
  type ProcessingResponse,
  serviceDefinition,
} from "../epp/protos.js";

/** The request half as Envoy sees it: headers (with pseudo-headers), body chunks, trailers, subset hint. */
export interface EnvoyRequest {
  headers: Record<string, string>;
  /** Body chunks; none (or absent) sends end_of_stream on the headers. */
  body?: (string | Buffer)[];
  trailers?: Record<string, string>;
  /** Sent as filter metadata envoy.lb.subset_hint / x-gateway-destination-endpoint-subset. */
  subset?: string[];
}

/** The response half: headers (with :status), the endpoint Envoy reports as served, body chunks, trailers. */
export interface EnvoyResponse {
  headers: Record<string, string>;
  served?: string;
  body?: (string | Buffer)[];
  trailers?: Record<string, string>;
}

/** The final gRPC status of a Process stream. */
export interface StreamStatus {
  code: grpc.status;
  details: string;
}

const Client = grpc.makeGenericClientConstructor(serviceDefinition(EXT_PROC_SERVICE), "ExternalProcessor");

const bytes = (c: string | Buffer) => (typeof c === "string" ? Buffer.from(c) : c);

function metadataOf(namespace: string, key: string, value: string | string[]): Metadata {
  const v = Array.isArray(value)
    ? { listValue: { values: value.map((stringValue) => ({ stringValue })) } }
    : { stringValue: value };
  return { filter_metadata: { [namespace]: { fields: { [key]: v } } } };
}

/** One Process stream driven by hand: send Envoy's messages one by one and read replies as they come. */
export class EnvoyExtProcStream {
  /** Every reply received so far, in order. */
  readonly replies: ProcessingResponse[] = [];
  /** Resolves with the stream's final status (OK, CANCELLED, INVALID_ARGUMENT, …). */
  readonly status: Promise<StreamStatus>;
  private readonly client: grpc.Client;
  private readonly call: grpc.ClientDuplexStream<ProcessingRequest, ProcessingResponse>;
  private readonly unread: ProcessingResponse[] = [];
  private waiter: ((r: ProcessingResponse | null) => void) | null = null;
  private over = false;
  private first = true;

  /** `bodyModes`: what protocol_config says Envoy is configured with (FULL_DUPLEX_STREAMED both ways). */
  constructor(
    address: string,
    private readonly bodyModes = {
      request_body_mode: BodySendMode.FULL_DUPLEX_STREAMED as number,
      response_body_mode: BodySendMode.FULL_DUPLEX_STREAMED as number,
    },
  ) {
    this.client = new Client(address, grpc.credentials.createInsecure());
    this.call = (this.client as unknown as { Process(): EnvoyExtProcStream["call"] }).Process();
    this.call.on("data", (r: ProcessingResponse) => {
      this.replies.push(r);
      if (this.waiter) this.takeWaiter()(r);
      else this.unread.push(r);
    });
    this.status = new Promise((resolve) => {
      this.call.on("status", (s: grpc.StatusObject) => {
        this.over = true;
        this.waiter && this.takeWaiter()(null);
        this.client.close();
        resolve({ code: s.code, details: s.details });
      });
    });
    this.call.on("error", () => {}); // the status event carries it
  }

  /** The next reply not yet read, or null once the server has ended the stream. */
  next(): Promise<ProcessingResponse | null> {
    const r = this.unread.shift();
    if (r) return Promise.resolve(r);
    if (this.over) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  private takeWaiter(): (r: ProcessingResponse | null) => void {
    const w = this.waiter!;
    this.waiter = null;
    return w;
  }

  /** Sends one ProcessingRequest as given (the first still gets protocol_config). */
  send(m: ProcessingRequest): void {
    // Newer Envoys say their body modes on a stream's first message.
    if (this.first) {
      m.protocol_config = this.bodyModes;
      this.first = false;
    }
    this.call.write(m);
  }

  sendRequestHeaders(headers: Record<string, string>, endOfStream: boolean, subset?: string[]): void {
    const m: ProcessingRequest = {
      request_headers: { headers: headerMap(headers), end_of_stream: endOfStream },
    };
    if (subset) m.metadata_context = metadataOf(SUBSET_NAMESPACE, SUBSET_KEY, subset);
    this.send(m);
  }

  sendRequestBody(chunk: string | Buffer, endOfStream: boolean): void {
    this.send({ request_body: { body: bytes(chunk), end_of_stream: endOfStream } });
  }

  sendRequestTrailers(trailers: Record<string, string>): void {
    this.send({ request_trailers: { trailers: headerMap(trailers) } });
  }

  sendResponseHeaders(headers: Record<string, string>, endOfStream: boolean, served?: string): void {
    const m: ProcessingRequest = {
      response_headers: { headers: headerMap(headers), end_of_stream: endOfStream },
    };
    if (served !== undefined) m.metadata_context = metadataOf(LB_NAMESPACE, SERVED_KEY, served);
    this.send(m);
  }

  sendResponseBody(chunk: string | Buffer, endOfStream: boolean): void {
    this.send({ response_body: { body: bytes(chunk), end_of_stream: endOfStream } });
  }

  sendResponseTrailers(trailers: Record<string, string>): void {
    this.send({ response_trailers: { trailers: headerMap(trailers) } });
  }

  /** Envoy is done with the stream (the HTTP exchange ended, or its client went away). */
  halfClose(): void {
    this.call.end();
  }

  /** Envoy resets the stream. */
  cancel(): void {
    this.call.cancel();
  }

  /** Reads replies until `isLast` says one is the last of a phase, or until the stream ends. */
  async readUntil(isLast: (r: ProcessingResponse) => boolean): Promise<ProcessingResponse[]> {
    const out: ProcessingResponse[] = [];
    for (let r = await this.next(); r; r = await this.next()) {
      out.push(r);
      if (r.immediate_response || isLast(r)) break;
    }
    return out;
  }
}

/** Whether the processor has answered all of a phase: headers, then body to end_of_stream, then trailers. */
function phaseDone(kind: "request" | "response", hasBody: boolean, hasTrailers: boolean) {
  return (r: ProcessingResponse): boolean => {
    if (hasTrailers) return !!r[`${kind}_trailers`];
    if (hasBody) return !!r[`${kind}_body`]?.response?.body_mutation?.streamed_response?.end_of_stream;
    return !!r[`${kind}_headers`];
  };
}

/** What replaying one exchange gave back. */
export interface EnvoyReplay {
  /** All replies in the order received. */
  replies: ProcessingResponse[];
  status: StreamStatus;
}

/**
 * Replays one HTTP exchange as Envoy does in FULL_DUPLEX_STREAMED mode: the request's headers, body
 * chunks (end_of_stream on the last unless trailers follow) and trailers without waiting; then, once the
 * processor has answered the request (or ended it with an ImmediateResponse), the response's headers
 * with the served endpoint in metadata_context, its body chunks and trailers; then a half-close.
 */
export async function replayEnvoyExchange(
  address: string,
  request: EnvoyRequest,
  response?: EnvoyResponse,
): Promise<EnvoyReplay> {
  const s = new EnvoyExtProcStream(address);
  const reqBody = request.body ?? [];
  s.sendRequestHeaders(request.headers, reqBody.length === 0 && !request.trailers, request.subset);
  for (const [i, c] of reqBody.entries()) s.sendRequestBody(c, i === reqBody.length - 1 && !request.trailers);
  if (request.trailers) s.sendRequestTrailers(request.trailers);
  const answered = await s.readUntil(phaseDone("request", reqBody.length > 0, !!request.trailers));
  const refused = answered.length === 0 || answered.some((r) => r.immediate_response);
  if (response && !refused) {
    const resBody = response.body ?? [];
    s.sendResponseHeaders(response.headers, resBody.length === 0 && !response.trailers, response.served);
    for (const [i, c] of resBody.entries())
      s.sendResponseBody(c, i === resBody.length - 1 && !response.trailers);
    if (response.trailers) s.sendResponseTrailers(response.trailers);
    await s.readUntil(phaseDone("response", resBody.length > 0, !!response.trailers));
  }
  s.halfClose();
  const status = await s.status;
  return { replies: s.replies, status };
}

/** The value a reply's header mutation sets for `name` (raw_value or value), or undefined. */
export function setHeaderValue(reply: ProcessingResponse | undefined, name: string): string | undefined {
  const mutation = reply?.request_headers?.response?.header_mutation ?? reply?.immediate_response?.headers;
  const h = mutation?.set_headers?.find((o) => o.header.key === name)?.header;
  if (!h) return undefined;
  return h.raw_value && h.raw_value.length > 0 ? Buffer.from(h.raw_value).toString() : (h.value ?? "");
}

/** The streamed body chunks of one direction, in order, with each chunk's end_of_stream. */
export function streamedChunks(
  replies: readonly ProcessingResponse[],
  kind: "request" | "response",
): { body: Buffer; endOfStream: boolean }[] {
  return replies.flatMap((r) => {
    const s = r[`${kind}_body`]?.response?.body_mutation?.streamed_response;
    return s ? [{ body: Buffer.from(s.body), endOfStream: s.end_of_stream }] : [];
  });
}

/** A picker's answer without done(): StubPicker adds one that records the report. */
export type StubAnswer =
  | Omit<Extract<EppDecision, { kind: "route" }>, "done">
  | Extract<EppDecision, { kind: "refuse" }>;

/** A picker for the protocol's tests: answers with `answer`, records requests, signals and done() reports. */
export class StubPicker implements EppPicker {
  readonly requests: EppRequest[] = [];
  readonly signals: AbortSignal[] = [];
  /** Every done(served, status) call, in order. */
  readonly reports: [string | null, number | null][] = [];
  /** Resolves when decide() is first called. */
  readonly entered: Promise<void>;
  /** Resolves when done() is first called. */
  readonly reported: Promise<void>;
  private onEntered!: () => void;
  private onReported!: () => void;

  constructor(
    private readonly answer: (req: EppRequest, signal: AbortSignal) => StubAnswer | Promise<StubAnswer>,
  ) {
    this.entered = new Promise((resolve) => {
      this.onEntered = resolve;
    });
    this.reported = new Promise((resolve) => {
      this.onReported = resolve;
    });
  }

  async decide(req: EppRequest, signal: AbortSignal): Promise<EppDecision> {
    this.requests.push(req);
    this.signals.push(signal);
    this.onEntered();
    const a = await this.answer(req, signal);
    if (a.kind === "refuse") return a;
    return {
      ...a,
      done: (served, status) => {
        this.reports.push([served, status]);
        this.onReported();
      },
    };
  }
}
