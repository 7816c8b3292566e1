// A reference path for the overhead benchmark: the least a Node.js proxy on tokengate's own stack can
// do — a node:http server, an undici Pool per engine with keep-alive, the least-busy engine, each
// upstream chunk passed on with `res.write()` — and nothing else: no identity, profile, route, queue,
// picker, relay scan, log or metric. Whatever it adds over the direct path is the stack's price, the
// floor under any gateway written this way; tokengate's figure minus its figure is tokengate's own work.
//
// Run as a child process: `node bare-proxy.js <port> <engine URL>...`; it prints its URL when listening.

import { createServer } from "node:http";
import { pathToFileURL } from "node:url";
import { type Dispatcher, Pool } from "undici";

interface Upstream {
  pool: Pool;
  active: number;
}

export interface BareProxy {
  url: string;
  close(): Promise<void>;
}

export function startBareProxy(port: number, engines: string[]): Promise<BareProxy> {
  const upstreams: Upstream[] = engines.map((url) => ({
    pool: new Pool(url, { connections: 256, pipelining: 1 }),
    active: 0,
  }));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let up = upstreams[0]!;
      for (const u of upstreams) if (u.active < up.active) up = u;
      up.active++;
      let status = 0;
      let type = "application/json";
      let released = false;
      const release = () => {
        if (!released) up.active--;
        released = true;
      };
      const handler: Dispatcher.DispatchHandler = {
        // undici takes a handler without onRequestStart for one of the older API, and never calls it.
        onRequestStart() {},
        onResponseStart(_c, statusCode, headers) {
          status = statusCode;
          type = String(headers["content-type"] ?? type);
        },
        onResponseData(c, chunk) {
          if (!res.headersSent) res.writeHead(status, { "content-type": type });
          if (!res.write(chunk)) {
            c.pause();
            res.once("drain", () => c.resume());
          }
        },
        onResponseEnd() {
          release();
          if (!res.headersSent) res.writeHead(status, { "content-type": type });
          res.end();
        },
        onResponseError(_c, err) {
          release();
          if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
          res.end(res.headersSent ? undefined : String(err.message));
        },
      };
      up.pool.dispatch(
        {
          path: req.url ?? "/",
          method: "POST",
          headers: { "content-type": "application/json" },
          body: Buffer.concat(chunks),
          headersTimeout: 0,
          bodyTimeout: 0,
        },
        handler,
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  const close = async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await Promise.all(upstreams.map((u) => u.pool.close()));
  };
  return new Promise((resolve) => {
    server.listen(port, "127.0.0.1", () => {
      const a = server.address();
      resolve({ url: `http://127.0.0.1:${typeof a === "object" && a ? a.port : port}`, close });
    });
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [port, ...engines] = process.argv.slice(2);
  const proxy = await startBareProxy(Number(port ?? 0), engines);
  process.stdout.write(`bare proxy listening on ${proxy.url}\n`);
  process.on("SIGTERM", () => process.exit(0));
}
