// tokengate's config for a benchmark topology as YAML texts: an InferencePool per fleet group, an
// InferenceRoute, and a GatewayConfig that lets the harness in without keys and waits as long as batch needs.

import { stringify } from "yaml";
import { ROUTE_VERSION_ANNOTATION } from "../../config/route-types.js";
import type { ReplicaGroup } from "../../sim/fleet.js";
import { replicaNames } from "./fleet-group.js";

const SEED_API = "ai.example.com/v1alpha1";
const TOKENGATE_API = "tokengate.dev/v1alpha1";

/** One YAML stream of several documents. */
export function yamlDocuments(docs: readonly object[]): string {
  return docs.map((d) => stringify(d, { lineWidth: 0 })).join("---\n");
}

/**
 * An InferencePool over one fleet group's engines. Endpoints are named as the replicas name themselves;
 * metrics are scraped every 100 ms so the picker sees queues that change within a prefill.
 */
export function inferencePoolDoc(
  pool: string,
  group: ReplicaGroup,
  endpoints: Record<string, string[]>,
  extra: { borrow?: readonly ReplicaGroup[]; flowControl?: object; loraAdapters?: readonly string[] } = {},
): object {
  const named = (g: ReplicaGroup) => {
    const urls = endpoints[g.name];
    if (!urls || urls.length === 0) throw new Error(`no endpoint URLs for fleet group "${g.name}"`);
    const names = replicaNames(g);
    return urls.map((url, i) => ({ url, name: names[i] ?? `${g.name}-${i}` }));
  };
  return {
    apiVersion: SEED_API,
    kind: "InferencePool",
    metadata: { name: pool },
    spec: {
      engine: group.dialect,
      model: group.model,
      // Borrowed groups' engines (same model) join this pool; the gateway shares their state.
      endpoints: [group, ...(extra.borrow ?? [])].flatMap(named),
      metrics: { intervalMs: 100 },
      health: { intervalMs: 500 },
      ...(extra.flowControl ? { flowControl: extra.flowControl } : {}),
      // Adapters the engines serve under their own names (--lora-modules): requests may name them as model.
      ...(extra.loraAdapters ? { loraAdapters: [...extra.loraAdapters] } : {}),
    },
  };
}

export function inferenceRouteDoc(name: string, version: string, spec: object): object {
  return {
    apiVersion: SEED_API,
    kind: "InferenceRoute",
    metadata: { name, annotations: { [ROUTE_VERSION_ANNOTATION]: version } },
    spec,
  };
}

/**
 * The gateway for a bench run: a free port on loopback; anonymous callers allowed, and the harness on
 * loopback trusted to name tenants in X-AI-Tenant; timeouts long enough for a 52k-token batch request
 * queued behind a backlog (first byte 300 s, idle 120 s, total 900 s).
 */
export function gatewayConfigDoc(name: string): object {
  return {
    apiVersion: TOKENGATE_API,
    kind: "GatewayConfig",
    metadata: { name },
    spec: {
      listen: { host: "127.0.0.1", port: 0 },
      auth: { allowAnonymous: true, trustedUpstreams: { addresses: ["127.0.0.1", "::1"] } },
      timeouts: { connectMs: 2000, firstByteMs: 300_000, idleMs: 120_000, totalMs: 900_000 },
      logging: { destination: "stdout" },
    },
  };
}

export interface OnePoolRoute {
  /** Fleet group behind the pool; the pool takes its name. */
  group: ReplicaGroup;
  /** Config version shown in logs, e.g. "shared-prefix-r1". */
  version: string;
  /** Tasks the scenario's requests carry, so none counts as unknown. */
  knownTasks: string[];
  maxInputTokens: number;
  maxOutputTokens: number;
}

/**
 * Config files for a one-pool topology: the alias is the served model name, so the same request body
 * works through tokengate and through the nginx baselines.
 */
export function onePoolGatewayConfig(
  r: OnePoolRoute,
  endpoints: Record<string, string[]>,
): Record<string, string> {
  const pool = r.group.name;
  const route = inferenceRouteDoc(`${pool}-route`, r.version, {
    knownTasks: r.knownTasks,
    modelAliases: {
      [r.group.model]: {
        defaultPool: pool,
        pools: [
          {
            name: pool,
            maxInputTokens: r.maxInputTokens,
            maxOutputTokens: r.maxOutputTokens,
            maxQueueMs: 60_000,
            priority: 100,
          },
        ],
      },
    },
  });
  return {
    "pools.yaml": yamlDocuments([inferencePoolDoc(pool, r.group, endpoints)]),
    "route.yaml": yamlDocuments([route]),
    "gateway.yaml": yamlDocuments([gatewayConfigDoc(`${pool}-bench`)]),
  };
}
