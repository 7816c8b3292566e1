import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { countContentFrames, LeanClient } from "./lean-client.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const frame = (content: string) =>
  `data: {"choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}}}]}\n\n`;

describe("lean client", () => {
  let server: http.Server;
  let base = "";
  /** Client ports seen per `?seen=<tag>` (a late request of an earlier test cannot count in a later one). */
  const seen = new Map<string, Set<number>>();
  const portsSeen = (tag: string) => seen.get(tag)?.size ?? 0;
  before(async () => {
    server = http.createServer((req, res) => {
      const [path, query] = (req.url ?? "").split("?seen=");
      if (query) (seen.get(query) ?? seen.set(query, new Set()).get(query)!).add(req.socket.remotePort!);
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", async () => {
        const url = path ?? "";
        if (url === "/json") {
          res.writeHead(200, { "content-type": "application/json" }).end(body);
        } else if (url === "/refuse") {
          res.writeHead(429, { "content-type": "application/json" }).end('{"error":{"code":"busy"}}');
        } else if (url === "/close") {
          res.writeHead(200, { connection: "close", "content-length": "2" }).end("ok");
        } else if (url === "/stream" || url === "/no-done" || url === "/error-event") {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(frame(""));
          await sleep(20);
          // A frame split mid-key across two writes (two chunks, likely two reads).
          const f = frame("Hel");
          res.write(f.slice(0, 40));
          await sleep(20);
          res.write(f.slice(40));
          for (const t of ["lo", ",", " world"]) res.write(frame(t));
          if (url === "/error-event") res.write('data: {"error":{"message":"engine died"}}\n\n');
          if (url !== "/no-done") res.write("data: [DONE]\n\n");
          res.addTrailers({ "server-timing": "queue;dur=1" });
          res.end();
        } else if (url === "/hang-up") {
          res.socket?.destroy();
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it("counts frames with non-empty generated text, chat or completion", () => {
    const data = Buffer.from(
      `${frame("")}${frame("a")}${frame('"quoted"')}data: {"choices":[{"text":"b"}]}\n\ndata: {"choices":[{"text":""}]}\n\n`,
    );
    assert.equal(countContentFrames(data), 3);
  });

  it("reads Content-Length replies and reuses one keep-alive connection", async () => {
    const c = new LeanClient(base, 4);
    for (let i = 0; i < 5; i++) {
      const r = await c.post("/json?seen=reuse", JSON.stringify({ i, text: "ü" }), false);
      assert.equal(r.error, null);
      assert.equal(r.status, 200);
      assert.equal(r.bytes, Buffer.byteLength(JSON.stringify({ i, text: "ü" })));
      assert.ok(r.ms > 0 && Number.isNaN(r.ttftMs));
    }
    assert.equal(portsSeen("reuse"), 1);
    await c.close();
  });

  it("de-chunks a stream, times its first content frame and counts its frames, trailers and all", async () => {
    const c = new LeanClient(base, 2);
    const r = await c.post("/stream", "{}", true);
    assert.equal(r.error, null);
    assert.equal(r.contentFrames, 4);
    assert.ok(r.ttftMs >= 35, `the first content frame came after the split, ${r.ttftMs} ms`);
    assert.ok(r.ttftMs <= r.e2eMs);
    // The connection is reusable after the trailers.
    assert.equal((await c.post("/json", "{}", false)).error, null);
    await c.close();
  });

  it("reports a stream without [DONE], an error event and an HTTP error as errors", async () => {
    const c = new LeanClient(base, 2);
    assert.match((await c.post("/no-done", "{}", true)).error ?? "", /without \[DONE\]/);
    assert.match((await c.post("/error-event", "{}", true)).error ?? "", /engine died/);
    const refused = await c.post("/refuse", "{}", false);
    assert.equal(refused.status, 429);
    assert.match(refused.error ?? "", /HTTP 429/);
    await c.close();
  });

  it("answers requests still outstanding at close with an error", async () => {
    const c = new LeanClient(base, 1);
    const running = c.post("/stream", "{}", true);
    const queued = c.post("/stream", "{}", true);
    await sleep(5);
    await c.close();
    assert.equal((await running).error, "client closed");
    assert.equal((await queued).error, "client closed");
  });

  it("queues past its connection limit, and replaces connections that close or fail", async () => {
    const c = new LeanClient(base, 2);
    const rs = await Promise.all(Array.from({ length: 6 }, () => c.post("/stream?seen=queue", "{}", true)));
    for (const r of rs) assert.equal(r.error, null);
    assert.equal(portsSeen("queue"), 2, "six streams on two connections");
    assert.equal((await c.post("/close", "{}", false)).error, null);
    const gone = await c.post("/hang-up", "{}", false);
    assert.match(gone.error ?? "", /closed|ECONNRESET/);
    assert.equal((await c.post("/json", "{}", false)).error, null, "a fresh connection after both");
    await c.close();
  });
});
