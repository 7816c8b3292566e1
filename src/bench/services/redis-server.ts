// A real redis-server on a free loopback port, no persistence, started and stopped by its user: the budget
// bench (`npm run bench`, shipped in the package, so it lives here and not among the test fixtures) and
// the tests (`.ci/run` installs Debian's redis-server). `stop()` then `start()` again is Redis going away
// and coming back on the same port.

import { type ChildProcess, spawn } from "node:child_process";
import { createConnection } from "node:net";
import { reapOnExit } from "./child-process.js";
import { freePort } from "./nginx.js";

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    port,
    start: async () => {
      let out = "";
      const c = reapOnExit(
        spawn(
          "redis-server",
          [
            "--port",
            String(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--protected-mode",
            "no",
          ],
          { stdio: ["ignore", "pipe", "pipe"] },
        ),
      );
      child = c;
      c.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
      });
      c.stderr!.on("data", (d: Buffer) => {
        out += d.toString();
      });
      let failed: Error | null = null;
      c.once("error", (err) => {
        failed = new Error(`redis-server could not start: ${err.message}`);
      });
      c.once("exit", (code, signal) => {
        failed ??= new Error(
          `redis-server exited with ${code ?? signal}:\n${out.split("\n").slice(-20).join("\n")}`,
        );
      });
      // Generous: a loaded two-core machine may take seconds to start it; an exit fails at once.
      for (const until = Date.now() + 30_000; Date.now() < until; ) {
        if (failed) throw failed;
        if (await answers(port)) return;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`redis-server did not listen on ${port} within 30 s:\n${out}`);
    },
    stop: async () => {
      const c = child;
      child = null;
      if (!c || c.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        c.once("exit", () => resolve());
        c.kill("SIGKILL");
      });
    },
  };
  await server.start();
  return server;
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ port, host: "127.0.0.1" });
    s.once("connect", () => {
      s.write("PING\r\n");
      s.once("data", (d) => {
        s.destroy();
        resolve(d.toString().startsWith("+PONG"));
      });
    });
    s.once("error", () => resolve(false));
  });
}
