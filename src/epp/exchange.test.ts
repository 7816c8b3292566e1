// Pins the routed path of the endpoint picker protocol as Envoy drives it in FULL_DUPLEX_STREAMED mode:
// the destination header and envoy.lb metadata agree, the body goes back intact and in order after the
// headers, the response passes through unchanged, and the served endpoint reaches done().

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  replayEnvoyExchange,
  type StubAnswer,
  StubPicker,
  setHeaderValue,
  streamedChunks,
} from "../testing/envoy-ext-proc-client.js";
import type { EppRequest } from "./decision.js";
import { DESTINATION_HEADER, LB_NAMESPACE } from "./metadata.js";
import type { ProcessingResponse } from "./protos.js";
import { MAX_BODY_CHUNK_BYTES } from "./replies.js";
import { type EppServer, startEppServer } from "./server.js";

const POST = { ":method": "POST", ":path": "/v1/chat/completions", "content-type": "application/json" };

/** The destination list an answer's dynamic metadata carries. */
function metadataDestination(r: ProcessingResponse | undefined): string | undefined {
  return r?.dynamic_metadata?.fields?.[LB_NAMESPACE]?.structValue?.fields?.[DESTINATION_HEADER]?.stringValue;
}

const kinds = (replies: readonly ProcessingResponse[]) => replies.map((r) => r.response);

/** Routes to the first subset endpoint when there is a hint, else to a fixed pair. */
function honouringSubset(req: EppRequest): StubAnswer {
  const [endpoint, ...fallbacks] = req.subset ?? ["10.0.0.1:8000", "10.0.0.2:8000"];
  if (!endpoint)
    return { kind: "refuse", status: 503, code: "no_healthy_endpoint", message: "subset is empty" };
  return { kind: "route", endpoint, fallbacks };
}

describe("epp exchange: routed requests", () => {
  let picker: StubPicker;
  let answer: (req: EppRequest) => StubAnswer = honouringSubset;
  let epp: EppServer;
  let address: string;
  before(async () => {
    picker = new StubPicker((req) => answer(req));
    epp = await startEppServer({ host: "127.0.0.1", port: 0, picker, ready: () => true });
    address = `127.0.0.1:${epp.port}`;
  });
  after(() => epp.close());
  const fresh = (a: (req: EppRequest) => StubAnswer = honouringSubset) => {
    answer = a;
    picker.requests.length = 0;
    picker.reports.length = 0;
  };

  it("routes a one-chunk request: header and metadata agree, body back intact, served endpoint reported", async () => {
    fresh();
    const body = JSON.stringify({ model: "llama", messages: [{ role: "user", content: "hi" }] });
    const { replies, status } = await replayEnvoyExchange(
      address,
      { headers: { ...POST, "x-request-id": "req-1" }, body: [body] },
      { headers: { ":status": "200" }, served: "10.0.0.1:8000", body: ['{"id":"c1"}'] },
    );
    assert.equal(status.code, 0);
    assert.deepEqual(kinds(replies), [
      "request_headers",
      "request_body",
      "response_headers",
      "response_body",
    ]);
    const headersReply = replies[0];
    assert.equal(headersReply?.request_headers?.response?.clear_route_cache, true);
    assert.equal(setHeaderValue(headersReply, DESTINATION_HEADER), "10.0.0.1:8000");
    assert.equal(metadataDestination(headersReply), "10.0.0.1:8000,10.0.0.2:8000");
    assert.equal(setHeaderValue(headersReply, "content-length"), String(Buffer.byteLength(body)));
    assert.equal(
      setHeaderValue(headersReply, "x-request-id"),
      undefined,
      "the client's id is kept, not reset",
    );
    assert.deepEqual(
      streamedChunks(replies, "request").map((c) => [c.body.toString(), c.endOfStream]),
      [[body, true]],
    );
    assert.equal(picker.requests[0]?.body.toString(), body);
    assert.equal(picker.requests[0]?.headers[":path"], "/v1/chat/completions");
    assert.equal(picker.requests[0]?.headers["x-request-id"], "req-1");
    assert.equal(picker.requests[0]?.subset, null);
    assert.deepEqual(picker.reports, [["10.0.0.1:8000", 200]]);
  });

  it("streams: many request chunks go back in order in chunks of at most 64 KiB, SSE chunks pass through", async () => {
    fresh();
    const big = Buffer.alloc(150 * 1024, "x");
    const chunks = [Buffer.from('{"model":"llama","prompt":"'), big, Buffer.from('","stream":true}')];
    const sse = [
      'data: {"choices":[{"delta":{"content":"He"}}]}\n\n',
      'data: {"choices":[{"delta":{"content":"y"}}]}\n\n',
      "data: [DONE]\n\n",
    ];
    const { replies } = await replayEnvoyExchange(
      address,
      { headers: POST, body: chunks },
      {
        headers: { ":status": "200", "content-type": "text/event-stream" },
        served: "10.0.0.2:8000",
        body: sse,
      },
    );
    const sent = Buffer.concat(chunks);
    const back = streamedChunks(replies, "request");
    assert.ok(back.every((c) => c.body.length <= MAX_BODY_CHUNK_BYTES));
    assert.ok(back.length >= 3);
    assert.deepEqual(Buffer.concat(back.map((c) => c.body)), sent);
    assert.deepEqual(
      back.map((c) => c.endOfStream),
      [...back.slice(1).map(() => false), true],
    );
    assert.equal(setHeaderValue(replies[0], "content-length"), String(sent.length));
    assert.equal(replies[0]?.response, "request_headers", "headers are answered before any body chunk");
    assert.deepEqual(
      streamedChunks(replies, "response").map((c) => [c.body.toString(), c.endOfStream]),
      sse.map((s, i) => [s, i === sse.length - 1]),
    );
    assert.ok(kinds(replies).indexOf("response_headers") > kinds(replies).lastIndexOf("request_body"));
    assert.deepEqual(picker.requests[0]?.body, sent);
    assert.deepEqual(picker.reports, [["10.0.0.2:8000", 200]]);
  });

  it("hands the subset hint to the picker, and a picker honouring it routes inside it", async () => {
    fresh();
    const subset = ["10.1.0.5:8000", "10.1.0.6:8000"];
    const { replies } = await replayEnvoyExchange(
      address,
      { headers: POST, body: ["{}"], subset },
      { headers: { ":status": "200" }, served: "10.1.0.5:8000" },
    );
    assert.deepEqual(picker.requests[0]?.subset, subset);
    assert.equal(setHeaderValue(replies[0], DESTINATION_HEADER), "10.1.0.5:8000");
    assert.equal(metadataDestination(replies[0]), "10.1.0.5:8000,10.1.0.6:8000");
    assert.deepEqual(picker.reports, [["10.1.0.5:8000", 200]]);
  });

  it("drops fallbacks outside the subset or repeated, so header and metadata still start alike", async () => {
    fresh(() => ({
      kind: "route",
      endpoint: "10.1.0.5:8000",
      fallbacks: ["10.9.9.9:8000", "10.1.0.5:8000", "10.1.0.6:8000"],
    }));
    const { replies } = await replayEnvoyExchange(address, {
      headers: POST,
      body: ["{}"],
      subset: ["10.1.0.5:8000", "10.1.0.6:8000"],
    });
    assert.equal(metadataDestination(replies[0]), "10.1.0.5:8000,10.1.0.6:8000");
  });

  it("routes a request without a body (end_of_stream on the headers): headers answered alone", async () => {
    fresh();
    const { replies, status } = await replayEnvoyExchange(
      address,
      { headers: { ":method": "GET", ":path": "/v1/models" } },
      { headers: { ":status": "204" }, served: "10.0.0.1:8000" },
    );
    assert.equal(status.code, 0);
    assert.deepEqual(kinds(replies), ["request_headers", "response_headers"]);
    assert.equal(setHeaderValue(replies[0], DESTINATION_HEADER), "10.0.0.1:8000");
    assert.equal(setHeaderValue(replies[0], "content-length"), undefined);
    assert.equal(picker.requests[0]?.body.length, 0);
    assert.deepEqual(picker.reports, [["10.0.0.1:8000", 204]]);
  });

  it("generates an x-request-id when the client sent none, gives it to the picker and sets it", async () => {
    fresh();
    const { replies } = await replayEnvoyExchange(address, { headers: POST, body: ["{}"] });
    const id = picker.requests[0]?.headers["x-request-id"];
    assert.match(id ?? "", /^[0-9a-f-]{36}$/);
    assert.equal(setHeaderValue(replies[0], "x-request-id"), id);
  });

  it("sets the picker's extra headers, but never lets them override the destination", async () => {
    fresh(() => ({
      kind: "route",
      endpoint: "10.0.0.1:8000",
      fallbacks: [],
      headers: { "X-Gateway-Model-Name-Rewrite": "llama-v2", [DESTINATION_HEADER]: "10.6.6.6:1" },
    }));
    const { replies } = await replayEnvoyExchange(address, { headers: POST, body: ["{}"] });
    assert.equal(setHeaderValue(replies[0], "x-gateway-model-name-rewrite"), "llama-v2");
    assert.equal(setHeaderValue(replies[0], DESTINATION_HEADER), "10.0.0.1:8000");
    const set = replies[0]?.request_headers?.response?.header_mutation?.set_headers ?? [];
    assert.equal(set.filter((o) => o.header.key === DESTINATION_HEADER).length, 1);
    assert.ok(
      set.every((o) => o.append_action === 2),
      "every header overwrites (OVERWRITE_IF_EXISTS_OR_ADD)",
    );
  });

  it("answers request and response trailers in headers → body → trailers order", async () => {
    fresh();
    const { replies } = await replayEnvoyExchange(
      address,
      { headers: POST, body: ["{", "}"], trailers: { "grpc-status": "0" } },
      { headers: { ":status": "200" }, served: "10.0.0.1:8000", body: ["ok"], trailers: { "x-t": "1" } },
    );
    assert.deepEqual(kinds(replies), [
      "request_headers",
      "request_body",
      "request_trailers",
      "response_headers",
      "response_body",
      "response_trailers",
    ]);
    assert.deepEqual(
      streamedChunks(replies, "request").map((c) => [c.body.toString(), c.endOfStream]),
      [["{}", false]],
      "end_of_stream stays with the trailers",
    );
    assert.deepEqual(
      streamedChunks(replies, "response").map((c) => c.endOfStream),
      [false],
    );
  });
});
