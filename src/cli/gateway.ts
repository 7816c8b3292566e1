// `tokengate gateway --config <file or folder>`: the OpenAI-compatible gateway in front of the pools.

import { chmodSync, mkdirSync, statSync, watch, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { formatConfigError } from "../config/index.js";
import { ConfigControl } from "../control/config-control.js";
import { ConfigHistory } from "../control/config-history.js";
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

Serves POST /v1/chat/completions and /v1/completions (streaming and not), GET /v1/models, /health and
/ready on the public listener; /metrics and the admin API (/admin/*, behind the admin token) on the admin
listener (127.0.0.1:9090 unless GatewayConfig admin says).
Config: every version applied is kept in the config history (a SQLite file); at start the files' version
runs unless the history has seen it and another has been put in force since (then that one runs). The
gateway reloads on SIGHUP, when the config's files change, and on POST /admin/config/reload; a config
that fails validation changes nothing (its errors are printed and logged). See tokengate config.
Request logs: one JSON line per request on stdout (or GatewayConfig logging.destination). A log file
is reopened on SIGUSR2 (rotate with mv, then kill -USR2); lines not yet written are written before the
process ends on a crash.
SIGTERM or SIGINT drains: no new connections, requests in progress finish for up to shutdown.drainMs
(25 s), then the rest are cut; a second signal cuts them at once.

Options:
  --config <path>   InferencePool, InferenceRoute and GatewayConfig documents (file or folder)
  --port <n>        override listen.port, 0..65535 (0 = any free port)
  --host <addr>     override listen.host
  --log <dest>      override logging.destination: stdout, stderr, none, or a file path
                    (appended to; its folder must exist)
  --history <file>  the config history (default .tokengate/history.db in the config's folder;
                    :memory: keeps none); a made-up admin token is written beside it
                    (admin-token, mode 600)
  --no-watch        do not reload when the config's files change (SIGHUP still reloads)

Exit status: 0 after a drain, 1 invalid config, 2 usage.
`;

const OPTIONS = {
  config: { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  log: { type: "string" },
  history: { type: "string" },
  "no-watch": { type: "boolean" },
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
  const history = textFlag(values.history, "history", "a file path or :memory:");
  return { config, port, host, logDestination: log, history, watch: values["no-watch"] !== true };
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
  gw.control?.history.close();
  io.err(`tokengate gateway: stopped${cut > 0 ? ` (${cut} request(s) cut)` : ""}\n`);
  return 0;
}

/**
 * Where `tokengate gateway` keeps a config's history and the admin token it made, unless told: a
 * `.tokengate` folder beside the config (in the folder, or beside the file), so each config has its own.
 */
export function stateDirOf(configPath: string): string {
  let dir = configPath;
  try {
    if (!statSync(configPath).isDirectory()) dir = dirname(configPath);
  } catch {
    dir = dirname(configPath);
  }
  return join(dir, ".tokengate");
}

export interface StartOptions {
  port?: number;
  host?: string;
  logDestination?: string;
  /** The config history's SQLite file; default `<stateDir>/history.db`; `:memory:` keeps none. */
  history?: string;
  /** Reload when the config's files change (default true); SIGHUP reloads either way. */
  watch?: boolean;
}

/**
 * Loads and validates the config, consults the config history on which version runs, then starts a
 * gateway that reloads on SIGHUP, on POST /admin/config/reload and when its files change; prints every
 * config error and returns null. The gateway's request log is tied to this process: flushed on a crash,
 * reopened on SIGUSR2.
 */
export async function startGateway(path: string, opts: StartOptions): Promise<Gateway | null> {
  const historyPath = opts.history ?? join(stateDirOf(path), "history.db");
  if (historyPath !== ":memory:") mkdirSync(dirname(historyPath), { recursive: true });
  const history = new ConfigHistory(historyPath);
  let gw: Gateway | null = null;
  const control = new ConfigControl(history, path, {}, (event, fields) => gw?.log.event(event, fields));
  const first = await control.initial();
  if (!first.ok) {
    for (const e of first.errors ?? []) process.stderr.write(`error: ${formatConfigError(e)}\n`);
    process.stderr.write(`tokengate gateway: ${first.message}; not started\n`);
    history.close();
    return null;
  }
  const config = first.config;
  if (opts.logDestination === undefined) {
    const problem = logDestinationProblem(config.gateway.logging.destination);
    if (problem) {
      process.stderr.write(`tokengate gateway: logging.destination: ${problem}; not started\n`);
      history.close();
      return null;
    }
  }
  gw = new Gateway(config, opts);
  gw.control = control;
  control.attach(gw);
  attachRequestLogToProcess(gw.log);
  await gw.start();
  const running = gw;
  const reload = (actor: string) =>
    void control.reloadFromSource(actor).then((r) => {
      if (r.ok && r.unchanged) return;
      if (r.ok) process.stderr.write(`tokengate gateway: reloaded (${actor}): now ${r.config.version}\n`);
      else {
        for (const e of r.errors ?? []) process.stderr.write(`error: ${formatConfigError(e)}\n`);
        process.stderr.write(`tokengate gateway: reload (${actor}) refused: ${r.message}\n`);
      }
    });
  process.on("SIGHUP", () => reload("sighup"));
  if (opts.watch !== false) watchConfig(path, () => reload("watch"));
  if (running.adminTokenGenerated) {
    const tokenFile = join(
      historyPath === ":memory:" ? stateDirOf(path) : dirname(historyPath),
      "admin-token",
    );
    mkdirSync(dirname(tokenFile), { recursive: true });
    writeFileSync(tokenFile, `${running.adminToken.reveal()}\n`, { mode: 0o600 });
    chmodSync(tokenFile, 0o600);
    process.stderr.write(
      `tokengate gateway: admin API at ${running.adminUrl}/admin/ with the token in ${tokenFile} ` +
        `(no admin.token or ${config.gateway.admin.tokenEnv} set: made one)\n`,
    );
  }
  return running;
}

/** Calls `changed` (debounced 300 ms) when the config file, or a YAML file of the folder, changes. */
function watchConfig(path: string, changed: () => void): void {
  let timer: NodeJS.Timeout | null = null;
  try {
    // Asked once: in the callback a folder deleted meanwhile would throw out of the watcher.
    const folder = statSync(path).isDirectory();
    const w = watch(path, { persistent: false }, (_event, name) => {
      if (folder && name !== null && !/\.ya?ml$/i.test(String(name))) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(changed, 300);
      timer.unref();
    });
    w.on("error", () => {});
  } catch {
    // A path that cannot be watched (a network mount): SIGHUP and the admin API still reload.
  }
}
