// The request pipeline's plugins, in the order they run at each hook point (hooks.ts). A new side
// effect is one file here and one line in this list.

import { HookSet } from "../hooks.js";
import type { GatewayRuntime } from "../runtime.js";
import { adapterRecord } from "./adapter-record.js";
import { budgetSettle } from "./budget-settle.js";
import { decodeFit } from "./decode-fit.js";
import type { HookFactory } from "./hook-factory.js";
import { inflightGauge } from "./inflight-gauge.js";
import { outlierReport } from "./outlier-report.js";
import { prefixIndex } from "./prefix-index.js";
import { regionWindow } from "./region-window.js";
import { requestLog } from "./request-log.js";
import { requestMetrics } from "./request-metrics.js";
import { rolloutRecord } from "./rollout-record.js";
import { tokenCorrection } from "./token-correction.js";

export const DEFAULT_HOOKS: readonly HookFactory[] = [
  // attempt (undone in reverse when it ends, before its lease goes)
  prefixIndex,
  adapterRecord,
  inflightGauge,
  // attemptEnd
  outlierReport,
  decodeFit,
  tokenCorrection,
  // settle (the log line last)
  budgetSettle,
  requestMetrics,
  rolloutRecord,
  regionWindow,
  requestLog,
];

export function defaultHooks(gw: GatewayRuntime, extra: readonly HookFactory[] = []): HookSet {
  return new HookSet([...DEFAULT_HOOKS, ...extra].map((make) => make(gw)));
}
