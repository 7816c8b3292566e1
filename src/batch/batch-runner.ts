// Feeds Batch API jobs through the gateway's own request path: claims lines from the store with a lease,
// sends each as a request of class `batch` for the job's tenant (so rules, pools, budgets, the batch
// queue, its pause and the tenant's windows all apply as to any request), and records how it ended,
// exactly once. What the gateway answers decides what happens to the line:
// - 2xx: succeeded, the answer goes to the output file;
// - told to wait (the batch pool paused or its queue full or timed out, the tenant outside its window,
//   over its budget or its concurrency): back to pending after the Retry-After (at most `maxBackoffMs`,
//   so a pause that lifts early or a reload that opens the window is seen), the attempt given back — a
//   delay, never a failure;
// - the engine failed (5xx, the connection, or `no_healthy_endpoint` because every endpoint tried failed
//   the request, which is how a one-engine pool reports an engine's 5xx): retried with exponential
//   backoff up to `maxAttempts` runs, then the error file;
// - any other 4xx: the request itself is at fault, the error file at once.
// Leases are renewed while lines run; a line whose lease another replica took is abandoned (its result
// would be refused). Finished jobs are finalized (output and error files) on the same clock.

import { randomBytes } from "node:crypto";
import type { BatchSettings } from "../config/batch-settings.js";
import type { BatchStore, ClaimedLine } from "./batch-store.js";
import { newBatchRequestId } from "./batch-store.js";
import type { BatchRequestOutput } from "./batch-types.js";

/** What the gateway answered to one line; `status` 0: no answer (the connection failed). */
export interface LineAnswer {
  readonly status: number;
  /** The answer's x-request-id. */
  readonly requestId: string;
  readonly body: unknown;
  /** Retry-After, seconds, when the answer had one. */
  readonly retryAfterSeconds: number | null;
  /** The connection's error when there was no answer. */
  readonly error?: string;
}

/** Sends one line's request through the gateway; must not throw (a failure is `status: 0`). */
export type LineSender = (line: ClaimedLine, signal: AbortSignal) => Promise<LineAnswer>;

/** What the runner tells the outside: one event per line run, and when a job ends. */
export interface BatchRunnerEvents {
  line(fields: {
    batch_id: string;
    custom_id: string;
    line: number;
    attempt: number;
    outcome: LineOutcomeKind;
    http_status: number;
    error_code: string | null;
    retry_in_ms: number | null;
    /** When a retried or deferred line may run again (ISO time); null otherwise. */
    retry_at: string | null;
  }): void;
  finalized(batchId: string): void;
  /** The store failed in `where`; the runner goes on (a line not recorded runs again after its lease). */
  storeError(where: "tick" | "settle" | "renew", err: unknown): void;
}

export type LineOutcomeKind = "succeeded" | "failed" | "deferred" | "retried" | "abandoned";

/** The gateway's codes that mean "later", not "wrong": the line waits and keeps its attempts. */
const WAIT_CODES: ReadonlySet<string> = new Set([
  "inference_queue_paused",
  "queue_full",
  "queue_timeout",
  "outside_allowed_window",
  "budget_exceeded",
  "concurrency_limit",
  "budget_store_unavailable",
  "gateway_shutdown",
  "no_healthy_endpoint",
  "upstream_overloaded",
]);

interface Running {
  readonly line: ClaimedLine;
  readonly abort: AbortController;
}

export class BatchRunner {
  /** This replica's name on its claims: a new one each start, so a dead process's claims are not its. */
  readonly owner = `replica-${randomBytes(6).toString("hex")}`;
  private readonly running = new Map<string, Running>();
  private timer: NodeJS.Timeout | null = null;
  private renewTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private ticking = false;

  constructor(
    private readonly store: BatchStore,
    private readonly send: LineSender,
    private settings: BatchSettings,
    private readonly events: BatchRunnerEvents,
  ) {}

  /** Lines running on this replica now. */
  get inFlight(): number {
    return this.running.size;
  }

  /** A reload's settings: concurrency, retries and the poll apply from the next tick. */
  reconfigure(settings: BatchSettings): void {
    this.settings = settings;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
    this.renewTimer = setInterval(
      () => void this.renew(),
      Math.max(100, Math.floor(this.settings.leaseMs / 3)),
    );
    this.renewTimer.unref();
  }

  /** Looks for work now (a job was just created, say) rather than at the next poll. */
  poke(): void {
    if (!this.stopped) this.schedule(0);
  }

  /**
   * Stops claiming; lines in flight may finish until `deadline` (epoch ms), then are abandoned and, with
   * every line this replica still holds, given back to pending for the next start or another replica.
   */
  async stop(deadline = Date.now()): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.timer = null;
    while (this.ticking) await sleep(5);
    while (this.running.size > 0 && Date.now() < deadline) await sleep(20);
    for (const r of this.running.values()) r.abort.abort(new Error("the gateway is stopping"));
    await this.store.releaseOwner(this.owner);
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.timer = null;
    if (this.stopped || this.ticking) return;
    this.ticking = true;
    try {
      for (const id of await this.store.finalizeReady()) this.events.finalized(id);
      const free = this.settings.concurrency - this.running.size;
      if (free > 0 && !this.stopped) {
        const lines = await this.store.claimLines(this.owner, free, this.settings.leaseMs);
        // Stopped while claiming: not run; `stop` gives them back once this tick is over.
        if (!this.stopped) for (const line of lines) this.run(line);
      }
    } catch (err) {
      // The store failed (busy past its timeout, disk full): this tick is lost, not the process.
      this.events.storeError("tick", err);
    } finally {
      this.ticking = false;
      if (!this.stopped) this.schedule(this.settings.pollMs);
    }
  }

  private run(line: ClaimedLine): void {
    const key = `${line.batchId}:${line.line}`;
    const abort = new AbortController();
    this.running.set(key, { line, abort });
    this.send(line, abort.signal)
      .then(async (answer) => {
        if (!abort.signal.aborted) await this.settle(line, answer);
      })
      // Not recorded: the line's lease runs out and it runs again (at most once into the output).
      .catch((err: unknown) => this.events.storeError("settle", err))
      .finally(() => {
        this.running.delete(key);
        // A slot is free: the next line need not wait for the poll.
        if (!this.stopped && !this.ticking) this.schedule(0);
      });
  }

  /** Records how a line ended (or when it runs again). */
  private async settle(line: ClaimedLine, a: LineAnswer): Promise<void> {
    const s = this.settings;
    const code = errorCodeOf(a.body);
    const now = Date.now();
    const report = (outcome: LineOutcomeKind, retryInMs: number | null = null) =>
      this.events.line({
        batch_id: line.batchId,
        custom_id: line.customId,
        line: line.line,
        attempt: line.attempts,
        outcome,
        http_status: a.status,
        error_code: code,
        retry_in_ms: retryInMs,
        retry_at: retryInMs === null ? null : new Date(now + retryInMs).toISOString(),
      });
    if (a.status >= 200 && a.status < 300) {
      const ok = await this.store.finishLine(this.owner, line.batchId, line.line, {
        state: "succeeded",
        result: record(line, a),
      });
      report(ok ? "succeeded" : "abandoned");
      return;
    }
    if (code !== null && WAIT_CODES.has(code) && !endpointsFailed(code, a.body)) {
      // Retry-After is the gateway's guess at the time it was asked (a pause's configured 900 s, the hours
      // until the tenant's window opens); a pause may lift or a reload open the window sooner, so a line
      // looks again after at most maxBackoffMs.
      const waitMs = Math.min(s.maxBackoffMs, Math.max(s.pollMs, (a.retryAfterSeconds ?? 1) * 1000));
      await this.store.deferLine(this.owner, line.batchId, line.line, now + waitMs);
      report("deferred", waitMs);
      return;
    }
    const engineFailure = a.status === 0 || a.status >= 500;
    if (engineFailure && line.attempts < s.maxAttempts) {
      const backoff = Math.min(s.maxBackoffMs, s.backoffMs * 2 ** (line.attempts - 1));
      await this.store.retryLine(this.owner, line.batchId, line.line, now + backoff);
      report("retried", backoff);
      return;
    }
    const ok = await this.store.finishLine(this.owner, line.batchId, line.line, {
      state: "failed",
      result: record(line, a),
    });
    report(ok ? "failed" : "abandoned");
  }

  /** Extends the leases of the lines running here; a line lost to another replica is abandoned. */
  private async renew(): Promise<void> {
    if (this.running.size === 0) return;
    const keys = [...this.running.values()].map((r) => ({ batchId: r.line.batchId, line: r.line.line }));
    let lost: { batchId: string; line: number }[];
    try {
      lost = await this.store.renewLeases(this.owner, keys, this.settings.leaseMs);
    } catch (err) {
      this.events.storeError("renew", err);
      return;
    }
    for (const l of lost) {
      this.running.get(`${l.batchId}:${l.line}`)?.abort.abort(new Error("the line's lease was lost"));
    }
  }
}

/** The output or error file's record of a line: the gateway's answer, or why there was none. */
function record(line: ClaimedLine, a: LineAnswer): BatchRequestOutput {
  if (a.status === 0) {
    return {
      id: newBatchRequestId(),
      custom_id: line.customId,
      response: null,
      error: { code: "upstream_unavailable", message: a.error ?? "the request could not be sent" },
    };
  }
  return {
    id: newBatchRequestId(),
    custom_id: line.customId,
    response: { status_code: a.status, request_id: a.requestId, body: a.body },
    error: null,
  };
}

/**
 * `no_healthy_endpoint` comes in two kinds: no endpoint could take the request (down, ejected: wait), or
 * the gateway sent it and every endpoint it tried failed it (its `endpoints_tried`, server/forward.ts):
 * the engine failed, and the line counts its attempt, or a line an engine always fails would be
 * deferred for ever and never reach `maxAttempts`.
 */
function endpointsFailed(code: string, body: unknown): boolean {
  if (code !== "no_healthy_endpoint" || typeof body !== "object" || body === null) return false;
  const tried = (body as { error?: { endpoints_tried?: unknown } }).error?.endpoints_tried;
  return typeof tried === "number" && tried > 0;
}

/** The gateway error's code in an answer's body (`{"error": {"code": …}}`), or null. */
function errorCodeOf(body: unknown): string | null {
  if (typeof body !== "object" || body === null) return null;
  const e = (body as { error?: unknown }).error;
  if (typeof e !== "object" || e === null) return null;
  const c = (e as { code?: unknown }).code;
  return typeof c === "string" ? c : null;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
