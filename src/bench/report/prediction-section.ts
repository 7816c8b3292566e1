// report.md's TTFT prediction error (issue 13): how far the gateway's prediction at each pick
// (`predicted_ttft_ms`) was from the TTFT that followed (`ttft_ms`), per router that keeps a log.

import type { PredictionErrorResult } from "../results.js";
import { formatCount, formatMs, formatNumber } from "./format.js";
import { figuresRight, mdTable } from "./md-table.js";
import { type Ran, routerTitle } from "./router-title.js";

/** Issue 13: the prediction error's P50 under this, on every scenario. */
export const PREDICTION_P50_BELOW_PCT = 25;

const pct = (x: number | null) => (x === null ? "n/a" : `${formatNumber(x, 1)}%`);

function cells(e: PredictionErrorResult): string[] {
  if (e.count === 0) return ["0", ...Array<string>(5).fill("n/a")];
  const p50 = e.relative_pct.p50;
  const mark = p50 === null ? "" : p50 < PREDICTION_P50_BELOW_PCT ? " ✓" : " ✗";
  const a = e.after_queue;
  return [
    formatCount(e.count),
    `${pct(p50)}${mark}`,
    pct(e.relative_pct.p90),
    formatMs(e.absolute_ms.p50),
    formatMs(e.absolute_ms.p90),
    `${pct(a.relative_pct.p50)} / ${pct(a.relative_pct.p90)}`,
  ];
}

export function predictionSection(ran: Ran): string {
  if (ran.length === 0) return "";
  const head = [
    "Router",
    "Lines with both",
    "Error P50",
    "Error P90",
    "|Δ| P50",
    "|Δ| P90",
    "After the gateway queue: error P50 / P90",
  ];
  const rows = ran.map(([name, r]) =>
    r.prediction_error
      ? [routerTitle(name, r), ...cells(r.prediction_error)]
      : [routerTitle(name, r), "n/a (no request log)", ...Array<string>(5).fill("n/a")],
  );
  const none = ran.some(([, r]) => r.prediction_error?.count === 0)
    ? " A router with 0 lines logged no `predicted_ttft_ms`."
    : "";
  const intro =
    "The gateway's TTFT prediction when it picked an endpoint (`predicted_ttft_ms` in its request log: " +
    "the time the request had spent already, plus the engine's step law from dispatch) against the TTFT " +
    "it logged for the request (`ttft_ms`; both from its arrival at the gateway to the first token). " +
    "Error: |predicted − actual| / actual; |Δ|: |predicted − actual|. The last column takes the gateway " +
    `queue's wait (\`gateway_queue_ms\`) from both: the part after the request left the queue. ✓: P50 under ` +
    `${PREDICTION_P50_BELOW_PCT}% (issue 13).${none}`;
  return `## TTFT prediction error\n\n${intro}\n\n${mdTable(head, rows, figuresRight(head.length))}`;
}
