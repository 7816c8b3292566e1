import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { errorEvent, refusalEvent } from "./error-events.js";

const parse = (event: string) => {
  assert.match(event, /^data: .*\n\n$/s);
  return JSON.parse(event.slice(6)).error;
};

describe("stream error events", () => {
  it("passes an engine's refusal on with its own error object and the trace id", () => {
    const body = Buffer.from(
      JSON.stringify({
        error: { message: "too long", type: "BadRequestError", param: "messages", code: 400 },
      }),
    );
    assert.deepEqual(parse(refusalEvent(400, body, "t-1")), {
      message: "too long",
      type: "BadRequestError",
      param: "messages",
      code: 400,
      trace_id: "t-1",
    });
  });

  it("takes an older vLLM's top-level error object, and text that is not JSON as the message", () => {
    const old = Buffer.from(
      JSON.stringify({ object: "error", message: "bad", type: "BadRequestError", code: 400 }),
    );
    assert.deepEqual(parse(refusalEvent(400, old, "t-2")), {
      message: "bad",
      type: "BadRequestError",
      param: null,
      code: 400,
      trace_id: "t-2",
    });
    const text = parse(refusalEvent(422, Buffer.from("nope"), "t-3"));
    assert.equal(text.message, "nope");
    assert.equal(text.code, 422);
    assert.equal(parse(refusalEvent(404, Buffer.alloc(0), "t-4")).message, "HTTP 404");
  });

  it("says a broken stream's reason as an upstream_error", () => {
    assert.deepEqual(parse(errorEvent("the engine stalled", "t-5")), {
      message: "the engine stalled",
      type: "server_error",
      param: null,
      code: "upstream_error",
      trace_id: "t-5",
    });
  });
});
