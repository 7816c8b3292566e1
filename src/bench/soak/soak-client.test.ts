import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { Agent } from "undici";
import { type SoakRequest, sendSoakRequest } from "./soak-client.js";

// A stand-in gateway: the prompt says what to answer.
const frame = (text: string) => `data: {"choices":[{"delta":{"content":"${text}"}}]}\n\n`;
let server: http.Server;
let url = "";
let closedEarly = 0;

before(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      const b = JSON.parse(body) as { stream: boolean; messages: { content: string }[] };
      const mode = b.messages[0]!.content;
      res.on("close", () => {
        if (!res.writableFinished) closedEarly++;
      });
      if (mode === "busy") {
        res.writeHead(503, { "content-type": "application/json" });
        res.end('{"error":{"message":"full","code":"upstream_overloaded"}}');
        return;
      }
      if (!b.stream) {
        const reply = () => {
          if (res.destroyed) return;
          res.writeHead(200, { "content-type": "application/json", "x-ai-endpoint": "e1" });
          res.end('{"choices":[{"message":{"content":"hi"}}]}');
        };
        if (mode === "slow") setTimeout(reply, 300);
        else reply();
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "x-ai-endpoint": "e2" });
      let i = 0;
      const tick = setInterval(() => {
        if (res.destroyed) return clearInterval(tick);
        if (i < 5) res.write(frame(`t${i++}`));
        else {
          clearInterval(tick);
          if (mode === "broken") res.end('data: {"error":{"message":"x","code":"upstream_error"}}\n\n');
          else if (mode === "cut") res.end();
          else res.end("data: [DONE]\n\n");
        }
      }, 5);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

const agent = new Agent({ connections: 8 });
after(() => agent.close());
const req = (mode: string, stream: boolean, cancel: SoakRequest["cancel"] = null): SoakRequest => ({
  seq: 7,
  stream,
  cancel,
  body: { model: "m", messages: [{ role: "user", content: mode }], max_tokens: 5 },
});
const send = (r: SoakRequest, timeoutMs = 5000) =>
  sendSoakRequest(url, r, { agent, originMs: performance.now(), timeoutMs });

describe("soak client", () => {
  it("a stream to [DONE]: started, its endpoint and frames, no error", async () => {
    const o = await send(req("ok", true));
    assert.equal(o.error, null);
    assert.equal(o.started, true);
    assert.equal(o.endpoint, "e2");
    assert.equal(o.contentFrames, 5);
    assert.ok(o.ttftMs > 0);
    assert.equal(o.traceId, "soak-7");
    assert.ok(o.endMs >= o.startMs);
  });

  it("an error event, a missing [DONE] and an error reply are failures with their codes", async () => {
    const broken = await send(req("broken", true));
    assert.deepEqual([broken.error?.code, broken.error?.phase], ["upstream_error", "mid_stream"]);
    const cut = await send(req("cut", true));
    assert.deepEqual([cut.error?.code, cut.error?.phase], ["no_done", "mid_stream"]);
    const busy = await send(req("busy", false));
    assert.deepEqual(
      [busy.status, busy.error?.code, busy.error?.phase],
      [503, "upstream_overloaded", "reply"],
    );
    assert.equal(busy.started, false);
  });

  it("cancels on purpose: a stream after n frames, a reply before it comes; neither is a failure", async () => {
    const before = closedEarly;
    const s = await send(req("ok", true, { afterFrames: 2 }));
    assert.equal(s.cancelled, true);
    assert.equal(s.error, null);
    assert.equal(s.contentFrames, 2);
    const r = await send(req("slow", false, { afterMs: 20 }));
    assert.equal(r.cancelled, true);
    assert.equal(r.error, null);
    await new Promise((res) => setTimeout(res, 50));
    assert.equal(closedEarly - before, 2, "the server saw both connections go");
    // A cancel planned after the reply cancels nothing.
    const late = await send(req("ok", false, { afterMs: 2000 }));
    assert.equal(late.cancelled, false);
    assert.equal(late.error, null);
  });

  it("a request past its own timeout is a client_timeout failure, not a cancel", async () => {
    const o = await send(req("slow", false), 30);
    assert.equal(o.cancelled, false);
    assert.equal(o.error?.code, "client_timeout");
  });
});
