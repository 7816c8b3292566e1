// `tokengate director --config <file>`: the global layer that picks a region for each request from the
// regions' summaries; `tokengate director explain` asks a running director why it would pick one.

import { readFile } from "node:fs/promises";
import { DIRECTOR_DEFAULTS, parseDirectorConfig } from "../director/director-config.js";
import { RegionDirectorCore } from "../director/director-core.js";
import { startDirector } from "../director/director-service.js";
import type { DirectorDecision, DirectorQuery, RegionCandidate } from "../director/director-types.js";
import { attachRequestLogToProcess } from "../telemetry/request-log-process.js";
import {
  type CommandOutput,
  logDestinationProblem,
  parseFlags,
  portFlag,
  processOutput,
  textFlag,
  UsageError,
  usageFailure,
} from "./args.js";
import { waitForSignal } from "./sim.js";

export const DEFAULT_DIRECTOR_URL = `http://127.0.0.1:${DIRECTOR_DEFAULTS.listen.port}`;

/** How long a stop lets requests in progress (streams) finish. */
const DRAIN_MS = 25_000;

export const DIRECTOR_USAGE = `Usage: tokengate director --config <file> [--port <n>] [--log <dest>]
       tokengate director explain --tenant <t> --model <m> [--caller-region <r>] [--session <s>]
                                  [--director <url>] [--json]

Runs the region director (a RegionDirector document): it polls each region's gateway summary
(/admin/region/summary) and picks a region for each request — residency, health, model, headroom,
latency from the caller, cost, with hysteresis, a breaker per region, spillover and session affinity.
On one listener (0.0.0.0:8090 unless listen says):
  POST /v1/*               mode forward: sent to the region's gateway and the reply relayed (streams
                           chunk by chunk), retried once elsewhere if the region fails before its
                           first byte; mode redirect: 307 to the region's gateway
  GET  /director/answer    ?tenant=&model=[&caller_region=][&session=][&dry_run=1]: the region for
                           DNS/GSLB callers, with its gateway URL and a TTL
  GET  /director/explain   the same query: the decision, every candidate's score terms or filter
  GET  /director/regions   each region's breaker, summary age and last summary
  POST /director/summary   a region pushes its summary
  GET  /health, /ready, /metrics
The tenant is X-AI-Tenant (the entry in front is trusted), else anonymous; the caller's region
X-AI-Caller-Region; the session the affinity header (affinity by tenant when affinity.header is
false); the model the body's "model".
Decision logs: one JSON line per request on stdout (or --log).
SIGTERM or SIGINT stops: no new connections, requests in progress finish for up to 25 s; a second
signal cuts them at once.

explain asks a running director (--director, default ${DEFAULT_DIRECTOR_URL}) where a request
would go and why, without recording anything, and prints the region, the reason and each candidate's
score terms, or why it was filtered.

Options:
  --config <file>        the RegionDirector document
  --port <n>             override listen.port, 0..65535 (0 = any free port)
  --log <dest>           stdout (default), stderr, none, or a file path (appended to)
  --tenant <t>           explain: the tenant (default anonymous)
  --model <m>            explain: the model alias (required)
  --caller-region <r>    explain: the caller's region
  --session <s>          explain: the session key (default the tenant)
  --director <url>       explain: the director's URL
  --json                 explain: print the director's answer as JSON

Exit status: director: 0 after a stop, 1 invalid config, 2 usage; explain: 0 a region, 1 refused
or no answer, 2 usage.
`;

const SERVE_OPTIONS = {
  config: { type: "string" },
  port: { type: "string" },
  log: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

const EXPLAIN_OPTIONS = {
  tenant: { type: "string" },
  model: { type: "string" },
  "caller-region": { type: "string" },
  session: { type: "string" },
  director: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** The director's flags, checked; "help" for --help. Throws UsageError naming the flag. */
export function readDirectorArgs(argv: string[]) {
  const { values } = parseFlags({ args: argv, options: SERVE_OPTIONS });
  if (values.help) return "help" as const;
  const port = portFlag(values.port);
  const log = values.log;
  const problem = log === undefined ? null : logDestinationProblem(log);
  if (problem) throw new UsageError(`--log: ${problem}`);
  if (values.config === undefined) throw new UsageError("--config is required");
  const config = textFlag(values.config, "config", "a file")!;
  return { config, port, logDestination: log };
}

/** `director explain`'s flags, checked. */
export function readExplainArgs(argv: string[]) {
  const { values } = parseFlags({ args: argv, options: EXPLAIN_OPTIONS });
  if (values.help) return "help" as const;
  const model = textFlag(values.model, "model", "a model alias");
  if (model === undefined) throw new UsageError("explain needs --model <alias>");
  const director = (values.director ?? DEFAULT_DIRECTOR_URL).replace(/\/+$/, "");
  if (!/^https?:\/\/[^/\s]+/.test(director))
    throw new UsageError(`--director: expected the director's http:// or https:// URL, got "${director}"`);
  return {
    model,
    tenant: textFlag(values.tenant, "tenant", "a tenant"),
    callerRegion: textFlag(values["caller-region"], "caller-region", "a region name"),
    session: textFlag(values.session, "session", "a session key"),
    director,
    json: values.json === true,
  };
}

export async function runDirectorCommand(argv: string[], io: CommandOutput = processOutput): Promise<number> {
  if (argv[0] === "explain") return runExplain(argv.slice(1), io);
  let args: ReturnType<typeof readDirectorArgs>;
  try {
    args = readDirectorArgs(argv);
  } catch (err) {
    return usageFailure("director", err, DIRECTOR_USAGE, io);
  }
  if (args === "help") {
    io.out(DIRECTOR_USAGE);
    return 0;
  }
  let text: string;
  try {
    text = await readFile(args.config, "utf8");
  } catch (err) {
    io.err(`tokengate director: cannot read ${args.config}: ${(err as Error).message}\n`);
    return 1;
  }
  const parsed = parseDirectorConfig(text, args.config);
  if (!parsed.ok) {
    for (const e of parsed.errors) io.err(`error: ${e}\n`);
    io.err(`tokengate director: ${parsed.errors.length} error(s) in ${args.config}; not started\n`);
    return 1;
  }
  const { config } = parsed;
  const d = await startDirector({
    config,
    core: new RegionDirectorCore(config),
    ...(args.port === undefined ? {} : { port: args.port }),
    ...(args.logDestination === undefined ? {} : { logDestination: args.logDestination }),
  });
  const detach = attachRequestLogToProcess(d.log);
  const names = config.regions.map((r) => r.name).join(", ");
  io.err(`tokengate director: listening on ${d.url} (mode ${config.mode}; regions ${names})\n`);
  await waitForSignal();
  io.err(
    `tokengate director: stopping; ${d.activeRequests} request(s) in progress may finish for up to ${DRAIN_MS} ms\n`,
  );
  void waitForSignal().then(() => d.hurry());
  await d.stop(DRAIN_MS);
  detach();
  io.err("tokengate director: stopped\n");
  return 0;
}

interface ExplainAnswer {
  readonly query: DirectorQuery;
  readonly decision: DirectorDecision;
  readonly gateway_url: string | null;
}

async function runExplain(argv: string[], io: CommandOutput): Promise<number> {
  let args: ReturnType<typeof readExplainArgs>;
  try {
    args = readExplainArgs(argv);
  } catch (err) {
    return usageFailure("director", err, DIRECTOR_USAGE, io);
  }
  if (args === "help") {
    io.out(DIRECTOR_USAGE);
    return 0;
  }
  const params = new URLSearchParams({ model: args.model });
  if (args.tenant) params.set("tenant", args.tenant);
  if (args.callerRegion) params.set("caller_region", args.callerRegion);
  if (args.session) params.set("session", args.session);
  let status: number;
  let text: string;
  try {
    const res = await fetch(`${args.director}/director/explain?${params}`);
    status = res.status;
    text = await res.text();
  } catch (err) {
    const cause = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
    io.err(`tokengate director: --director ${args.director}: no answer (${cause})\n`);
    return 1;
  }
  let answer: ExplainAnswer;
  try {
    answer = JSON.parse(text) as ExplainAnswer;
    if (status !== 200 || answer.decision === undefined) throw new Error(text.slice(0, 500));
  } catch {
    io.err(`tokengate director: --director ${args.director} answered ${status}: ${text.slice(0, 500)}\n`);
    return 1;
  }
  io.out(args.json ? `${JSON.stringify(answer, null, 2)}\n` : describeExplain(answer));
  return answer.decision.kind === "region" ? 0 : 1;
}

/** The decision, readably: the region and reason (or the refusal), the query, then each candidate. */
export function describeExplain(a: ExplainAnswer): string {
  const d = a.decision;
  const q = a.query;
  const lines =
    d.kind === "region"
      ? [
          `region: ${d.region} (${a.gateway_url ?? "no gateway URL"})`,
          `reason: ${d.reason}${d.affinity === null ? "" : `, affinity ${d.affinity}`}`,
        ]
      : [`refused: ${d.code}`, `message: ${d.message}`];
  const caller = q.callerRegion ?? "unknown (latency not scored)";
  lines.push(
    `query: tenant ${q.tenant}, model ${q.model}, caller region ${caller}, session ${q.session ?? "none"}`,
  );
  lines.push("candidates:");
  const width = Math.max(...d.candidates.map((c) => c.region.length), 1);
  const ordered = [...d.candidates].sort((x, y) => (y.score ?? -1) - (x.score ?? -1));
  for (const c of ordered) lines.push(`  ${c.region.padEnd(width)}  ${candidateText(c)}`);
  return `${lines.join("\n")}\n`;
}

function candidateText(c: RegionCandidate): string {
  if (c.filtered !== null) return `filtered: ${c.filtered}`;
  const term = (name: string, v: number | null) => `${name} ${v === null ? "-" : v.toFixed(3)}`;
  const t = c.terms;
  const terms = [
    term("latency", t.latency),
    term("headroom", t.headroom),
    term("errors", t.errors),
    term("cost", t.cost),
  ];
  return `score ${c.score === null ? "-" : c.score.toFixed(3)}  (${terms.join(", ")})`;
}
