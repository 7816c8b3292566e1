// Test fixture: `tokengate gateway` — the CLI's own command, process hooks included — in a process that
// fails on purpose right after the gateway has logged CRASH_AFTER_LINES request lines, while the last of
// them are still in the log's buffer (its flush waits 20 ms; the failure comes on the next turn of the
// loop). CRASH_HOW is `throw` (an uncaught exception), `reject` (an unhandled rejection) or `sighup`
// (which reloads the config and must not end the process: SIGTERM follows half a second later).
// CRASH_UNHOOKED=1 removes the log's crash hooks first, to show what they save.
// Only tests run this file: dist/testing is not in the package, and nothing in src/cli reads these variables.

import { runGatewayCommand } from "../cli/gateway.js";
import { RequestLog, type RequestLogLine } from "../telemetry/request-log.js";

const after = Number(process.env.CRASH_AFTER_LINES);
const how = process.env.CRASH_HOW ?? "throw";
if (!(after > 0)) throw new Error("crash-gateway: set CRASH_AFTER_LINES");

function fail(): void {
  if (process.env.CRASH_UNHOOKED === "1") {
    process.removeAllListeners("uncaughtExceptionMonitor");
    process.removeAllListeners("exit");
    process.removeAllListeners("SIGHUP");
  }
  if (how === "throw") throw new Error("crash-gateway: a test crash");
  if (how === "reject") void Promise.reject(new Error("crash-gateway: a test rejection"));
  else if (how === "sighup") {
    process.kill(process.pid, "SIGHUP");
    setTimeout(() => process.kill(process.pid, "SIGTERM"), 500).unref();
  }
}

let lines = 0;
const write = RequestLog.prototype.write;
RequestLog.prototype.write = function (this: RequestLog, line: RequestLogLine): void {
  write.call(this, line);
  if (++lines === after) setImmediate(fail);
};

runGatewayCommand(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`crash-gateway: ${String(err)}\n`);
    process.exitCode = 2;
  },
);
