// Test fixture: `tokengate gateway` as a child process, as an operator runs it, in front of one simulated
// engine in the test's own process; its config is written to a temporary folder.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { reapOnExit } from "../bench/services/child-process.js";
import { makeEngineConfig } from "../sim/engine-config.js";
import { SimReplica } from "../sim/replica.js";

export const CLI_MAIN = fileURLToPath(new URL("../cli/main.js", import.meta.url));
/** The crashing variant of `tokengate gateway` (crash-gateway.ts). */
export const CRASH_GATEWAY = fileURLToPath(new URL("./crash-gateway.js", import.meta.url));
export const CLI_KEY = "sk-cli-test";

export interface CliEngine {
  /** A folder with pools.yaml, route.yaml and gateway.yaml for the engine. */
  dir: string;
  stop(): Promise<void>;
}

/**
 * A config file of one vLLM pool `p` (model `m-base` on `endpoints`, scraped and probed every 100 ms)
 * that alias `m` routes to, and a GatewayConfig listening on a free loopback port with `gateway`'s lines
 * (indented two spaces, under `spec:`) after it.
 */
export function onePoolConfig(o: {
  endpoints: readonly string[];
  version: string;
  maxOutputTokens: number;
  gateway: string;
}): string {
  return `apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: p }
spec:
  engine: vllm
  model: m-base
  endpoints: [${o.endpoints.map((u) => `"${u}"`).join(", ")}]
  metrics: { intervalMs: 100 }
  health: { intervalMs: 100 }
---
apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata:
  name: r
  annotations: { ai.example.com/route-config-version: "${o.version}" }
spec:
  modelAliases:
    m:
      defaultPool: p
      pools: [{ name: p, maxInputTokens: 4096, maxOutputTokens: ${o.maxOutputTokens}, maxQueueMs: 5000, priority: 1 }]
---
apiVersion: tokengate.dev/v1alpha1
kind: GatewayConfig
metadata: { name: g }
spec:
  listen: { host: 127.0.0.1, port: 0 }
${o.gateway}
`;
}

/** One instant simulated engine and a config folder that routes `m` to it. */
export async function startCliEngine(): Promise<CliEngine> {
  const replica = new SimReplica({
    name: "e0",
    port: 0,
    engine: makeEngineConfig("instant", "m-base", { maxModelLen: 4096 }),
    seed: 1,
  });
  await replica.start();
  const dir = mkdtempSync(join(tmpdir(), "tokengate-cli-"));
  writeFileSync(
    join(dir, "config.yaml"),
    onePoolConfig({
      endpoints: [replica.url],
      version: "cli-test-1",
      maxOutputTokens: 64,
      gateway: `  auth:
    apiKeys: [{ key: ${CLI_KEY}, tenant: t }]
  shutdown: { drainMs: 2000 }`,
    }),
  );
  return {
    dir,
    stop: async () => {
      await replica.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface CliGateway {
  proc: ChildProcess;
  url: string;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves with how the process ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `node <script> gateway-args…` and resolves once it says where it listens. */
export async function spawnGateway(
  script: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<CliGateway> {
  const proc = reapOnExit(
    spawn(process.execPath, [script, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...env },
    }),
  );
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  proc.stderr!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the gateway did not start:\n${out}`)), 20_000);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    proc.stderr!.on("data", check);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited (${code ?? signal}) before it listened:\n${out}`));
    });
    proc.once("error", (err) => {
      clearTimeout(timer);
      reject(new Error(`the gateway could not start: ${err.message}`));
    });
  });
  return { proc, url, output: () => out, exited };
}

/** One non-streaming chat completion with this trace id; resolves with the HTTP status (0 if it failed). */
export async function chat(url: string, traceId: string): Promise<number> {
  try {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${CLI_KEY}`,
        "x-ai-trace-id": traceId,
      },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 4 }),
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}
