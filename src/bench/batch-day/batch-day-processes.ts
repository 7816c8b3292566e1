// The batch-day bench's processes: `tokengate gateway` on the config folder (started, killed, started
// again on one port), the split pools' simulated engines in one `tokengate sim --fleet` process, their
// config folder, and resetting or reading the engines between runs.

import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parse, stringify } from "yaml";
import type { FleetSpec } from "../../sim/fleet.js";
import type { RequestTiming } from "../../sim/request-timings.js";
import { fleetDocument } from "../harness/runner.js";
import { splitTopology } from "../scenarios/support-topologies.js";
import { type Child, startTokengate } from "../services/child-process.js";
import { favorRouter, type PriorityMode } from "../services/router-priority.js";

/** The batch store's line lease in the bench (a dead gateway's lines return after it). */
export const LEASE_MS = 2000;
const GATEWAY_READY = /listening on http:\/\/[\d.]+:\d+/;

/** `tokengate gateway` on the config folder, always on the same port; started, killed, started again. */
export class GatewayProcess {
  private child: Child | null = null;
  readonly logFiles: string[] = [];
  priority: PriorityMode = "none";

  constructor(
    private readonly configDir: string,
    private readonly port: number,
    private readonly work: string,
    private readonly enginesPid: number,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts it (without waiting for /ready); its request log goes to gateway-<label>.log. */
  async start(label: string): Promise<void> {
    const logFile = join(this.work, `gateway-${label}.log`);
    this.logFiles.push(logFile);
    const args = ["gateway", "--config", this.configDir, "--port", String(this.port), "--log", logFile];
    this.child = await startTokengate(
      [...args, "--history", join(this.work, "history.db"), "--no-watch"],
      GATEWAY_READY,
      30_000,
    );
    this.priority = favorRouter(this.child.pid, [this.enginesPid]);
  }

  /** The request logs of the starts whose label begins with `prefix`. */
  logsOf(prefix: string): string[] {
    return this.logFiles.filter((f) => f.includes(`gateway-${prefix}`));
  }

  /** Until /ready answers 200. */
  async waitReady(ms = 30_000): Promise<void> {
    const end = performance.now() + ms;
    for (;;) {
      try {
        const res = await fetch(`${this.url}/ready`);
        await res.arrayBuffer();
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      if (performance.now() > end) throw new Error("the gateway did not become ready");
      await sleep(20);
    }
  }

  /** Sends `signal` and resolves once the process is gone. */
  async kill(signal: NodeJS.Signals): Promise<void> {
    const c = this.child;
    this.child = null;
    if (!c || c.proc.exitCode !== null || c.proc.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => c.proc.once("exit", () => resolve()));
    c.proc.kill(signal);
    await gone;
  }

  async stop(): Promise<void> {
    const c = this.child;
    this.child = null;
    await c?.stop();
  }
}

export interface Fleet {
  readonly child: Child;
  readonly urls: string[];
  readonly byGroup: Record<string, string[]>;
  stop(): Promise<void>;
}

/** The topology's engines as `tokengate sim --fleet` (as the scenario runner starts them). */
export async function startFleet(spec: FleetSpec, work: string): Promise<Fleet> {
  const file = join(work, "fleet.yaml");
  writeFileSync(file, stringify(fleetDocument(spec)));
  const child = await startTokengate(["sim", "--fleet", file], /simulated replica\(s\)/, 30_000);
  const urls = [...child.output().matchAll(/^\s+(\S+)\s+(http:\/\/[\d.]+:\d+)/gm)].map((m) => m[2]!);
  const byGroup: Record<string, string[]> = {};
  let i = 0;
  for (const g of spec.groups) {
    byGroup[g.name] = urls.slice(i, i + g.replicas);
    i += g.replicas;
  }
  if (i !== urls.length)
    throw new Error(`batch-day: expected ${i} engines, the fleet printed ${urls.length}`);
  return { child, urls, byGroup, stop: () => child.stop() };
}

/** The split topology's config, with the Batch API on over `dbPath` and short leases. */
export function writeConfig(dir: string, dbPath: string, byGroup: Record<string, string[]>): void {
  const files = splitTopology.gatewayConfig(byGroup);
  const gateway = parse(files["gateway.yaml"]!) as { spec: Record<string, unknown> };
  gateway.spec.batches = { path: dbPath, leaseMs: LEASE_MS };
  files["gateway.yaml"] = stringify(gateway, { lineWidth: 0 });
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
}

export async function resetEngines(urls: readonly string[]): Promise<void> {
  await Promise.all(urls.map((u) => fetch(`${u}/admin/reset`, { method: "POST" }).then((r) => r.text())));
}

export async function engineTimings(urls: readonly string[]): Promise<RequestTiming[]> {
  const out: RequestTiming[] = [];
  for (const u of urls) out.push(...((await (await fetch(`${u}/admin/requests`)).json()) as RequestTiming[]));
  return out;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
