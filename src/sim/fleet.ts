// A fleet of simulated replicas in one process: from CLI flags (`--replicas 4 --port 8001`) or from a
// `kind: SimFleet` YAML document with groups of replicas, each group its own profile, model and flags.

import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { apiKeyProblem } from "./api-key.js";
import type { EngineOverrides } from "./engine-config.js";
import { engineConfigProblem, makeEngineConfig } from "./engine-config.js";
import type { Dialect } from "./engine-metrics.js";
import { type FaultConfig, parseFaultUpdate } from "./faults.js";
import {
  type FramingOptions,
  isOneOf,
  JSON_STYLES,
  type JsonStyle,
  SSE_DATA_SPACES,
  SSE_LINE_ENDINGS,
  type SseDataSpace,
  type SseLineEnding,
} from "./framing.js";
import { type OutputLenDist, SimReplica } from "./replica.js";
import { modelVersionProblem, parseLoraModule } from "./served-models.js";

export interface ReplicaGroup {
  name: string;
  replicas: number;
  /** First port; replica i listens on port + i (0: any free port). */
  port: number;
  profile: string;
  model: string;
  dialect: Dialect;
  engine: EngineOverrides;
  outputLenDist: OutputLenDist;
  streamInterval: number;
  faults: Partial<FaultConfig>;
  /** Reported as the base model's root `/models/<modelVersion>` in /v1/models. */
  modelVersion?: string;
  /** vLLM's --api-key for every replica of the group. */
  apiKey?: string;
  /** Framing other than vLLM's, to test the gateway against servers that frame differently. */
  sseLineEnding?: SseLineEnding;
  jsonStyle?: JsonStyle;
  sseDataSpace?: SseDataSpace;
}

export interface FleetSpec {
  name: string;
  host: string;
  seed: number;
  groups: ReplicaGroup[];
}

const ENGINE_KEYS: Record<string, "number" | "boolean" | "strings"> = {
  beta0Us: "number",
  beta1Us: "number",
  beta2Us: "number",
  beta3Us: "number",
  apiServerUs: "number",
  numGpuBlocks: "number",
  blockSize: "number",
  maxNumSeqs: "number",
  maxNumBatchedTokens: "number",
  maxModelLen: "number",
  loraLoadMs: "number",
  enableChunkedPrefill: "boolean",
  enablePrefixCaching: "boolean",
  longPrefillTokenThreshold: "number",
  maxLoras: "number",
  enableLora: "boolean",
  loraModules: "strings",
};

export class FleetConfigError extends Error {}

function fail(path: string, msg: string): never {
  throw new FleetConfigError(`${path}: ${msg}`);
}

function obj(v: unknown, path: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) fail(path, "expected a mapping");
  return v as Record<string, unknown>;
}

function onlyKeys(o: Record<string, unknown>, allowed: string[], path: string): void {
  for (const k of Object.keys(o))
    if (!allowed.includes(k)) fail(`${path}.${k}`, `unknown field (allowed: ${allowed.join(", ")})`);
}

function int(v: unknown, path: string, min = 0): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < min)
    fail(path, `expected a whole number ≥ ${min}`);
  return v;
}

/** Validates a parsed `SimFleet` document. Every error names its path. */
export function parseFleet(doc: unknown, source = "fleet"): FleetSpec {
  const root = obj(doc, source);
  if (root.kind !== "SimFleet") fail(`${source}.kind`, `expected SimFleet, got ${JSON.stringify(root.kind)}`);
  const meta = obj(root.metadata ?? {}, `${source}.metadata`);
  const spec = obj(root.spec, `${source}.spec`);
  onlyKeys(spec, ["host", "seed", "groups"], "spec");
  if (!Array.isArray(spec.groups) || spec.groups.length === 0)
    fail("spec.groups", "expected a non-empty list");
  const groups = spec.groups.map((g, i) => parseGroup(g, `spec.groups[${i}]`));
  const names = new Set<string>();
  for (const g of groups) {
    if (names.has(g.name)) fail("spec.groups", `group name "${g.name}" is used twice`);
    names.add(g.name);
  }
  return {
    name: typeof meta.name === "string" ? meta.name : "fleet",
    host: typeof spec.host === "string" ? spec.host : "127.0.0.1",
    seed: spec.seed === undefined ? 0 : int(spec.seed, "spec.seed"),
    groups,
  };
}

function parseGroup(v: unknown, path: string): ReplicaGroup {
  const g = obj(v, path);
  onlyKeys(
    g,
    [
      "name",
      "replicas",
      "port",
      "profile",
      "model",
      "dialect",
      "engine",
      "outputLenDist",
      "streamInterval",
      "faults",
      "modelVersion",
      "apiKey",
      "sseLineEnding",
      "jsonStyle",
      "sseDataSpace",
    ],
    path,
  );
  if (typeof g.name !== "string" || !g.name) fail(`${path}.name`, "expected a name");
  if (typeof g.model !== "string" || !g.model) fail(`${path}.model`, "expected the served model name");
  const dialect = g.dialect ?? "vllm";
  if (dialect !== "vllm" && dialect !== "sglang") fail(`${path}.dialect`, "expected vllm or sglang");
  const dist = g.outputLenDist ?? "max";
  if (dist !== "max" && dist !== "uniform") fail(`${path}.outputLenDist`, "expected max or uniform");
  const engine: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(obj(g.engine ?? {}, `${path}.engine`))) {
    const kind = ENGINE_KEYS[k];
    const p = `${path}.engine.${k}`;
    if (!kind) fail(p, `unknown engine setting (known: ${Object.keys(ENGINE_KEYS).join(", ")})`);
    if (kind === "number" && (typeof val !== "number" || val < 0)) fail(p, "expected a number ≥ 0");
    if (kind === "boolean" && typeof val !== "boolean") fail(p, "expected true or false");
    if (kind === "strings" && !(Array.isArray(val) && val.every((x) => typeof x === "string"))) {
      fail(p, "expected a list of names");
    }
    if (k === "loraModules") {
      for (const spec of val as string[])
        if (!parseLoraModule(spec)) fail(p, `expected name or name=path, got "${spec}"`);
    }
    engine[k] = val;
  }
  let faults: Partial<FaultConfig> = {};
  try {
    faults = parseFaultUpdate(g.faults ?? {});
  } catch (err) {
    fail(`${path}.faults`, (err as Error).message);
  }
  let modelVersion: string | undefined;
  if (g.modelVersion !== undefined) {
    if (typeof g.modelVersion !== "string") fail(`${path}.modelVersion`, "expected a version string");
    const problem = modelVersionProblem(g.modelVersion);
    if (problem) fail(`${path}.modelVersion`, problem);
    modelVersion = g.modelVersion;
  }
  if (g.apiKey !== undefined) {
    if (typeof g.apiKey !== "string") fail(`${path}.apiKey`, "expected a string");
    const problem = apiKeyProblem(g.apiKey);
    if (problem) fail(`${path}.apiKey`, problem);
  }
  const framing: Partial<FramingOptions> = {};
  for (const [k, allowed] of [
    ["sseLineEnding", SSE_LINE_ENDINGS],
    ["jsonStyle", JSON_STYLES],
    ["sseDataSpace", SSE_DATA_SPACES],
  ] as const) {
    if (g[k] === undefined) continue;
    if (!isOneOf<string>(allowed, g[k])) fail(`${path}.${k}`, `expected ${allowed.join(" or ")}`);
    (framing as Record<string, unknown>)[k] = g[k];
  }
  const group: ReplicaGroup = {
    name: g.name,
    replicas: g.replicas === undefined ? 1 : int(g.replicas, `${path}.replicas`, 1),
    port: g.port === undefined ? 0 : int(g.port, `${path}.port`),
    profile: typeof g.profile === "string" ? g.profile : "h100-llama8b",
    model: g.model,
    dialect,
    engine: engine as EngineOverrides,
    outputLenDist: dist,
    streamInterval: g.streamInterval === undefined ? 1 : int(g.streamInterval, `${path}.streamInterval`, 1),
    faults,
    ...(modelVersion !== undefined ? { modelVersion } : {}),
    ...(g.apiKey !== undefined ? { apiKey: g.apiKey as string } : {}),
    ...framing,
  };
  let problem: string | null;
  try {
    problem = engineConfigProblem(makeEngineConfig(group.profile, group.model, group.engine));
  } catch (err) {
    fail(`${path}.profile`, (err as Error).message);
  }
  if (problem) fail(`${path}.engine`, problem);
  return group;
}

/** Reads the first `SimFleet` document of a YAML file. */
export function loadFleetFile(path: string): FleetSpec {
  const docs = parseAllDocuments(readFileSync(path, "utf8"));
  for (const d of docs) {
    if (d.errors.length > 0) throw new FleetConfigError(`${path}: ${d.errors[0]!.message}`);
    const js = d.toJS() as Record<string, unknown> | null;
    if (js && js.kind === "SimFleet") return parseFleet(js, path);
  }
  throw new FleetConfigError(`${path}: no document of kind SimFleet`);
}

export interface RunningFleet {
  spec: FleetSpec;
  replicas: SimReplica[];
  stop(): Promise<void>;
}

/** A group's framing options, only those it sets. */
export function framingOf(g: ReplicaGroup): Partial<FramingOptions> {
  const f: Partial<FramingOptions> = {};
  if (g.sseLineEnding !== undefined) f.sseLineEnding = g.sseLineEnding;
  if (g.jsonStyle !== undefined) f.jsonStyle = g.jsonStyle;
  if (g.sseDataSpace !== undefined) f.sseDataSpace = g.sseDataSpace;
  return f;
}

/** Starts every replica of the fleet; stops those already started if one port is taken. */
export async function startFleet(spec: FleetSpec): Promise<RunningFleet> {
  const replicas: SimReplica[] = [];
  try {
    for (const g of spec.groups) {
      for (let i = 0; i < g.replicas; i++) {
        const r = new SimReplica({
          name: g.replicas > 1 ? `${g.name}-${i}` : g.name,
          host: spec.host,
          port: g.port === 0 ? 0 : g.port + i,
          engine: makeEngineConfig(g.profile, g.model, g.engine),
          dialect: g.dialect,
          seed: spec.seed + i,
          outputLenDist: g.outputLenDist,
          streamInterval: g.streamInterval,
          faults: g.faults,
          modelVersion: g.modelVersion ?? null,
          apiKey: g.apiKey ?? null,
          framing: framingOf(g),
        });
        replicas.push(r);
        await r.start();
      }
    }
  } catch (err) {
    await Promise.all(replicas.map((r) => r.stop()));
    throw err;
  }
  return { spec, replicas, stop: () => Promise.all(replicas.map((r) => r.stop())).then(() => {}) };
}
