// Pins the wire details of the endpoint picker protocol that the exchange tests take for granted: header
// maps as Envoy sends them, the subset hint and served endpoint in metadata, and body chunking.

import assert from "node:assert/strict";
import { it } from "node:test";
import {
  headerRecord,
  readServed,
  readSubset,
  SERVED_KEY,
  SUBSET_KEY,
  SUBSET_NAMESPACE,
} from "./metadata.js";
import { bodyReplies, MAX_BODY_CHUNK_BYTES, refusalBody } from "./replies.js";

it("reads headers from raw_value (newer Envoys) or value (older), lower-cased, repeats joined", () => {
  const h = headerRecord({
    headers: [
      { key: ":path", raw_value: Buffer.from("/v1/models") },
      { key: "X-Tenant", value: "acme" },
      { key: "accept", raw_value: Buffer.from("a") },
      { key: "accept", value: "b" },
    ],
  });
  assert.deepEqual(h, { ":path": "/v1/models", "x-tenant": "acme", accept: "a, b" });
});

it("reads the subset hint as a list, a comma-separated string, or null when absent", () => {
  const md = (v: object) => ({ filter_metadata: { [SUBSET_NAMESPACE]: { fields: { [SUBSET_KEY]: v } } } });
  assert.deepEqual(
    readSubset(md({ listValue: { values: [{ stringValue: "1.1.1.1:80" }, { stringValue: "2.2.2.2:80" }] } })),
    ["1.1.1.1:80", "2.2.2.2:80"],
  );
  assert.deepEqual(
    readSubset(md({ listValue: { values: [] } })),
    [],
    "an empty hint is kept empty, not dropped",
  );
  assert.deepEqual(readSubset(md({ stringValue: "1.1.1.1:80, 2.2.2.2:80" })), ["1.1.1.1:80", "2.2.2.2:80"]);
  assert.equal(readSubset(null), null);
  assert.equal(readSubset({ filter_metadata: {} }), null);
});

it("reads the served endpoint from envoy.lb, its first entry if Envoy sent a list", () => {
  const md = (s: string) => ({
    filter_metadata: { "envoy.lb": { fields: { [SERVED_KEY]: { stringValue: s } } } },
  });
  assert.equal(readServed(md("10.0.0.1:8000")), "10.0.0.1:8000");
  assert.equal(readServed(md("10.0.0.1:8000,10.0.0.2:8000")), "10.0.0.1:8000");
  assert.equal(readServed(md("")), null);
  assert.equal(readServed(undefined), null);
});

it("cuts a body into chunks of at most 64 KiB, end_of_stream on the last only, one empty chunk for none", () => {
  const body = Buffer.alloc(2 * MAX_BODY_CHUNK_BYTES + 1, 7);
  const chunks = bodyReplies("request", body, true).map(
    (r) => r.request_body?.response?.body_mutation?.streamed_response,
  );
  assert.deepEqual(
    chunks.map((c) => [c?.body.length, c?.end_of_stream]),
    [
      [MAX_BODY_CHUNK_BYTES, false],
      [MAX_BODY_CHUNK_BYTES, false],
      [1, true],
    ],
  );
  const empty = bodyReplies("response", Buffer.alloc(0), true);
  assert.deepEqual(
    empty.map((r) => r.response_body?.response?.body_mutation?.streamed_response?.end_of_stream),
    [true],
  );
});

it("writes the error body with exactly message, type and code, the type following the status", () => {
  assert.deepEqual(JSON.parse(refusalBody({ status: 404, code: "model_not_found", message: "no model m" })), {
    error: { message: "no model m", type: "invalid_request_error", code: "model_not_found" },
  });
});
