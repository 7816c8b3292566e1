// `tokengate gateway --config <file or folder>`: the OpenAI-compatible gateway in front of the pools.

import { parseArgs } from "node:util";
import { formatConfigError, loadConfig } from "../config/index.js";
import { Gateway } from "../server/gateway.js";
import { attachRequestLogToProcess } from "../telemetry/request-log-process.js";
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
  --port <n>        override listen.port (0 = any free port)
  --host <addr>     override listen.host
  --log <dest>      override logging.destination: stdout, stderr, none, or a file path
`;

export async function runGatewayCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      config: { type: "string" },
      port: { type: "string" },
      host: { type: "string" },
      log: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(GATEWAY_USAGE);
    return 0;
  }
  if (!values.config) {
    process.stderr.write(`tokengate gateway: --config is required\n\n${GATEWAY_USAGE}`);
    return 2;
  }
  const gw = await startGateway(values.config, {
    port: values.port === undefined ? undefined : Number(values.port),
    host: values.host,
    logDestination: values.log,
  });
  if (!gw) return 1;
  process.stderr.write(
    `tokengate gateway: listening on ${gw.url} (config ${gw.config.version}); metrics at ${gw.adminUrl}/metrics\n`,
  );
  await waitForSignal();
  const drainMs = gw.config.gateway.shutdown.drainMs;
  process.stderr.write(
    `tokengate gateway: draining ${gw.activeRequests} request(s) for up to ${drainMs} ms; a second signal cuts them now\n`,
  );
  void waitForSignal().then(() => gw.hurry());
  const { cut } = await gw.drain(drainMs);
  process.stderr.write(`tokengate gateway: stopped${cut > 0 ? ` (${cut} request(s) cut)` : ""}\n`);
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
  const gw = new Gateway(loaded.config, opts);
  attachRequestLogToProcess(gw.log);
  await gw.start();
  return gw;
}
