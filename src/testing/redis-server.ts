// Test fixture: a real redis-server on a free loopback port, no persistence, started and stopped by the
// test (`.ci/run` installs Debian's redis-server). `stop()` then `start()` again is Redis going away and
// coming back on the same port.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createConnection } from "node:net";
import { freePort } from "../bench/nginx.js";

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Why Redis tests cannot run here (no redis-server on PATH), or null. */
export function noRedis(): string | null {
  const r = spawnSync("redis-server", ["--version"], { stdio: "ignore" });
  return r.error || r.status !== 0
    ? "redis-server is not installed (.ci/run installs it: apt-get install redis-server)"
    : null;
}

export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    port,
    start: async () => {
      child = spawn(
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
        { stdio: "ignore" },
      );
      for (const until = Date.now() + 10_000; Date.now() < until; ) {
        if (await answers(port)) return;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`redis-server did not listen on ${port}`);
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
