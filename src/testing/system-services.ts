// Test fixture: the system programs some tests need and npm does not install — nginx (the benchmarks'
// baseline routers), redis-server (the Redis budget and batch stores), kubectl (rendering deploy/).
// A test that needs one it cannot find is skipped with one line that names the program and the command
// that installs it, and `npm test` ends with those lines (scripts/run-tests.mjs); `.ci/run` installs all
// three and runs everything.

import { spawnSync } from "node:child_process";
import { findNginx } from "../bench/services/nginx.js";
import { kubectlProblem } from "../deploy/render.js";

export type SystemService = "nginx" | "redis-server" | "kubectl";

/** How to install each on Debian, the project's machines (`.ci/run` runs the same). */
export const INSTALL: Readonly<Record<SystemService, string>> = {
  nginx: "apt-get install nginx",
  "redis-server": "apt-get install redis-server",
  kubectl: "apt-get install kubernetes-client",
};

const found = new Map<SystemService, string | null>();

/**
 * Why `service` cannot be used here, as a test's skip reason (`needs nginx: not installed — apt-get
 * install nginx-light`), or null when it can. Looked up once per process.
 */
export function missingService(service: SystemService): string | null {
  if (!found.has(service)) found.set(service, problemOf(service));
  const problem = found.get(service)!;
  return problem === null ? null : `needs ${service}: ${problem} — ${INSTALL[service]}`;
}

/** `{ skip }` for describe/it: the reason when any of `services` is missing, else false. */
export function skipWithout(...services: SystemService[]): { skip: string | false } {
  for (const s of services) {
    const why = missingService(s);
    if (why !== null) return { skip: why };
  }
  return { skip: false };
}

function problemOf(service: SystemService): string | null {
  switch (service) {
    case "nginx":
      return findNginx() === null ? "not installed" : null;
    case "redis-server": {
      const r = spawnSync("redis-server", ["--version"], { stdio: "ignore" });
      if (r.error)
        return (r.error as NodeJS.ErrnoException).code === "ENOENT" ? "not installed" : r.error.message;
      return r.status === 0 ? null : `redis-server --version exited with ${r.status}`;
    }
    case "kubectl": {
      const p = kubectlProblem(process.env.TOKENGATE_KUBECTL ?? "kubectl");
      return p === null ? null : p.endsWith("is not on PATH") ? "not installed" : p;
    }
  }
}
