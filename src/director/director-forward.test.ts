import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { targetOf, upstreamHeaders } from "./director-forward.js";

describe("the L7 door's headers and target", () => {
  it("passes the caller's headers on without hop-by-hop ones, those Connection names, Host or Content-Length", () => {
    const out = upstreamHeaders(
      {
        host: "director:8090",
        connection: "keep-alive, x-drop-me",
        "keep-alive": "timeout=5",
        "x-drop-me": "1",
        te: "trailers",
        "transfer-encoding": "chunked",
        "content-length": "42",
        "proxy-authorization": "Basic x",
        authorization: "Bearer sk-1",
        "x-ai-tenant": "acme",
        "set-cookie": ["a=1", "b=2"],
      },
      "trace-1",
    );
    assert.deepEqual(out, {
      authorization: "Bearer sk-1",
      "x-ai-tenant": "acme",
      "set-cookie": ["a=1", "b=2"],
      "x-ai-trace-id": "trace-1",
    });
  });

  it("keeps the caller's own trace id", () => {
    assert.equal(upstreamHeaders({ "x-ai-trace-id": "mine" }, "trace-1")["x-ai-trace-id"], "mine");
  });

  it("keeps a gateway URL's base path before the caller's path", () => {
    assert.deepEqual(targetOf("http://eu.example:8080", "/v1/chat/completions?x=1"), {
      origin: "http://eu.example:8080",
      path: "/v1/chat/completions?x=1",
    });
    assert.deepEqual(targetOf("https://gw.example/eu/", "/v1/completions"), {
      origin: "https://gw.example",
      path: "/eu/v1/completions",
    });
  });
});
