// Ties a gateway process's request log to the life of the process (the CLI does this; a Gateway made in
// a test or an embedding program leaves the process alone):
// - an uncaught exception, or an unhandled rejection, that is about to end the process; process exit;
//   and SIGHUP (whose default, ending the process, is kept): the lines still in the log's buffer — up to
//   20 ms of requests — are written synchronously first, so the last requests before a crash are kept;
// - SIGUSR2 reopens the log file, for rotation by moving it away and signalling (as nginx's USR1).
// SIGTERM and SIGINT drain the gateway, which closes (and so flushes) the log; nothing to add for them.

import type { RequestLog } from "./request-log.js";

/** Installs the hooks; returns a function that removes them. */
export function attachRequestLogToProcess(log: RequestLog, proc: NodeJS.Process = process): () => void {
  // `uncaughtExceptionMonitor` runs before Node's own handling and leaves it as it is: the error is still
  // printed and the process still ends with status 1. With the default --unhandled-rejections=throw an
  // unhandled rejection arrives here too (origin "unhandledRejection").
  const onCrash = () => log.flushSync();
  const onExit = () => log.flushSync();
  const onHangup = () => {
    log.flushSync();
    proc.off("SIGHUP", onHangup);
    // Die of the signal, as without this hook, unless something else in the process handles it.
    if (proc.listenerCount("SIGHUP") === 0) proc.kill(proc.pid, "SIGHUP");
  };
  const onRotate = () => {
    log.reopen();
  };
  proc.on("uncaughtExceptionMonitor", onCrash);
  proc.on("exit", onExit);
  proc.on("SIGHUP", onHangup);
  // Windows has no SIGUSR2.
  if (proc.platform !== "win32") proc.on("SIGUSR2", onRotate);
  return () => {
    proc.off("uncaughtExceptionMonitor", onCrash);
    proc.off("exit", onExit);
    proc.off("SIGHUP", onHangup);
    proc.off("SIGUSR2", onRotate);
  };
}
