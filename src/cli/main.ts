#!/usr/bin/env node
// The `tokengate` command: one subcommand per file in this folder.

import { readFileSync } from "node:fs";
import { runSimCommand } from "./sim.js";
import { runStartCommand } from "./start.js";

const USAGE = `Usage: tokengate <command> [options]

Commands:
  start                  run the example platform (simulated engines) on this machine
  gateway --config <p>   run the gateway (OpenAI API on :8080 by default)
  epp --config <p>       run the endpoint picker Envoy calls (ext_proc gRPC on :9002), the gateway beside it
  director --config <f>  run the region director in front of several regions' gateways (:8090)
  sim                    run simulated vLLM/SGLang engine replicas
  bench <scenario>       replay a workload against tokengate and baseline routers, and report
  config validate <path> check a config file or folder
  route explain ...      show which pool a request would go to, and why
  rollout report|promote the rollout stage of a running gateway, its gates, and the next stage
  help                   this text

Run 'tokengate <command> --help' for a command's options.
`;

type Command = (argv: string[]) => Promise<number>;

const commands: Record<string, () => Promise<Command>> = {
  start: async () => runStartCommand,
  sim: async () => runSimCommand,
  gateway: async () => (await import("./gateway.js")).runGatewayCommand,
  epp: async () => (await import("./epp.js")).runEppCommand,
  director: async () => (await import("./director.js")).runDirectorCommand,
  bench: async () => (await import("./bench.js")).runBenchCommand,
  config: async () => (await import("./config.js")).runConfigCommand,
  route: async () => (await import("./route.js")).runRouteCommand,
  rollout: async () => (await import("./rollout.js")).runRolloutCommand,
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name) {
    process.stderr.write(`tokengate: expected a command\n\n${USAGE}`);
    return 2;
  }
  if (name === "help" || name === "--help" || name === "-h") {
    process.stdout.write(USAGE);
    return 0;
  }
  if (name === "--version" || name === "version") {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    process.stdout.write(`tokengate ${pkg.version}\n`);
    return 0;
  }
  const load = commands[name];
  if (!load) {
    process.stderr.write(`tokengate: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  try {
    return await (await load())(rest);
  } catch (err) {
    // Flags are checked by each command (exit 2); what gets here failed while running (a port in use).
    process.stderr.write(`tokengate ${name}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
