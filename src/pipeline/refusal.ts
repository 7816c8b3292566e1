// A request's path ended in an error before an answer: the gateway error to send (an unexpected throw
// is an `internal_error`), recorded on the request and counted. Every front door ends its errors here.

import { GatewayError } from "../errors/gateway-error.js";
import type { RequestRecord } from "./request-record.js";
import type { GatewayRuntime } from "./runtime.js";

export function recordRefusal(gw: GatewayRuntime, rec: RequestRecord, err: unknown): GatewayError {
  const e =
    err instanceof GatewayError
      ? err
      : new GatewayError("internal_error", `internal error: ${(err as Error).message}`);
  rec.errorCode = e.code;
  rec.httpStatus = e.status;
  rec.status = e.status >= 500 ? "error" : "rejected";
  gw.metrics.rejections.labels(e.code, rec.tenant ?? "unknown").inc();
  return e;
}
