// Pins how the endpoint picker protocol ends requests and streams: a refusal as an ImmediateResponse with
// the OpenAI error body, an oversized body as 413, a failing picker as 500, and a cancelled or early-ended
// stream as one done(null, null) with the picker's signal aborted.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import {
  EnvoyExtProcStream,
  replayEnvoyExchange,
  type StubAnswer,
  StubPicker,
  setHeaderValue,
} from "../testing/envoy-ext-proc-client.js";
import type { EppDecision, EppPicker, EppRequest } from "./decision.js";
import { BodySendMode, type ProcessingResponse } from "./protos.js";
import { type EppServerOptions, startEppServer } from "./server.js";

const POST = { ":method": "POST", ":path": "/v1/completions" };
const ROUTE: StubAnswer = { kind: "route", endpoint: "10.0.0.1:8000", fallbacks: [] };

async function withEpp(
  picker: EppPicker,
  run: (address: string) => Promise<void>,
  options: Partial<EppServerOptions> = {},
): Promise<void> {
  const epp = await startEppServer({ host: "127.0.0.1", port: 0, picker, ready: () => true, ...options });
  try {
    await run(`127.0.0.1:${epp.port}`);
  } finally {
    await epp.close();
  }
}

/** The one ImmediateResponse of a replay: status, parsed JSON body and headers. */
function immediate(replies: readonly ProcessingResponse[]) {
  assert.equal(replies.length, 1, "an ImmediateResponse is the only answer");
  const r = replies[0]!;
  const ir = r.immediate_response;
  assert.ok(ir, "an ImmediateResponse");
  return {
    status: ir.status.code,
    body: JSON.parse(ir.body ?? "") as { error: Record<string, unknown> },
    header: (name: string) => setHeaderValue(r, name),
  };
}

describe("epp exchange: refusals and failures", () => {
  it("refuses with 503 as an ImmediateResponse carrying the OpenAI-shaped JSON error", async () => {
    const picker = new StubPicker((req: EppRequest) =>
      req.subset?.length === 0
        ? {
            kind: "refuse",
            status: 503,
            code: "no_healthy_endpoint",
            message: "no endpoint in the subset is ready",
          }
        : ROUTE,
    );
    await withEpp(picker, async (address) => {
      const { replies, status } = await replayEnvoyExchange(address, {
        headers: POST,
        body: ["{}"],
        subset: [],
      });
      assert.equal(status.code, grpc.status.OK);
      const r = immediate(replies);
      assert.equal(r.status, 503);
      assert.deepEqual(r.body, {
        error: {
          message: "no endpoint in the subset is ready",
          type: "service_unavailable_error",
          code: "no_healthy_endpoint",
        },
      });
      assert.equal(r.header("content-type"), "application/json");
      assert.equal(r.header("retry-after"), undefined);
    });
  });

  it("refuses with 429 and a retry-after rounded up to whole seconds", async () => {
    const picker = new StubPicker(() => ({
      kind: "refuse",
      status: 429,
      code: "queue_full",
      message: "request evicted by flow control",
      retryAfterSeconds: 1.2,
    }));
    await withEpp(picker, async (address) => {
      const r = immediate((await replayEnvoyExchange(address, { headers: POST, body: ["{}"] })).replies);
      assert.equal(r.status, 429);
      assert.equal(r.body.error.type, "rate_limit_error");
      assert.equal(r.body.error.code, "queue_full");
      assert.equal(r.header("retry-after"), "2");
    });
  });

  it("answers 413 once the buffered body passes the cap, without asking the picker", async () => {
    const picker = new StubPicker(() => ROUTE);
    await withEpp(
      picker,
      async (address) => {
        const body = ["a".repeat(600), "b".repeat(600)];
        const r = immediate((await replayEnvoyExchange(address, { headers: POST, body })).replies);
        assert.equal(r.status, 413);
        assert.equal(r.body.error.code, "request_too_large");
        assert.match(String(r.body.error.message), /1000 bytes/);
        assert.equal(picker.requests.length, 0);
      },
      { maxBodyBytes: 1000 },
    );
  });

  it("answers 500 with the picker's error when decide() throws, and ends the stream", async () => {
    const picker = new StubPicker(() => {
      throw new Error("route table not loaded");
    });
    await withEpp(picker, async (address) => {
      const { replies, status } = await replayEnvoyExchange(address, { headers: POST, body: ["{}"] });
      const r = immediate(replies);
      assert.equal(r.status, 500);
      assert.equal(r.body.error.type, "server_error");
      assert.equal(r.body.error.code, "internal_error");
      assert.match(String(r.body.error.message), /endpoint picker failed: route table not loaded/);
      assert.equal(status.code, grpc.status.OK);
    });
  });

  it("answers 500 when decide() resolves with no decision at all", async () => {
    const picker: EppPicker = { decide: async () => undefined as unknown as EppDecision };
    await withEpp(picker, async (address) => {
      const r = immediate((await replayEnvoyExchange(address, { headers: POST })).replies);
      assert.equal(r.status, 500);
      assert.match(String(r.body.error.message), /returned no decision/);
    });
  });

  it("answers 500 when the picker routes outside the subset hint, and reports the route unserved", async () => {
    const picker = new StubPicker(() => ROUTE);
    await withEpp(picker, async (address) => {
      const { replies } = await replayEnvoyExchange(address, {
        headers: POST,
        body: ["{}"],
        subset: ["10.2.0.1:80"],
      });
      assert.equal(immediate(replies).status, 500);
      assert.match(String(immediate(replies).body.error.message), /outside the proxy's subset hint/);
      assert.deepEqual(picker.reports, [[null, null]]);
    });
  });

  it("aborts the picker's signal when Envoy cancels while it decides, and reports the late route once", async () => {
    const picker = new StubPicker(
      (_req, signal) =>
        new Promise<StubAnswer>((resolve) => signal.addEventListener("abort", () => resolve(ROUTE))),
    );
    await withEpp(picker, async (address) => {
      const s = new EnvoyExtProcStream(address);
      s.sendRequestHeaders(POST, false);
      s.sendRequestBody("{}", true);
      await picker.entered;
      s.cancel();
      assert.equal((await s.status).code, grpc.status.CANCELLED);
      await picker.reported;
      assert.equal(picker.signals[0]?.aborted, true);
    });
    assert.deepEqual(picker.reports, [[null, null]], "done(null, null), once");
    assert.equal(picker.signals.length, 1);
  });

  it("reports done(null, null) once when Envoy cancels after routing, before any response headers", async () => {
    const picker = new StubPicker(() => ROUTE);
    await withEpp(picker, async (address) => {
      const s = new EnvoyExtProcStream(address);
      s.sendRequestHeaders(POST, false);
      s.sendRequestBody("{}", true);
      await s.readUntil((r) => !!r.request_body?.response?.body_mutation?.streamed_response?.end_of_stream);
      s.cancel();
      await picker.reported;
    });
    assert.deepEqual(picker.reports, [[null, null]]);
    assert.equal(picker.signals[0]?.aborted, false, "the decision was already made");
  });

  it("treats a half-close before the response as an early end: done(null, null) once", async () => {
    const picker = new StubPicker(() => ROUTE);
    await withEpp(picker, async (address) => {
      const { status } = await replayEnvoyExchange(address, { headers: POST, body: ["{}"] });
      assert.equal(status.code, grpc.status.OK);
      await picker.reported;
    });
    assert.deepEqual(picker.reports, [[null, null]]);
  });

  it("aborts a half-closed stream whose body never ended, without asking the picker", async () => {
    const picker = new StubPicker(() => ROUTE);
    await withEpp(picker, async (address) => {
      const s = new EnvoyExtProcStream(address);
      s.sendRequestHeaders(POST, false);
      s.sendRequestBody("{", false);
      s.halfClose();
      assert.equal((await s.status).code, grpc.status.OK);
      assert.deepEqual(s.replies, []);
    });
    assert.equal(picker.requests.length, 0);
  });

  it("ends the stream with INVALID_ARGUMENT when a body arrives before the headers", async () => {
    await withEpp(new StubPicker(() => ROUTE), async (address) => {
      const s = new EnvoyExtProcStream(address);
      s.sendRequestBody("{}", true);
      const status = await s.status;
      assert.equal(status.code, grpc.status.INVALID_ARGUMENT);
      assert.match(status.details, /request body chunk arrived while the exchange was at request-headers/);
    });
  });

  it("ends the stream with FAILED_PRECONDITION when Envoy is configured with BUFFERED bodies", async () => {
    await withEpp(new StubPicker(() => ROUTE), async (address) => {
      const s = new EnvoyExtProcStream(address, {
        request_body_mode: BodySendMode.BUFFERED,
        response_body_mode: BodySendMode.FULL_DUPLEX_STREAMED,
      });
      s.sendRequestHeaders(POST, false);
      const status = await s.status;
      assert.equal(status.code, grpc.status.FAILED_PRECONDITION);
      assert.match(status.details, /FULL_DUPLEX_STREAMED/);
    });
  });
});
