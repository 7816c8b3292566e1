// How the batch runner sends a line: as an HTTP request to this gateway's own public listener, so a
// line takes exactly the path any request takes — identify, profile, route, budget, queue, pick,
// forward, settle, one log line — with nothing re-implemented beside it. The job's tenant rides on
// X-AI-Tenant, believed only with the process's own secret (BATCH_SECRET_HEADER); the class is `batch`;
// the task is the line's own, else the job's `metadata.task` (seed 004's `batch_recompute_summary`), so
// batch lines are not counted as unknown tasks.

import { Pool } from "undici";
import type { LineAnswer, LineSender } from "./batch-runner.js";
import type { ClaimedLine } from "./batch-store.js";

/** The secret header's name (server/identify.ts reads it; kept as a string here to stay low in the graph). */
const SECRET_HEADER = "x-tokengate-batch";

export class LoopbackSender {
  private readonly pool: Pool;

  constructor(
    origin: string,
    private readonly secret: string,
    connections: number,
  ) {
    // No client-side deadlines: a line may wait in the batch queue for its pool's maxQueueMs and then run
    // for the gateway's own totalMs, and the gateway answers every such end itself (undici's default
    // 300 s would cut it and count an engine failure).
    this.pool = new Pool(origin, {
      connections,
      keepAliveTimeout: 30_000,
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  readonly send: LineSender = async (line: ClaimedLine, signal: AbortSignal): Promise<LineAnswer> => {
    try {
      const body = JSON.parse(line.body) as Record<string, unknown>;
      const task = line.jobTask !== null && !namesTask(body) ? { "x-ai-task": line.jobTask } : {};
      const res = await this.pool.request({
        method: "POST",
        path: line.endpoint,
        signal,
        headers: {
          "content-type": "application/json",
          [SECRET_HEADER]: this.secret,
          "x-ai-tenant": line.tenant,
          "x-ai-request-class": "batch",
          ...task,
          "x-ai-batch-id": line.batchId,
          "x-ai-batch-custom-id": encodeURIComponent(line.customId),
          "x-ai-trace-id": `${line.batchId}.${line.line}.${line.attempts}`,
        },
        body: JSON.stringify({ ...body, stream: false }),
      });
      const text = await res.body.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // kept as text: an answer that is not JSON is still the answer
      }
      const retryAfter = Number(res.headers["retry-after"]);
      return {
        status: res.statusCode,
        requestId: String(res.headers["x-request-id"] ?? ""),
        body: parsed,
        retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : null,
      };
    } catch (err) {
      return { status: 0, requestId: "", body: null, retryAfterSeconds: null, error: (err as Error).message };
    }
  };

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** Whether a line's body names its own task (`metadata.task` or `task`, as the profile reads them). */
function namesTask(body: Record<string, unknown>): boolean {
  const meta = body.metadata;
  if (
    typeof meta === "object" &&
    meta !== null &&
    typeof (meta as Record<string, unknown>).task === "string"
  ) {
    return true;
  }
  return typeof body.task === "string";
}
