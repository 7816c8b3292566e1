// A scenario around a user's own trace: one pool of simulated engines (4 × h100-llama8b unless a fleet
// file says otherwise) behind tokengate and the baselines. The harness on loopback is trusted to name
// each request's tenant (X-AI-Tenant), as in the shipped scenarios' gateway config.

import type { FleetSpec } from "../../sim/fleet.js";
import type { Scenario } from "./scenario.js";

const DEFAULT_FLEET: FleetSpec = {
  name: "trace",
  host: "127.0.0.1",
  seed: 1,
  groups: [
    {
      name: "engines",
      replicas: 4,
      port: 0,
      profile: "h100-llama8b",
      model: "model",
      dialect: "vllm",
      engine: { maxModelLen: 32768 },
      outputLenDist: "max",
      streamInterval: 1,
      faults: {},
    },
  ],
};

export function traceScenario(file: string, fleet: FleetSpec = DEFAULT_FLEET): Scenario {
  const model = fleet.groups[0]!.model;
  const groups = fleet.groups.map((g) => g.name);
  return {
    name: "trace",
    description: `Replay of ${file} over ${fleet.groups.map((g) => `${g.replicas} × ${g.profile}`).join(" + ")}`,
    liveClass: "interactive",
    longClass: "long",
    topologies: [
      {
        name: "trace-fleet",
        description: "the fleet the trace is replayed on, as one pool",
        fleet,
        gpus: fleet.groups.reduce((a, g) => a + g.replicas, 0),
        routers: ["tokengate", "least-request", "round-robin"],
        gatewayConfig: (endpoints) => ({
          "pool.yaml": `apiVersion: tokengate.dev/v1alpha1
kind: InferencePool
metadata: { name: engines }
spec:
  engine: vllm
  model: ${model}
  endpoints: [${groups
    .flatMap((g) => endpoints[g] ?? [])
    .map((u) => `"${u}"`)
    .join(", ")}]
  metrics: { intervalMs: 100 }
  health: { intervalMs: 500 }
`,
          "route.yaml": `apiVersion: tokengate.dev/v1alpha1
kind: InferenceRoute
metadata:
  name: trace
  annotations: { ai.example.com/route-config-version: "trace-r1" }
spec:
  modelAliases:
    ${model}:
      defaultPool: engines
      pools:
        - { name: engines, maxInputTokens: 1000000, maxOutputTokens: 100000, maxQueueMs: 600000, priority: 10 }
  rules: []
`,
          "gateway.yaml": `apiVersion: tokengate.dev/v1alpha1
kind: GatewayConfig
metadata: { name: bench }
spec:
  listen: { host: 127.0.0.1, port: 0 }
  auth: { allowAnonymous: true, trustedUpstreams: { addresses: ["127.0.0.1", "::1"] } }
  limits: { maxBodyBytes: 16777216 }
  timeouts: { connectMs: 2000, firstByteMs: 300000, idleMs: 120000, totalMs: 900000 }
  logging: { destination: stdout }
`,
        }),
      },
    ],
    generate: () => [],
  };
}
