// `tokengate route explain`: shows which pool a request would go to and why, without sending anything.

import { readFile } from "node:fs/promises";
import type { GatewayConfigSet } from "../config/config-set.js";
import { formatConfigError } from "../config/errors.js";
import { loadConfig } from "../config/loader.js";
import { GatewayError } from "../errors/gateway-error.js";
import { planSummary } from "../plan/plan-summary.js";
import { planRequest, type RequestPlan, RouteRefusal } from "../plan/request-plan.js";
import { rolloutOf } from "../plan/rollout-of.js";
import type { ChatMessageLike } from "../profile/token-estimate.js";
import { sendsToLegacy } from "../route/rollout-effect.js";
import type { RouteDecision } from "../route/route-decision.js";
import { adminTarget } from "./admin-client.js";
import { type CommandOutput, intFlag, parseFlags, processOutput, UsageError, usageFailure } from "./args.js";

export const ROUTE_USAGE = `Usage: tokengate route explain --config <path> --task <task> --input-tokens <n> [options]
       tokengate route explain --config <path> --request <body.json> [options]
       tokengate route explain --gateway <admin url> --request <body.json> [--task t] [--class c]

Prints the pool a request would be routed to, the route reason, the upstream model and version, how
max_tokens is handled, and every rule checked. Nothing is sent anywhere.

Options:
  --config <path>        config file or folder (required)
  --request <file>       an OpenAI chat (or completions) request body; input tokens are estimated from it,
                         and model, max_tokens, metadata.task and metadata.request_class are read from it
  --model <alias>        model alias (default: the request's model, or the only alias)
  --task <task>          X-AI-Task
  --class <class>        X-AI-Request-Class
  --input-tokens <n>     input tokens (overrides the estimate from --request)
  --max-tokens <n>       max_tokens
  --tenant <tenant>      the caller's tenant (weighted targets stick by it)
  --header "name: value" another request header (e.g. a stickyBy header); repeatable
  --json                 print the decision (or the error) as JSON

With --gateway <admin URL>, the running gateway answers instead (POST /admin/explain): the route decision
and the endpoint picker's filters, top scores and mode against the live pool, still without sending the
request. The admin token: --token-file <file>, else $TOKENGATE_ADMIN_TOKEN, else ./.tokengate/admin-token.
Exit status: 0 routed, 1 rejected, invalid config or no answer from --gateway, 2 usage.
`;

/** `route explain --gateway`: asks a running gateway, which knows the live endpoints and the prefix index. */
async function explainLive(argv: string[], io: CommandOutput): Promise<number> {
  let values: ReturnType<typeof readLiveArgs>;
  let body: unknown;
  try {
    values = readLiveArgs(argv);
    body = await readJson(values.request);
  } catch (err) {
    return usageFailure("route", err, ROUTE_USAGE, io);
  }
  let token: string;
  try {
    token = adminTarget({ admin: values.gateway, tokenFile: values["token-file"] }).token;
  } catch (err) {
    return usageFailure("route", err, ROUTE_USAGE, io);
  }
  const headers: Record<string, string> = {
    "content-type": "application/json",
    authorization: `Bearer ${token}`,
  };
  if (values.task) headers["x-ai-task"] = values.task;
  if (values.class) headers["x-ai-request-class"] = values.class;
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${values.gateway.replace(/\/$/, "")}/admin/explain`, {
      method: "POST",
      headers,
      body: JSON.stringify({ kind: values.completion ? "completion" : "chat", body }),
    });
    text = await res.text();
  } catch (err) {
    const cause = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
    io.err(`tokengate route: --gateway ${values.gateway}: no answer (${cause})\n`);
    return 1;
  }
  io.out(`${text.startsWith("{") ? JSON.stringify(JSON.parse(text), null, 2) : text}\n`);
  return res.ok && !text.includes('"error"') ? 0 : 1;
}

function readLiveArgs(argv: string[]) {
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    options: {
      gateway: { type: "string" },
      "token-file": { type: "string" },
      request: { type: "string" },
      task: { type: "string" },
      class: { type: "string" },
      completion: { type: "boolean" },
    },
  });
  if (positionals.length !== 1 || positionals[0] !== "explain")
    throw new UsageError('expected "route explain --gateway <admin url> --request <body.json>"');
  const gateway = values.gateway!;
  if (!/^https?:\/\/[^/\s]+/.test(gateway))
    throw new UsageError(
      `--gateway: expected the admin listener's http:// or https:// URL, got "${gateway}"`,
    );
  if (!values.request) throw new UsageError("--gateway needs --request <body.json>");
  return { ...values, gateway, request: values.request };
}

export async function runRouteCommand(argv: string[], io: CommandOutput = processOutput): Promise<number> {
  if (argv.some((a) => a === "--gateway" || a.startsWith("--gateway="))) return explainLive(argv, io);
  let args: Awaited<ReturnType<typeof readArgs>>;
  try {
    args = await readArgs(argv);
  } catch (err) {
    return usageFailure("route", err, ROUTE_USAGE, io);
  }
  if (args === "help") {
    io.out(ROUTE_USAGE);
    return 0;
  }
  const loaded = await loadConfig(args.config, { missingEnv: "warning" });
  if (!loaded.ok) {
    for (const e of loaded.errors) io.err(`${formatConfigError(e)}\n`);
    return 1;
  }
  const aliases = [...loaded.config.route.aliases.keys()];
  const modelAlias = args.model ?? (aliases.length === 1 ? aliases[0]! : undefined);
  if (modelAlias === undefined) {
    io.err(`tokengate route: --model is required (aliases: ${aliases.join(", ")})\n`);
    return 2;
  }
  // The same plan the gateway makes, from the same body and headers (no learned token correction here).
  const body: Record<string, unknown> = {
    messages: [{ role: "user", content: "" }],
    ...args.body,
    model: modelAlias,
  };
  if (args.maxTokens !== undefined) {
    body.max_tokens = args.maxTokens;
    delete body.max_completion_tokens;
  }
  const headers: Record<string, string> = Object.fromEntries(args.headers);
  if (args.task) headers["x-ai-task"] = args.task;
  if (args.requestClass) headers["x-ai-request-class"] = args.requestClass;
  let plan: RequestPlan;
  try {
    plan = planRequest(
      loaded.config,
      null,
      { kind: args.body.prompt !== undefined ? "completion" : "chat", body, headers, tenant: args.tenant },
      { explain: true, ...(args.inputTokens === undefined ? {} : { inputTokens: args.inputTokens }) },
    );
  } catch (err) {
    if (!(err instanceof RouteRefusal)) {
      if (err instanceof GatewayError) {
        io.err(`tokengate route: ${err.param ? `${err.param}: ` : ""}${err.message}\n`);
        return 2;
      }
      throw err;
    }
    const error = openAIError(err);
    const rollout = rolloutLines(loaded.config, null, body, headers, args.tenant);
    if (args.json) io.out(`${JSON.stringify({ error, explain: err.explain, rollout }, null, 2)}\n`);
    else {
      io.out(`${JSON.stringify({ error }, null, 2)}\n`);
      io.out(`trace:\n${err.explain.map((l) => `  ${l}\n`).join("")}`);
      if (rollout) io.out(`${rollout.join("\n")}\n`);
    }
    return 1;
  }
  const inputSource =
    args.inputTokens !== undefined
      ? `${args.inputTokens} (given)`
      : `${plan.decision.inputTokens} (estimated from ${args.requestFile ?? "the request"})`;
  const rollout = rolloutLines(loaded.config, plan, body, headers, args.tenant);
  if (args.json)
    io.out(`${JSON.stringify({ ...plan.decision, summary: planSummary(plan), rollout }, null, 2)}\n`);
  else io.out(`${describeDecision(plan.decision, inputSource)}${rollout ? `${rollout.join("\n")}\n` : ""}`);
  return 0;
}

/** Who serves it under the config's rollout stage or route rollback; null when tokengate serves everything. */
function rolloutLines(
  config: GatewayConfigSet,
  plan: RequestPlan | null,
  body: unknown,
  headers: Record<string, string>,
  tenant: string | null,
): string[] | null {
  if (!sendsToLegacy(config.route)) return null;
  const trace: string[] = [];
  const { effect } = rolloutOf(config, plan, body, headers, tenant, trace);
  const served =
    effect.to === "route"
      ? `tokengate${effect.note ? ` (${effect.note})` : ""}`
      : `the legacy service ${config.route.legacy!.url} (${effect.reason})`;
  return [`served by: ${served}`, ...trace.map((l) => `  ${l}`)];
}

/** seed 004's extended OpenAI error body for a routing refusal. */
export function openAIError(r: RouteRefusal) {
  return {
    message: r.message,
    type: r.type,
    code: r.code,
    param: r.param,
    route: r.route,
    fallback_options: r.fallbackOptions,
  };
}

function describeDecision(d: RouteDecision, inputSource: string): string {
  const maxTokens =
    d.maxTokensSource === "pool_default"
      ? `${d.maxTokens} (not in the request: the pool's maxOutputTokens)`
      : d.maxTokensClamped
        ? `${d.maxTokens} (clamped from ${d.maxTokensRequested}: the pool's maxOutputTokens)`
        : `${d.maxTokens} (as requested; pool limit ${d.poolConfig.maxOutputTokens})`;
  const pause = d.queuePolicy?.pauseWhen;
  const lines = [
    `pool: ${d.pool}`,
    `reason: ${d.reason} (metric label ${d.reasonLabel})`,
    `upstream model: ${d.upstreamModel}, version ${d.modelVersion}`,
    `input tokens: ${inputSource}`,
    `max_tokens: ${maxTokens}`,
    `task known: ${d.taskKnown ? "yes" : "no (counted as an unknown task)"}`,
    `priority ${d.priority}, max queue ${d.maxQueueMs} ms`,
    ...(pause
      ? [
          `queue policy: pause while ${pause.pool} TTFT P95 > ${pause.ttftP95MsGt} ms over ${pause.windowSeconds} s`,
        ]
      : []),
    `config version: ${d.configVersion}`,
    "trace:",
    ...d.explain.map((l) => `  ${l}`),
  ];
  return `${lines.join("\n")}\n`;
}

async function readArgs(argv: string[]) {
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: "string" },
      request: { type: "string" },
      model: { type: "string" },
      task: { type: "string" },
      class: { type: "string" },
      "input-tokens": { type: "string" },
      "max-tokens": { type: "string" },
      tenant: { type: "string" },
      header: { type: "string", multiple: true },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help" as const;
  if (positionals.length !== 1 || positionals[0] !== "explain")
    throw new UsageError(
      positionals[0] === "explain" ? `unexpected argument "${positionals[1]}"` : 'expected "route explain"',
    );
  if (!values.config) throw new UsageError("--config is required");
  const body = values.request ? await readBody(values.request) : {};
  const inputTokens = intFlag(values["input-tokens"], "input-tokens", 0);
  if (inputTokens === undefined && !values.request)
    throw new UsageError("give --input-tokens, or --request with messages or prompt");
  return {
    config: values.config,
    json: values.json ?? false,
    model: values.model ?? (typeof body.model === "string" ? body.model : undefined),
    body,
    requestFile: values.request ?? null,
    inputTokens,
    maxTokens: intFlag(values["max-tokens"], "max-tokens", 1),
    task: values.task ?? null,
    requestClass: values.class ?? null,
    tenant: values.tenant ?? null,
    headers: (values.header ?? []).map(headerArg),
  };
}

interface RequestBody {
  model?: string;
  messages?: ChatMessageLike[];
  prompt?: string | string[];
  max_tokens?: number;
  max_completion_tokens?: number;
  metadata?: Record<string, unknown>;
  /** Seed 004's sample requests carry the task at the top level. */
  task?: unknown;
}

/** The JSON in a --request file (sent as it is to a live gateway, which checks it). */
async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, "utf8"));
  } catch (err) {
    throw new UsageError(`--request ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function readBody(file: string): Promise<RequestBody> {
  const value = await readJson(file);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UsageError(`--request ${file}: expected a JSON object`);
  }
  const b = value as Record<string, unknown>;
  const check = (ok: boolean, field: string, what: string) => {
    if (!ok) throw new UsageError(`--request ${file}: ${field} must be ${what}`);
  };
  check(b.model === undefined || typeof b.model === "string", "model", "a string");
  check(b.messages === undefined || Array.isArray(b.messages), "messages", "a list");
  for (const key of ["max_tokens", "max_completion_tokens"]) {
    const v = b[key];
    check(
      v === undefined || v === null || (Number.isSafeInteger(v) && (v as number) > 0),
      key,
      "a positive integer",
    );
  }
  check(
    b.metadata === undefined || (typeof b.metadata === "object" && !Array.isArray(b.metadata)),
    "metadata",
    "an object",
  );
  return {
    ...b,
    max_tokens: (b.max_tokens as number | null) ?? undefined,
    max_completion_tokens: (b.max_completion_tokens as number | null) ?? undefined,
  } as RequestBody;
}

/** `--header "x-user-id: u-17"` → ["x-user-id", "u-17"] (names lowercased, as Node's server has them). */
function headerArg(text: string): [string, string] {
  const i = text.indexOf(":");
  const name = i > 0 ? text.slice(0, i).trim().toLowerCase() : "";
  if (!/^[a-z0-9-]+$/.test(name)) throw new UsageError(`--header: expected "name: value", got "${text}"`);
  return [name, text.slice(i + 1).trim()];
}
