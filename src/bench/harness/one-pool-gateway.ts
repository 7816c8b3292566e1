// tokengate's config for a benchmark that puts one pool of identical engines behind the gateway
// (overhead, large prompts): an InferencePool, an InferenceRoute whose alias is the served model, and a
// GatewayConfig on a free loopback port that lets the load generator in without keys.

import { writeFileSync } from "node:fs";
import { join } from "node:path";

export interface OnePoolGateway {
  /** Pool name, also the route's and the config's. */
  name: string;
  /** The served model, and the alias callers send. */
  model: string;
  engines: readonly string[];
  maxInputTokens: number;
  maxQueueMs: number;
  /** Extra `GatewayConfig.spec` lines (two-space indented YAML), e.g. timeouts. */
  gatewaySpec: string;
}

/** Writes pools.yaml, route.yaml and gateway.yaml into `dir`. */
export function writeOnePoolGateway(dir: string, c: OnePoolGateway): void {
  writeFileSync(
    join(dir, "pools.yaml"),
    `apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: ${c.name} }
spec:
  engine: vllm
  model: ${c.model}
  endpoints: [${c.engines.map((e) => `"${e}"`).join(", ")}]
`,
  );
  writeFileSync(
    join(dir, "route.yaml"),
    `apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata:
  name: ${c.name}-route
  annotations:
    ai.example.com/route-config-version: "${c.name}-1"
spec:
  modelAliases:
    ${c.model}:
      defaultPool: ${c.name}
      pools:
        - { name: ${c.name}, maxInputTokens: ${c.maxInputTokens}, maxOutputTokens: 4096, maxQueueMs: ${c.maxQueueMs}, priority: 100 }
`,
  );
  writeFileSync(
    join(dir, "gateway.yaml"),
    `apiVersion: tokengate.dev/v1alpha1
kind: GatewayConfig
metadata: { name: ${c.name} }
spec:
  listen: { host: 127.0.0.1, port: 0 }
  auth: { allowAnonymous: true }
${c.gatewaySpec}`,
  );
}
