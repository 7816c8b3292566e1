// The request's one log line, written last.

import type { HookFactory } from "./hook-factory.js";

export const requestLog: HookFactory = (gw) => ({
  name: "request-log",
  settle(rec) {
    gw.log.write(rec.toLogLine(performance.now()));
  },
});
