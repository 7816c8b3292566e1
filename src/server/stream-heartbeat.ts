// A stream that waits for its first token sends nothing, not even its headers: in the gateway's queue
// (a batch stream may wait its pool's maxQueueMs, tens of seconds) or through a long prefill. A balancer
// or proxy in front with an idle timeout (60 s is common) then cuts it. With `streaming.heartbeatMs`,
// such a stream gets its headers and then an SSE comment — which SSE clients, the official openai ones
// included, skip — every heartbeatMs until its first frame. From then on the request path writes as
// usual; a failure before the first frame goes out as an error event, the status being 200 already.

import type { ServerResponse } from "node:http";

export type HeartbeatStage = "queued" | "waiting for the first token";

export class StreamHeartbeat {
  private timer: NodeJS.Timeout | null;
  /** Whether the client response has started with the heartbeat's headers. */
  started = false;
  /** Said in each comment: where the request is waiting. */
  stage: HeartbeatStage = "queued";

  constructor(
    private readonly res: ServerResponse,
    private readonly everyMs: number,
    /** performance.now() of the request's arrival: each comment says how long it has waited. */
    private readonly since: number,
    /** Sent with the status: what is known before an endpoint is picked (pool, reason, version). */
    private readonly headers: Record<string, string>,
  ) {
    this.timer = setTimeout(this.beat, everyMs);
  }

  /** No more comments: the first frame is about to go out, or the request is over. */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private readonly beat = (): void => {
    this.timer = null;
    const res = this.res;
    // Someone else answered meanwhile (an error sent with its status), or the client left.
    if (res.destroyed || res.writableEnded || (res.headersSent && !this.started)) return;
    if (!this.started) {
      this.started = true;
      res.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        ...this.headers,
      });
    }
    const waited = Math.round((performance.now() - this.since) / 1000);
    res.write(`: tokengate: ${this.stage}, ${waited} s\n\n`);
    this.timer = setTimeout(this.beat, this.everyMs);
  };
}
