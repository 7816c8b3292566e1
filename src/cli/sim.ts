// `tokengate sim`: runs simulated vLLM/SGLang replicas in this process, from flags or a fleet file.

import { apiKeyProblem } from "../sim/api-key.js";
import { type EngineOverrides, engineConfigProblem, makeEngineConfig } from "../sim/engine-config.js";
import { type FleetSpec, loadFleetFile, type RunningFleet, startFleet } from "../sim/fleet.js";
import {
  type FramingOptions,
  isOneOf,
  JSON_STYLES,
  SSE_DATA_SPACES,
  SSE_LINE_ENDINGS,
} from "../sim/framing.js";
import { PROFILES } from "../sim/profiles.js";
import { modelVersionProblem, parseLoraModule } from "../sim/served-models.js";
import { intFlag, numberFlag, parseFlags, portFlag, textFlag, UsageError, usageFailure } from "./args.js";

export const SIM_USAGE = `Usage: tokengate sim [options]
       tokengate sim --fleet <fleet.yaml>

Runs simulated inference engines that behave like vLLM from the outside (OpenAI API, /metrics,
continuous batching, prefix caching, KV pressure, LoRA, faults). Each replica has its own port.

Options:
  --fleet <file>                  a YAML file with a kind: SimFleet document (groups of replicas)
  --replicas <n>                  number of replicas (default 1); ports are --port, --port+1, ...
  --port <n>                      first port (default 8000; 0 = any free port)
  --host <addr>                   listen address (default 127.0.0.1)
  --profile <name>                hardware profile (default h100-llama8b): ${Object.keys(PROFILES).join(", ")}
  --model <name>                  served model name (default sim-model)
  --model-version <v>             report the base model's root in /v1/models as /models/<v>
                                  (default: the model name)
  --dialect vllm|sglang           metric names to export (default vllm)
  --seed <n>                      seed for generated text and fault draws (default 0)
  --api-key <key>                 every /v1 route needs "Authorization: Bearer <key>", else 401
                                  {"error": "Unauthorized"} (default: env VLLM_API_KEY, as vLLM)
  --max-model-len <n>             context window; longer requests get 400 as in vLLM
  --max-num-seqs <n>              cap of the running batch
  --max-num-batched-tokens <n>    token budget of one step
  --num-gpu-blocks <n>            KV cache size in blocks
  --block-size <n>                tokens per KV block (default 16)
  --no-enable-chunked-prefill     prefill each prompt in one step
  --no-enable-prefix-caching      no automatic prefix caching
  --long-prefill-token-threshold <n>  cap of prompt tokens one request prefills per step
  --beta0-us, --beta1-us, --beta2-us, --beta3-us <µs>  step-time coefficients
  --api-server-us <µs>            serialized per-request API-server cost
  --enable-lora                   serve LoRA adapters (implied by --lora-modules and --max-loras);
                                  POST /v1/load_lora_adapter and /v1/unload_lora_adapter add and
                                  remove them at run time
  --lora-modules <name[=path],...>  LoRA adapters served from the start (requests name them as model;
                                  the path is their root in /v1/models)
  --max-loras <n>                 adapters resident at once (default 1)
  --lora-load-ms <ms>             load delay of a non-resident adapter
  --output-len-dist max|uniform   output lengths when ignore_eos is false (default max)
  --stream-interval <n>           send streamed tokens every n steps (default 1: every token)
  --sse-line-ending lf|crlf|cr    line endings of SSE events (default lf, as vLLM; sse-starlette
                                  servers write crlf: every event ends with \\r\\n\\r\\n)
  --sse-data-space space|none     "data: {...}" (default, as vLLM) or "data:{...}"
  --json-style compact|pretty     JSON as vLLM writes it (default), or as Python's json.dumps does
                                  by default (", " and ": ", non-ASCII as \\uXXXX), in streamed
                                  events (one line each) and in response bodies
  --error-rate <0..1>             share of requests answered 503
  --crash-after-requests <n>      close every socket when the n-th request arrives
  --crash-at-ms <ms>              ... or after this long
  --restart-after-ms <ms>         listen again this long after a crash
  --stall-after-tokens <n>        streams stall after n tokens ...
  --stall-ms <ms>                 ... for this long (default: for ever)
  --metrics-delay-ms <ms>         slow /metrics
  --health-fail                   /health answers 503
  --health-delay-ms <ms>          slow /health
  --max-waiting <n>               429 with Retry-After when n requests already wait
  --slowdown <factor>             every step takes factor × its profile's time (a throttled GPU)
`;

const num = { type: "string" } as const;

const SIM_OPTIONS = {
  replicas: num,
  port: num,
  host: num,
  profile: num,
  model: num,
  "model-version": num,
  dialect: num,
  seed: num,
  "api-key": num,
  "max-model-len": num,
  "max-num-seqs": num,
  "max-num-batched-tokens": num,
  "num-gpu-blocks": num,
  "block-size": num,
  "no-enable-chunked-prefill": { type: "boolean" },
  "no-enable-prefix-caching": { type: "boolean" },
  "long-prefill-token-threshold": num,
  "beta0-us": num,
  "beta1-us": num,
  "beta2-us": num,
  "beta3-us": num,
  "api-server-us": num,
  "enable-lora": { type: "boolean" },
  "lora-modules": num,
  "max-loras": num,
  "lora-load-ms": num,
  "output-len-dist": num,
  "stream-interval": num,
  "sse-line-ending": num,
  "sse-data-space": num,
  "json-style": num,
  "error-rate": num,
  "crash-after-requests": num,
  "crash-at-ms": num,
  "restart-after-ms": num,
  "stall-after-tokens": num,
  "stall-ms": num,
  "metrics-delay-ms": num,
  "health-fail": { type: "boolean" },
  "health-delay-ms": num,
  "max-waiting": num,
  slowdown: num,
} as const;

/** The flags that take integers, with their least value; the rest of the numeric flags take decimals ≥ 0. */
const INTEGER_FLAGS: Partial<Record<keyof typeof SIM_OPTIONS, number>> = {
  replicas: 1,
  seed: 0,
  "max-model-len": 1,
  "max-num-seqs": 1,
  "max-num-batched-tokens": 1,
  "num-gpu-blocks": 1,
  "block-size": 1,
  "long-prefill-token-threshold": 0,
  "max-loras": 1,
  "stream-interval": 1,
  "crash-after-requests": 0,
  "stall-after-tokens": 0,
  "max-waiting": 0,
};

function loraModulesFlag(v: string): string[] {
  const specs = v.split(",").map((s) => s.trim());
  for (const s of specs) {
    if (!parseLoraModule(s)) throw new UsageError(`--lora-modules: expected name or name=path, got "${s}"`);
  }
  return specs;
}

/**
 * Builds a one-group fleet from command-line flags. `env` supplies VLLM_API_KEY when --api-key is
 * absent, as vLLM reads it (a fleet file names its keys itself). Throws UsageError naming the flag.
 */
export function fleetFromFlags(argv: string[], env: NodeJS.ProcessEnv = process.env): FleetSpec {
  const { values } = parseFlags({ args: argv, options: SIM_OPTIONS });
  type NumericFlag = {
    [K in keyof typeof SIM_OPTIONS]: (typeof SIM_OPTIONS)[K]["type"] extends "string" ? K : never;
  }[keyof typeof SIM_OPTIONS];
  const n = (k: NumericFlag): number | undefined => {
    const v = values[k] as string | undefined;
    if (k === "port") return portFlag(v);
    if (k === "error-rate") return numberFlag(v, k, 0, 1);
    if (k === "slowdown") return numberFlag(v, k, 0.1, 100);
    const least = INTEGER_FLAGS[k];
    return least === undefined ? numberFlag(v, k, 0) : intFlag(v, k, least);
  };
  const dialect = values.dialect ?? "vllm";
  if (dialect !== "vllm" && dialect !== "sglang")
    throw new UsageError(`--dialect: expected vllm or sglang, got "${dialect}"`);
  const dist = values["output-len-dist"] ?? "max";
  if (dist !== "max" && dist !== "uniform")
    throw new UsageError(`--output-len-dist: expected max or uniform, got "${dist}"`);
  const engine: EngineOverrides = {
    maxModelLen: n("max-model-len"),
    maxNumSeqs: n("max-num-seqs"),
    maxNumBatchedTokens: n("max-num-batched-tokens"),
    numGpuBlocks: n("num-gpu-blocks"),
    blockSize: n("block-size"),
    enableChunkedPrefill: values["no-enable-chunked-prefill"] ? false : undefined,
    enablePrefixCaching: values["no-enable-prefix-caching"] ? false : undefined,
    longPrefillTokenThreshold: n("long-prefill-token-threshold"),
    beta0Us: n("beta0-us"),
    beta1Us: n("beta1-us"),
    beta2Us: n("beta2-us"),
    beta3Us: n("beta3-us"),
    apiServerUs: n("api-server-us"),
    maxLoras: n("max-loras"),
    loraLoadMs: n("lora-load-ms"),
    loraModules: values["lora-modules"] ? loraModulesFlag(values["lora-modules"]) : undefined,
    enableLora: values["enable-lora"] ? true : undefined,
  };
  const profile = values.profile ?? "h100-llama8b";
  const model = values.model ?? "sim-model";
  if (!Object.hasOwn(PROFILES, profile))
    throw new UsageError(
      `--profile: unknown profile "${profile}" (known: ${Object.keys(PROFILES).join(", ")})`,
    );
  const sizes = engineConfigProblem(makeEngineConfig(profile, model, engine));
  if (sizes) throw new UsageError(sizes);
  const modelVersion = values["model-version"];
  if (modelVersion !== undefined) {
    const problem = modelVersionProblem(modelVersion);
    if (problem) throw new UsageError(`--model-version: ${problem}`);
  }
  const apiKey = values["api-key"] ?? (env.VLLM_API_KEY || undefined);
  if (apiKey !== undefined) {
    const problem = apiKeyProblem(apiKey);
    if (problem) throw new UsageError(`--api-key: ${problem}`);
  }
  const framing: Record<string, string> = {};
  for (const [flag, key, allowed] of [
    ["sse-line-ending", "sseLineEnding", SSE_LINE_ENDINGS],
    ["sse-data-space", "sseDataSpace", SSE_DATA_SPACES],
    ["json-style", "jsonStyle", JSON_STYLES],
  ] as const) {
    const v = values[flag];
    if (v === undefined) continue;
    if (!isOneOf<string>(allowed, v))
      throw new UsageError(`--${flag}: expected ${allowed.join(", ")}, got "${v}"`);
    framing[key] = v;
  }
  const faults: Record<string, unknown> = {};
  const setFault = (k: string, v: unknown) => {
    if (v !== undefined) faults[k] = v;
  };
  setFault("errorRate", n("error-rate"));
  setFault("crashAfterRequests", n("crash-after-requests"));
  setFault("crashAtMs", n("crash-at-ms"));
  setFault("restartAfterMs", n("restart-after-ms"));
  setFault("stallAfterTokens", n("stall-after-tokens"));
  setFault("stallMs", n("stall-ms"));
  setFault("metricsDelayMs", n("metrics-delay-ms"));
  setFault("healthDelayMs", n("health-delay-ms"));
  setFault("maxWaiting", n("max-waiting"));
  setFault("slowdown", n("slowdown"));
  if (values["health-fail"]) faults.healthFail = true;
  const replicas = n("replicas") ?? 1;
  const port = n("port") ?? 8000;
  if (port !== 0 && port + replicas - 1 > 65535)
    throw new UsageError(`--replicas: ${replicas} replicas from --port ${port} would pass port 65535`);
  const host = textFlag(values.host, "host", "an address to listen on") ?? "127.0.0.1";
  if (values.model !== undefined) textFlag(values.model, "model", "a model name");
  return {
    name: "sim",
    host,
    seed: n("seed") ?? 0,
    groups: [
      {
        name: "sim",
        replicas,
        port,
        profile,
        model,
        dialect,
        engine,
        outputLenDist: dist,
        streamInterval: n("stream-interval") ?? 1,
        faults,
        ...(modelVersion !== undefined ? { modelVersion } : {}),
        ...(apiKey !== undefined ? { apiKey } : {}),
        ...(framing as Partial<FramingOptions>),
      },
    ],
  };
}

export function describeFleet(fleet: RunningFleet): string {
  const lines = fleet.replicas.map((r) => {
    const c = r.engine.cfg;
    const version = r.modelVersion === null ? "" : ` version=${r.modelVersion}`;
    return `  ${r.name.padEnd(22)} ${r.url.padEnd(24)} model=${c.modelName}${version} profile=${c.profileName} max_model_len=${c.maxModelLen} dialect=${r.metrics.dialect}`;
  });
  return `${fleet.replicas.length} simulated replica(s):\n${lines.join("\n")}`;
}

/** `--fleet <file>` alone, or the flags of one group; "help" for --help. Throws UsageError. */
function readSimArgs(argv: string[]): FleetSpec | "help" {
  const { values } = parseFlags({
    args: argv,
    options: { ...SIM_OPTIONS, fleet: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) return "help";
  if (values.fleet === undefined) return fleetFromFlags(argv);
  const other = Object.keys(values).find((k) => k !== "fleet");
  if (other) throw new UsageError(`--fleet: cannot be combined with --${other} (the fleet file sets it)`);
  const file = textFlag(values.fleet, "fleet", "a SimFleet file")!;
  try {
    return loadFleetFile(file);
  } catch (err) {
    throw new UsageError(`--fleet: ${(err as Error).message}`);
  }
}

export async function runSimCommand(argv: string[]): Promise<number> {
  let spec: FleetSpec | "help";
  try {
    spec = readSimArgs(argv);
  } catch (err) {
    return usageFailure("sim", err, SIM_USAGE);
  }
  if (spec === "help") {
    process.stdout.write(SIM_USAGE);
    return 0;
  }
  const fleet = await startFleet(spec);
  process.stdout.write(`${describeFleet(fleet)}\n`);
  const auth = spec.groups[0]?.apiKey ? ` -H "authorization: Bearer $VLLM_API_KEY"` : "";
  process.stdout.write(
    `Try: curl -s ${fleet.replicas[0]!.url}/v1/chat/completions -H 'content-type: application/json'${auth} ` +
      `-d '{"model":"${fleet.replicas[0]!.engine.cfg.modelName}","messages":[{"role":"user","content":"hello"}],"max_tokens":16}'\n`,
  );
  await waitForSignal();
  await fleet.stop();
  return 0;
}

/** Resolves on SIGINT or SIGTERM. */
export function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off("SIGINT", done);
      process.off("SIGTERM", done);
      resolve();
    };
    process.on("SIGINT", done);
    process.on("SIGTERM", done);
  });
}
