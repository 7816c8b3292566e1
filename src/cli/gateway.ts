// `tokengate gateway --config <file or folder>`: the OpenAI-compatible gateway in front of the pools.

import { formatConfigError, loadConfig } from "../config/index.js";
import { Gateway } from "../server/gateway.js";
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

export const GATEWAY_USAGE = `Usage: tokengate gateway --config <file or folder> [options]

Serves POST /v1/chat/completions and /v1/completions (streaming and not), GET /v1/models, /health,
/ready and /metrics (on the admin listener when GatewayConfig sets admin.port), and /admin/endpoints.
Request logs: one JSON line per request on stdout (or GatewayConfig logging.destination). A log file
is reopened on SIGUSR2 (rotate with mv, then kill -USR2); lines not yet written are written before the
process ends on a crash or SIGHUP.
SIGTERM or SIGINT drains: no new connections, requests in progress finish for up to shutdown.drainMs
(25 s), then the rest are cut; a second signal cuts them at once.

Options:
  --config <path>   InferencePool, InferenceRoute and GatewayConfig documents (file or folder)
  --port <n>        override listen.port, 0..65535 (0 = any free port)
  --host <addr>     override listen.host
  --log <dest>      override logging.destination: stdout, stderr, none, or a file path
                    (appended to; its folder must exist)

Exit status: 0 after a drain, 1 invalid config, 2 usage.
`;

const OPTIONS = {
  config: { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  log: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** The gateway's flags, checked; "help" for --help. Throws UsageError naming the flag. */
export function readGatewayArgs(argv: string[]) {
  const { values } = parseFlags({ args: argv, options: OPTIONS });
  if (values.help) return "help" as const;
  const port = portFlag(values.port);
  const host = textFlag(values.host, "host", "an address to listen on");
  const log = values.log;
  const problem = log === undefined ? null : logDestinationProblem(log);
  if (problem) throw new UsageError(`--log: ${problem}`);
  if (values.config === undefined) throw new UsageError("--config is required");
  const config = textFlag(values.config, "config", "a file or folder")!;
  return { config, port, host, logDestination: log };
}

export async function runGatewayCommand(argv: string[], io: CommandOutput = processOutput): Promise<number> {
  let args: ReturnType<typeof readGatewayArgs>;
  try {
    args = readGatewayArgs(argv);
  } catch (err) {
    return usageFailure("gateway", err, GATEWAY_USAGE, io);
  }
  if (args === "help") {
    io.out(GATEWAY_USAGE);
    return 0;
  }
  const gw = await startGateway(args.config, args);
  if (!gw) return 1;
  io.err(
    `tokengate gateway: listening on ${gw.url} (config ${gw.config.version}); metrics at ${gw.adminUrl}/metrics\n`,
  );
  await waitForSignal();
  const drainMs = gw.config.gateway.shutdown.drainMs;
  io.err(
    `tokengate gateway: draining ${gw.activeRequests} request(s) for up to ${drainMs} ms; a second signal cuts them now\n`,
  );
  void waitForSignal().then(() => gw.hurry());
  const { cut } = await gw.drain(drainMs);
  io.err(`tokengate gateway: stopped${cut > 0 ? ` (${cut} request(s) cut)` : ""}\n`);
  return 0;
}

/**
 * Loads and validates the config, then starts a gateway; prints every config error and returns null.
 * The gateway's request log is tied to this process: flushed on a crash, reopened on SIGUSR2.
 */
export async function startGateway(
  path: string,
  opts: { port?: number; host?: string; logDestination?: string },
): Promise<Gateway | null> {
  const loaded = await loadConfig(path);
  for (const w of loaded.warnings) process.stderr.write(`warning: ${formatConfigError(w)}\n`);
  if (!loaded.ok) {
    for (const e of loaded.errors) process.stderr.write(`error: ${formatConfigError(e)}\n`);
    process.stderr.write(`tokengate gateway: ${loaded.errors.length} config error(s); not started\n`);
    return null;
  }
  if (opts.logDestination === undefined) {
    const problem = logDestinationProblem(loaded.config.gateway.logging.destination);
    if (problem) {
      process.stderr.write(`tokengate gateway: logging.destination: ${problem}; not started\n`);
      return null;
    }
  }
  const gw = new Gateway(loaded.config, opts);
  attachRequestLogToProcess(gw.log);
  await gw.start();
  return gw;
}
