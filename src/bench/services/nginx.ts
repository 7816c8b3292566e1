// A real nginx in front of the engines, as the baseline router for the overhead benchmark: generated
// config in a temp dir, run in the foreground as a child process, stopped and cleaned up by the caller.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { accessSync, chmodSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { reapOnExit } from "./child-process.js";

/**
 * `least_conn`; `round_robin` (nginx's default); `random`; `prefix_hash`: consistent hashing on the
 * X-Prefix-Group request header, so one prefix group always reaches one engine.
 */
export type NginxBalance = "least_conn" | "round_robin" | "random" | "prefix_hash";

const BALANCE_DIRECTIVE: Record<NginxBalance, string | null> = {
  least_conn: "least_conn;",
  round_robin: null,
  random: "random;",
  prefix_hash: "hash $http_x_prefix_group consistent;",
};

export interface NginxOptions {
  /** Engine base URLs, `http://127.0.0.1:8001`. */
  upstreams: string[];
  balance: NginxBalance;
  /** Listen port; a free one is picked when absent. */
  port?: number;
  /** Path of the binary; default: found by `findNginx()`. */
  binary?: string;
}

export interface RunningNginx {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export type NginxStart = RunningNginx | { skipped: string };

/** Where nginx is looked for: PATH, then the sbin directories distributions install it in. */
export function nginxSearchDirs(): string[] {
  const dirs = (process.env.PATH ?? "").split(delimiter).filter(Boolean);
  return [...dirs, "/usr/sbin", "/usr/local/sbin", "/usr/local/nginx/sbin"];
}

/** The nginx binary found in `dirs`, or null. */
export function findNginx(dirs: string[] = nginxSearchDirs()): string | null {
  for (const dir of dirs) {
    const path = join(dir, "nginx");
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Starts nginx balancing over `upstreams` and resolves once its port accepts connections.
 * Returns `{ skipped }` when nginx is not installed; throws when it is installed but fails to start.
 * @example
 * const n = await startNginx({ upstreams: [a.url, b.url], balance: "least_conn" });
 * if ("skipped" in n) console.log(n.skipped); else { ...; await n.stop(); }
 */
export async function startNginx(opts: NginxOptions): Promise<NginxStart> {
  const binary = opts.binary ?? findNginx();
  if (!binary) return { skipped: "nginx not installed" };
  const port = opts.port ?? (await freePort());
  const prefix = mkdtempSync(join(tmpdir(), "tokengate-nginx-"));
  // As root, nginx's workers run as an unprivileged user that must be able to enter the prefix.
  chmodSync(prefix, 0o755);
  const conf = join(prefix, "nginx.conf");
  writeFileSync(conf, nginxConf({ ...opts, port, prefix, without: missingModules(binary) }));
  // SIGTERM at exit: the master takes its workers down with it (a SIGKILLed master leaves them serving).
  const proc = reapOnExit(
    spawn(binary, ["-p", `${prefix}/`, "-c", conf, "-e", join(prefix, "error.log")], {
      stdio: ["ignore", "pipe", "pipe"],
    }),
    "SIGTERM",
  );
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  proc.stderr!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const cleanup = () => rmSync(prefix, { recursive: true, force: true });
  try {
    await waitForPort(proc, port, 10_000);
  } catch (err) {
    await kill(proc);
    const log = readLog(join(prefix, "error.log"));
    cleanup();
    throw new Error(`nginx did not start: ${(err as Error).message}\n${out}${log}`);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    pid: proc.pid!,
    stop: async () => {
      await kill(proc);
      cleanup();
    },
  };
}

interface ConfInput extends NginxOptions {
  port: number;
  prefix: string;
  /** Temp-path modules this build lacks (their directives would be unknown). */
  without: Set<string>;
}

/** The generated nginx.conf: one worker, no access log, streaming proxied without buffering. */
export function nginxConf(c: ConfInput): string {
  const servers = c.upstreams.map((u) => {
    const { hostname, port } = new URL(u);
    return `    server ${hostname}:${port} max_fails=0;`;
  });
  // Debian's build puts temp dirs under /var/lib/nginx, which a non-root user cannot create.
  const temps = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .filter((m) => !c.without.has(m))
    .map((m) => `  ${m}_temp_path ${join(c.prefix, `${m}_temp`)};`);
  return `daemon off;
worker_processes 1;
pid ${join(c.prefix, "nginx.pid")};
error_log ${join(c.prefix, "error.log")} warn;
events { worker_connections 8192; }
http {
  access_log off;
${temps.join("\n")}
  upstream llm {
${BALANCE_DIRECTIVE[c.balance] ? `    ${BALANCE_DIRECTIVE[c.balance]}\n` : ""}${servers.join("\n")}
    keepalive 256;
  }
  server {
    listen 127.0.0.1:${c.port};
    location / {
      proxy_pass http://llm;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_read_timeout 600s;
      client_max_body_size 64m;
    }
  }
}
`;
}

/** The benchmark harness's nginx-backed routers (issue 4), by their names there. */
const BASELINES: Record<string, NginxBalance> = {
  "least-request": "least_conn",
  "round-robin": "round_robin",
  random: "random",
  "prefix-sticky": "prefix_hash",
};

/** Starts the nginx baseline router named `router` (`least-request`, `round-robin`, `random`, `prefix-sticky`). */
export function startBaseline(router: string, upstreams: string[]): Promise<NginxStart> {
  const balance = BASELINES[router];
  if (!balance) throw new Error(`no nginx baseline router named "${router}"`);
  return startNginx({ upstreams, balance });
}

/** A port that was free a moment ago (bound to 0, read, closed). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

function missingModules(binary: string): Set<string> {
  // `nginx -V` prints its configure arguments on stderr.
  const v = spawnSync(binary, ["-V"], { encoding: "utf8" }).stderr ?? "";
  return new Set(["fastcgi", "uwsgi", "scgi"].filter((m) => v.includes(`--without-http_${m}_module`)));
}

async function waitForPort(proc: ChildProcess, port: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`exited with ${proc.exitCode ?? proc.signalCode}`);
    }
    if (await connects(port)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`port ${port} did not answer within ${timeoutMs} ms`);
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/** SIGTERM is nginx's fast shutdown; the master takes its worker down with it. */
function kill(proc: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    const force = setTimeout(() => proc.kill("SIGKILL"), 5000);
    proc.once("exit", () => {
      clearTimeout(force);
      resolve();
    });
    proc.kill("SIGTERM");
  });
}

function readLog(path: string): string {
  try {
    return readFileSync(path, "utf8").split("\n").slice(-20).join("\n");
  } catch {
    return "";
  }
}
