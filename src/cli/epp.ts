// `tokengate epp --config <folder>`: the endpoint picker Envoy calls (Gateway API Inference Extension's
// endpoint-picker protocol over Envoy ext_proc, src/epp/), with the gateway's own stages behind it
// (server/epp-picker.ts): the same config, generation, flow control, budgets and picker as `tokengate
// gateway`, the gateway's HTTP API and admin listener beside it — one picker, two front doors.

import { startEppServer } from "../epp/server.js";
import { GatewayEppPicker } from "../server/epp-picker.js";
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
import { startGateway } from "./gateway.js";
import { waitForSignal } from "./sim.js";

export const EPP_USAGE = `Usage: tokengate epp --config <file or folder> [options]

Serves the endpoint-picker protocol as an Envoy ext_proc gRPC server (envoy.service.ext_proc.v3
ExternalProcessor/Process, bodies FULL_DUPLEX_STREAMED): for each request Envoy sends, the gateway's
route, budgets, flow control and endpoint picker choose an engine of the pool, and the reply names it in
the x-gateway-destination-endpoint header and in the envoy.lb dynamic metadata (the rest of the pool's
routable endpoints after it, for Envoy's retries). A subset hint is obeyed; nothing eligible: 503; shed by
flow control: 429. gRPC health for "", liveness, readiness and the ext_proc service on the same port.
The gateway's HTTP API, /health, /ready, /metrics and the admin API run beside it as under
'tokengate gateway'.

Options:
  --config <path>    InferencePool, InferenceRoute and GatewayConfig documents (file or folder)
  --port <n>         the gRPC port (default 9002; 0 = any free port)
  --host <addr>      the gRPC address (default 0.0.0.0)
  --http-port <n>    override listen.port of the HTTP API
  --log <dest>       override logging.destination: stdout, stderr, none, or a file path
  --history <file>   the config history (default :memory:, none kept: the config is the files')
  --no-watch         do not reload when the config's files change (SIGHUP still reloads)

Exit status: 0 after a drain, 1 invalid config, 2 usage.
`;

const OPTIONS = {
  config: { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  "http-port": { type: "string" },
  log: { type: "string" },
  history: { type: "string" },
  "no-watch": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export function readEppArgs(argv: string[]) {
  const { values } = parseFlags({ args: argv, options: OPTIONS });
  if (values.help) return "help" as const;
  const port = portFlag(values.port) ?? 9002;
  const host = textFlag(values.host, "host", "an address to listen on") ?? "0.0.0.0";
  const httpPort = portFlag(values["http-port"], "http-port");
  const log = values.log;
  const problem = log === undefined ? null : logDestinationProblem(log);
  if (problem) throw new UsageError(`--log: ${problem}`);
  if (values.config === undefined) throw new UsageError("--config is required");
  const config = textFlag(values.config, "config", "a file or folder")!;
  const history = textFlag(values.history, "history", "a file path or :memory:") ?? ":memory:";
  return { config, port, host, httpPort, log, history, watch: values["no-watch"] !== true };
}

export async function runEppCommand(argv: string[], io: CommandOutput = processOutput): Promise<number> {
  let args: ReturnType<typeof readEppArgs>;
  try {
    args = readEppArgs(argv);
  } catch (err) {
    return usageFailure("epp", err, EPP_USAGE, io);
  }
  if (args === "help") {
    io.out(EPP_USAGE);
    return 0;
  }
  const gw = await startGateway(args.config, {
    port: args.httpPort,
    logDestination: args.log,
    history: args.history,
    watch: args.watch,
  });
  if (!gw) return 1;
  const epp = await startEppServer({
    host: args.host,
    port: args.port,
    picker: new GatewayEppPicker(gw),
    // Ready as the gateway's /ready: not draining, and every pool with a routable endpoint.
    ready: () => {
      const now = Date.now();
      return !gw.isDraining && [...gw.pools.values()].every((p) => p.endpoints.some((e) => e.routable(now)));
    },
  });
  io.err(
    `tokengate epp: ext_proc on ${args.host}:${epp.port}, HTTP API on ${gw.url} (config ${gw.config.version}); metrics at ${gw.adminUrl}/metrics\n`,
  );
  await waitForSignal();
  const drainMs = gw.config.gateway.shutdown.drainMs;
  io.err(`tokengate epp: draining for up to ${drainMs} ms; a second signal cuts what is left\n`);
  void waitForSignal().then(() => gw.hurry());
  // Streams Envoy has open finish (their requests' accounting with them) while the gateway drains.
  const [, { cut }] = await Promise.all([epp.close(), gw.drain(drainMs)]);
  gw.control?.history.close();
  io.err(`tokengate epp: stopped${cut > 0 ? ` (${cut} request(s) cut)` : ""}\n`);
  return 0;
}
