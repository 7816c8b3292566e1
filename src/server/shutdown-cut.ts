// The end of a drain that ran out of time: what is still in progress is cut. A stream that has started is
// told why (an error event, which the openai client raises) and its connection closed after the event
// has left; anything else is closed at once. Either way its handler sees the client gone — engine
// request aborted, counters released, the request logged with status `shutdown`.

import type http from "node:http";
import { GatewayError } from "../errors/gateway-error.js";

/** Cuts every response in `inProgress`, then gives their handlers up to 2 s to clean up (`active()` → 0). */
export async function cutInProgress(
  inProgress: ReadonlySet<http.ServerResponse>,
  active: () => number,
): Promise<void> {
  const told: http.ServerResponse[] = [];
  for (const res of inProgress) {
    if (startedStream(res)) {
      const e = new GatewayError("gateway_shutdown", "the gateway shut down before this stream finished", {
        retryAfterSeconds: 1,
        fallbackOptions: ["retry_later"],
      });
      res.write(`data: ${e.body(String(res.getHeader("x-ai-trace-id") ?? "none"))}\n\n`);
      told.push(res);
    } else {
      res.socket?.destroy();
    }
  }
  await new Promise((r) => setImmediate(r)); // a response's writes leave on the next tick
  for (const res of told) res.socket?.end();
  // Their handlers see the client gone, abort upstream, release counters and log; give them a moment.
  for (const until = Date.now() + 2000; active() > 0 && Date.now() < until; ) await sleep(10);
}

/** A streamed reply under way: its headers are out and its end is not. */
function startedStream(res: http.ServerResponse): boolean {
  return (
    res.headersSent &&
    !res.writableEnded &&
    !res.destroyed &&
    String(res.getHeader("content-type") ?? "").startsWith("text/event-stream")
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
