// `tokengate config validate <path>`: checks a config file or folder and prints a summary or every error.
import type { GatewayConfigSet } from "../config/config-set.js";
import { formatConfigError } from "../config/errors.js";
import type { PoolFlowSettings } from "../config/inference-pool.js";
import { loadConfig } from "../config/loader.js";
import { type CommandOutput, parseFlags, processOutput, UsageError, usageFailure } from "./args.js";
import {
  REMOTE_SUBCOMMANDS,
  REMOTE_USAGE,
  type RemoteSubcommand,
  readRemoteArgs,
  runRemote,
} from "./config-remote.js";

export const CONFIG_USAGE = `Usage: tokengate config validate <file or folder> [--require-env]
${REMOTE_USAGE}
Validates the InferencePool, InferenceRoute and GatewayConfig documents of a YAML file, or of every
*.yaml / *.yml file in a folder. Prints the route config version and aliases → pools → endpoints, or every
error as file:line:column followed by its YAML path. Exit status: 0 valid, 1 invalid, 2 usage.

Options:
  --require-env   treat unset environment variables (sharedSecretEnv) as errors, as the gateway does
`;

export type { CommandOutput } from "./args.js";
export { processOutput } from "./args.js";

export async function runConfigCommand(argv: string[], io: CommandOutput = processOutput): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    return usageFailure("config", err, CONFIG_USAGE, io);
  }
  if (parsed === "help") {
    io.out(CONFIG_USAGE);
    return 0;
  }
  if (parsed.kind === "remote") return runRemote(parsed.remote, io);
  const result = await loadConfig(parsed.path, { missingEnv: parsed.requireEnv ? "error" : "warning" });
  for (const w of result.warnings) io.err(`warning: ${formatConfigError(w)}\n`);
  if (!result.ok) {
    for (const e of result.errors) io.err(`${formatConfigError(e)}\n`);
    const n = result.errors.length;
    io.err(`invalid: ${n} error${n === 1 ? "" : "s"}\n`);
    return 1;
  }
  io.out(describeConfig(result.config));
  return 0;
}

function parse(argv: string[]) {
  if (argv.includes("--help") || argv.includes("-h")) return "help" as const;
  const first = argv.find((a) => !a.startsWith("-"));
  if (REMOTE_SUBCOMMANDS.includes(first as RemoteSubcommand)) {
    return { kind: "remote" as const, remote: readRemoteArgs(argv) };
  }
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    options: { "require-env": { type: "boolean" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) return "help" as const;
  const [sub, path, ...extra] = positionals;
  if (sub === undefined) throw new UsageError('expected "config validate <file or folder>"');
  if (sub !== "validate") {
    throw new UsageError(`unknown subcommand "${sub}" (expected validate, ${REMOTE_SUBCOMMANDS.join(", ")})`);
  }
  if (path === undefined || path.trim() === "") throw new UsageError("validate: expected a file or folder");
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  return { kind: "validate" as const, path, requireEnv: values["require-env"] === true };
}

/** A pool's gateway queue and saturation bounds, in one line. */
function describeFlow(f: PoolFlowSettings): string {
  if (!f.enabled) return "flow control off: requests go to an endpoint at once";
  const bounds = [
    `waiting < ${f.maxWaiting}`,
    `KV < ${Math.round(f.maxKvCacheUsage * 100)}%`,
    f.maxInflight === null ? null : `in flight < ${f.maxInflight}`,
    f.maxInflightTokens === null ? null : `tokens in flight <= ${f.maxInflightTokens}`,
  ].filter((b) => b !== null);
  return `gateway queue (up to ${f.maxQueuedRequests}) until an endpoint has ${bounds.join(", ")}`;
}

/** The summary `config validate` prints: version, aliases → pools → endpoints, rules, gateway settings. */
export function describeConfig(config: GatewayConfigSet): string {
  const lines: string[] = [];
  const docs = config.documents;
  lines.push(`ok: ${docs.length} documents, route config version ${config.version}`);
  const skipped = docs.filter((d) => d.skipped);
  if (skipped.length > 0) lines.push(`skipped: ${skipped.map((d) => `${d.kind} (${d.file})`).join(", ")}`);
  if (config.route.globalMode === "legacy_passthrough") {
    lines.push("globalMode: legacy_passthrough (rules are skipped; every alias uses its default pool)");
  }
  for (const alias of config.route.aliases.values()) {
    const version = alias.defaultVersion ? `, default version ${alias.defaultVersion}` : "";
    lines.push(`alias ${alias.name} (default pool ${alias.defaultPool}${version})`);
    for (const p of alias.pools) {
      const pool = config.pools.get(p.name)!;
      lines.push(
        `  ${p.name}: input ${p.minInputTokens}..${p.maxInputTokens}, output <= ${p.maxOutputTokens} (${p.outputTokensPolicy}), queue <= ${p.maxQueueMs} ms, priority ${p.priority}`,
      );
      lines.push(
        `    ${pool.engine} ${pool.model} (${pool.modelVersion}): ${pool.endpoints.map((e) => e.url).join(", ")}`,
      );
      lines.push(`    ${describeFlow(pool.flowControl)}`);
    }
  }
  for (const [i, r] of config.route.rules.entries()) {
    const w = r.queuePolicy?.pauseWhen;
    const pause = w
      ? ` (paused while ${w.pool} TTFT P95 > ${w.ttftP95MsGt} ms over ${w.windowSeconds} s; resumes below ${w.resumeBelowMs} ms held ${w.resumeAfterSeconds} s)`
      : "";
    lines.push(`rule ${i + 1} ${r.name}: ${describeWhen(r.when)} → ${r.routeTo}${pause}`);
  }
  const g = config.gateway;
  const admin = g.admin.separate ? `${g.admin.host}:${g.admin.port}` : "same listener";
  const heartbeat =
    g.streaming.heartbeatMs > 0 ? `, stream heartbeat after ${g.streaming.heartbeatMs} ms` : "";
  lines.push(`gateway: listen ${g.listen.host}:${g.listen.port}, metrics/admin on ${admin}${heartbeat}`);
  const t = g.auth.trustedUpstreams;
  const trusted = t
    ? `trusted upstreams ${t.addresses.map((a) => `${a.address}/${a.prefix}`).join(", ") || "any address"}${t.sharedSecretEnv || t.sharedSecret ? " with shared secret" : ""}`
    : "no trusted upstreams";
  lines.push(
    `auth: ${g.auth.apiKeys.length} API keys (tenants ${[...new Set(g.auth.apiKeys.map((k) => k.tenant))].join(", ") || "none"}), ${trusted}, anonymous ${g.auth.allowAnonymous ? `allowed as ${g.auth.defaultTenant}` : "refused"}`,
  );
  return `${lines.join("\n")}\n`;
}

function describeWhen(w: GatewayConfigSet["route"]["rules"][number]["when"]): string {
  const parts: string[] = [];
  if (w.taskIn) parts.push(`task in [${w.taskIn.join(", ")}]`);
  if (w.requestClass) parts.push(`class in [${w.requestClass.join(", ")}]`);
  if (w.inputTokensLte !== null) parts.push(`input <= ${w.inputTokensLte}`);
  if (w.inputTokensGt !== null) parts.push(`input > ${w.inputTokensGt}`);
  return parts.length > 0 ? parts.join(", ") : "always";
}
