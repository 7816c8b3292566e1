// The multi-region bench's processes: each region's simulated engines (its own `tokengate sim --fleet`),
// its `tokengate gateway` on its own config folder (`region.name` set, one pool, the alias `chat`), the
// `tokengate director` in front (a RegionDirector document), and the faults put on a region's engines
// (POST /admin/faults) or cleared (DELETE).

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { stringify } from "yaml";
import { parseDirectorConfig } from "../../director/director-config.js";
import type { RegionState } from "../../director/director-types.js";
import type { FaultConfig } from "../../sim/faults.js";
import { fleetDocument } from "../harness/runner.js";
import { fleetOf, replicaGroup } from "../scenarios/fleet-group.js";
import {
  gatewayConfigDoc,
  inferencePoolDoc,
  inferenceRouteDoc,
  yamlDocuments,
} from "../scenarios/gateway-yaml.js";
import { type Child, startTokengate } from "../services/child-process.js";
import {
  ENGINE_MODEL,
  ENGINE_PROFILE,
  ENGINES_PER_REGION,
  LATENCY_MS,
  MODEL_ALIAS,
  type MultiRegionSettings,
  RESIDENCY,
  SESSION_HEADER,
} from "./multi-region-scenario.js";

const LISTENING = /listening on (http:\/\/[\d.]+:\d+)/;

/** One region's engines: a `tokengate sim --fleet` child of two replicas. */
export interface RegionEngines {
  readonly region: string;
  readonly child: Child;
  readonly urls: readonly string[];
  readonly group: ReturnType<typeof replicaGroup>;
}

export async function startRegionEngines(region: string, work: string, seed: number): Promise<RegionEngines> {
  const group = replicaGroup(region, ENGINES_PER_REGION, ENGINE_PROFILE, ENGINE_MODEL);
  const fleet = { ...fleetOf(`multi-region-${region}`, [group]), seed };
  const file = join(work, `fleet-${region}.yaml`);
  writeFileSync(file, stringify(fleetDocument(fleet)));
  const child = await startTokengate(["sim", "--fleet", file], /simulated replica\(s\)/, 30_000);
  const urls = [...child.output().matchAll(/^\s+(\S+)\s+(http:\/\/[\d.]+:\d+)/gm)].map((m) => m[2]!);
  if (urls.length !== ENGINES_PER_REGION) {
    await child.stop();
    throw new Error(
      `multi-region: ${region}'s fleet printed ${urls.length} engines, not ${ENGINES_PER_REGION}`,
    );
  }
  return { region, child, urls, group };
}

/** A region's config folder: its pool over its engines (a bound per engine), the alias, `region.name`. */
export function writeRegionConfig(dir: string, e: RegionEngines, s: MultiRegionSettings): void {
  const pool = `${e.region}-pool`;
  const pools = inferencePoolDoc(
    pool,
    e.group,
    { [e.group.name]: [...e.urls] },
    {
      flowControl: { maxInflight: s.maxInflightPerEngine },
    },
  );
  const route = inferenceRouteDoc(`${e.region}-route`, `multi-region-${e.region}-r1`, {
    modelAliases: {
      [MODEL_ALIAS]: {
        defaultPool: pool,
        pools: [
          { name: pool, maxInputTokens: 8192, maxOutputTokens: 1024, maxQueueMs: 30_000, priority: 100 },
        ],
      },
    },
  });
  const gateway = gatewayConfigDoc(`${e.region}-gateway`) as { spec: Record<string, unknown> };
  gateway.spec.region = { name: e.region };
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "pools.yaml"), yamlDocuments([pools]));
  writeFileSync(join(dir, "route.yaml"), yamlDocuments([route]));
  writeFileSync(join(dir, "gateway.yaml"), yamlDocuments([gateway]));
}

/** A region's `tokengate gateway`, its request log in `logFile`. */
export interface RegionGateway {
  readonly region: string;
  readonly url: string;
  readonly child: Child;
  readonly logFile: string;
}

export async function startRegionGateway(
  region: string,
  configDir: string,
  logFile: string,
  historyFile: string,
): Promise<RegionGateway> {
  const child = await startTokengate(
    ["gateway", "--config", configDir, "--no-watch", "--log", logFile, "--history", historyFile],
    LISTENING,
    30_000,
  );
  const url = LISTENING.exec(child.output())![1]!;
  return { region, url, child, logFile };
}

/** Until `url`/ready answers 200 (the gateway's pool has routable engines). */
export async function waitReady(url: string, what: string, ms = 30_000): Promise<void> {
  const end = performance.now() + ms;
  for (;;) {
    try {
      const res = await fetch(`${url}/ready`);
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (performance.now() > end) throw new Error(`${what} did not become ready within ${ms} ms`);
    await sleep(50);
  }
}

/** The RegionDirector document: the regions' gateways, the matrix, residency, the run's tuning. */
export function directorYaml(
  gateways: readonly { region: string; url: string }[],
  s: MultiRegionSettings,
): string {
  const d = s.director;
  return stringify(
    {
      apiVersion: "tokengate.dev/v1alpha1",
      kind: "RegionDirector",
      metadata: { name: "multi-region-bench" },
      spec: {
        listen: { host: "127.0.0.1", port: 0 },
        mode: "forward",
        regions: gateways.map((g) => ({ name: g.region, gatewayUrl: g.url })),
        latencyMs: LATENCY_MS,
        residency: RESIDENCY,
        hysteresis: { dwellMs: d.dwellMs, switchMargin: d.switchMargin },
        breaker: {
          errorRateToOpen: d.errorRateToOpen,
          failuresToOpen: d.failuresToOpen,
          openMs: d.openMs,
          halfOpenProbes: d.halfOpenProbes,
        },
        spillover: { minHeadroom: d.minHeadroom, maxShare: d.maxShare },
        affinity: { header: SESSION_HEADER, ttlMs: d.affinityTtlMs },
        polling: { intervalMs: d.intervalMs, staleAfterMs: d.staleAfterMs, timeoutMs: d.timeoutMs },
      },
    },
    { lineWidth: 0 },
  );
}

export interface DirectorProcess {
  readonly url: string;
  readonly child: Child;
  readonly logFile: string;
}

/**
 * Writes the director's config (checked here first: a bad document fails the pass before anything
 * starts), starts `tokengate director`, and waits until every region has a fresh summary and a closed
 * breaker.
 */
export async function startDirectorProcess(
  configFile: string,
  yamlText: string,
  logFile: string,
  regions: readonly string[],
): Promise<DirectorProcess> {
  const parsed = parseDirectorConfig(yamlText, configFile);
  if (!parsed.ok)
    throw new Error(`multi-region: the director's config is invalid:\n${parsed.errors.join("\n")}`);
  writeFileSync(configFile, yamlText);
  const child = await startTokengate(
    ["director", "--config", configFile, "--port", "0", "--log", logFile],
    LISTENING,
    30_000,
  );
  const url = LISTENING.exec(child.output())![1]!;
  const end = performance.now() + 30_000;
  for (;;) {
    try {
      const res = await fetch(`${url}/director/regions`);
      const body = (await res.json()) as { regions: RegionState[] };
      const healthy = body.regions.filter(
        (r) => !r.stale && r.breaker === "closed" && (r.summary?.headroomByModel[MODEL_ALIAS] ?? 0) > 0,
      );
      if (regions.every((name) => healthy.some((r) => r.region === name))) break;
    } catch {
      // starting
    }
    if (performance.now() > end) {
      await child.stop();
      throw new Error(`multi-region: the director did not see every region healthy:\n${child.output()}`);
    }
    await sleep(50);
  }
  return { url, child, logFile };
}

/** Puts a fault on every engine of the list. */
export async function setFaults(urls: readonly string[], update: Partial<FaultConfig>): Promise<void> {
  await Promise.all(
    urls.map(async (u) => {
      const res = await fetch(`${u}/admin/faults`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(update),
      });
      const text = await res.text();
      if (res.status !== 200)
        throw new Error(`multi-region: ${u}/admin/faults answered ${res.status}: ${text}`);
    }),
  );
}

/** Clears every fault (slowdown included) on the engines. */
export async function clearFaults(urls: readonly string[]): Promise<void> {
  await Promise.all(urls.map((u) => fetch(`${u}/admin/faults`, { method: "DELETE" }).then((r) => r.text())));
}

/** Empties the engines (queues, KV cache, statistics) between passes. */
export async function resetEngines(urls: readonly string[]): Promise<void> {
  await Promise.all(urls.map((u) => fetch(`${u}/admin/reset`, { method: "POST" }).then((r) => r.text())));
}
