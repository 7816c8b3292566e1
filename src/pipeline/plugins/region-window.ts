// The region summary's window of recent answers (telemetry/region-window.ts): when each ended, a
// stream's TTFT, and whether it failed on the gateway's or the engines' side (a 5xx).

import type { HookFactory } from "./hook-factory.js";

export const regionWindow: HookFactory = (gw) => ({
  name: "region-window",
  settle(rec) {
    const streamedTtft =
      rec.stream === true && Number.isFinite(rec.firstTokenAt) ? rec.firstTokenAt - rec.t0 : Number.NaN;
    gw.regionWindow.record(Date.now(), streamedTtft, rec.httpStatus >= 500);
  },
});
