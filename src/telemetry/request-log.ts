// One JSON line per request with seed 004's fields (null when unknown, never invented), written in
// batches so a busy gateway does not pay one write syscall per request.

import { closeSync, openSync, writeSync } from "node:fs";
import { isoTime } from "./iso-time.js";

/** The fields of seed 004's log line, plus the gateway's own. */
export interface RequestLogLine {
  ts: string;
  event: "inference.completed" | "inference.rejected";
  trace_id: string;
  /** The W3C trace id the engine was sent (traceparent); the same as trace_id unless X-AI-Trace-Id was given. */
  w3c_trace_id: string | null;
  tenant: string | null;
  task: string | null;
  /** Whether the route config knows the task (seed 004's unknown-task ratio); null before routing. */
  task_known: boolean | null;
  request_class: string | null;
  model_alias: string | null;
  model_version: string | null;
  /** The model name sent upstream: the base model or the LoRA adapter served. */
  served_model: string | null;
  route_pool: string | null;
  route_reason: string | null;
  endpoint: string | null;
  input_tokens_estimated: number | null;
  input_tokens_actual: number | null;
  cached_tokens: number | null;
  output_tokens: number | null;
  max_tokens: number | null;
  gateway_queue_ms: number | null;
  /**
   * Why it waited in the gateway queue: the last reason a try to place it failed (`saturated`,
   * `long_prefill`, `no_match`), else `paused` (its class was paused when it came) or `queue_order`
   * (its turn behind other requests); null: no wait.
   */
  gateway_queue_reason: string | null;
  /**
   * While it waited in the gateway queue, the longest any engine it could have gone to had none of the
   * gateway's prefill in flight, ms: work-conserving flow control keeps it near 0 (batch pauses aside);
   * null: no wait.
   */
  held_while_idle_ms: number | null;
  runtime_queue_ms: number | null;
  prefill_ms: number | null;
  decode_ms: number | null;
  ttft_ms: number | null;
  latency_ms: number;
  tokens_per_second: number | null;
  kv_cache_used_ratio: number | null;
  gpu_memory_used_ratio: number | null;
  fallback_reason: string | null;
  /** The endpoint picker's mode in the degradation order: metrics, predicted, affinity_yielded, p2c, … */
  pick_mode: string | null;
  pick_reason: string | null;
  /** The top candidates' total scores, `endpoint=score` separated by spaces. */
  pick_scores: string | null;
  /**
   * The picker's predicted time to first token on the chosen endpoint, from dispatch (compare it with
   * ttft_ms − gateway_queue_ms); null when no endpoint was picked.
   */
  predicted_ttft_ms: number | null;
  client_cancelled: boolean;
  stream: boolean | null;
  attempts: number;
  http_status: number;
  error_code: string | null;
  status: string;
  config_version: string | null;
  /** Under a rollout or route rollback: the stage (or `legacy_passthrough`) that decided. */
  rollout_stage?: string;
  /** Sent to the legacy service: the pool and reason tokengate's own decision named (seed 004's shadow stage). */
  would_route_pool?: string | null;
  would_route_reason?: string | null;
  /** A line of a Batch API job: the job and the line's custom_id. */
  batch_id?: string;
  custom_id?: string;
  prompt?: unknown;
}

/** The fields seed 004 asks of every request's log line (route-log completeness counts lines with all of them). */
export const SEED_LOG_FIELDS = [
  "trace_id",
  "tenant",
  "task",
  "model_alias",
  "model_version",
  "route_pool",
  "route_reason",
  "input_tokens_estimated",
  "input_tokens_actual",
  "output_tokens",
  "gateway_queue_ms",
  "runtime_queue_ms",
  "prefill_ms",
  "decode_ms",
  "ttft_ms",
  "tokens_per_second",
  "kv_cache_used_ratio",
  "gpu_memory_used_ratio",
  "fallback_reason",
  "client_cancelled",
  "status",
] as const;

/** At 1,000 requests/s a write per request is a syscall per request; a 20 ms batch is one per 20 lines. */
const FLUSH_MS = 20;
const FLUSH_LINES = 256;

/**
 * A log file is written synchronously, one `write` per batch, as process.stdout already is for files
 * and pipes on Linux. An asynchronous fs stream hands each write to libuv's thread pool; on a loaded
 * 2-core machine that hand-off cost ~300 µs of CPU per batch, and the woken worker thread often
 * preempted the event loop for milliseconds (the gateway's worst latency outliers). A batch of a few
 * dozen lines into the page cache takes tens of µs.
 */
export class RequestLog {
  private buffer: string[] = [];
  private scheduled = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly out: NodeJS.WritableStream | null;
  private fd: number | null = null;
  private failed = false;
  /** Every line also goes here (tests, the admin API's recent requests). */
  listener: ((line: RequestLogLine) => void) | null = null;
  /** Every event too (tests). */
  eventListener: ((event: string, fields: Record<string, unknown>) => void) | null = null;
  private readonly discard: boolean;
  /** The file's path when the destination is a file (reopened on SIGUSR2), else null. */
  readonly path: string | null;
  private closed = false;

  constructor(readonly destination: string) {
    this.discard = destination === "none";
    this.path = null;
    if (destination === "stdout") {
      this.out = process.stdout;
    } else if (destination === "stderr") {
      this.out = process.stderr;
    } else if (destination === "none") {
      this.out = null;
      this.write = (line) => this.listener?.(line);
    } else {
      this.out = null;
      this.path = destination;
      this.fd = openSync(destination, "a");
    }
  }

  write(line: RequestLogLine): void {
    this.listener?.(line);
    this.push(JSON.stringify(line));
  }

  /** A log event that is not a request (pause, endpoint health, config reload). */
  event(event: string, fields: Record<string, unknown>): void {
    this.eventListener?.(event, fields);
    if (this.discard) return;
    this.push(JSON.stringify({ ts: isoTime(), event, ...fields }));
  }

  /** Lines leave in batches: every FLUSH_MS, or at once when the batch is large. */
  private push(text: string): void {
    this.buffer.push(text);
    if (this.buffer.length >= FLUSH_LINES) {
      this.flush();
    } else if (!this.scheduled) {
      this.scheduled = true;
      this.timer = setTimeout(this.onTimer, FLUSH_MS);
    }
  }

  private readonly onTimer = (): void => {
    this.timer = null;
    this.flush();
  };

  flush(): void {
    this.scheduled = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.buffer.length === 0) return;
    const text = `${this.buffer.join("\n")}\n`;
    this.buffer = [];
    if (this.fd !== null) this.writeFile(this.fd, text);
    else this.out?.write(text);
  }

  /**
   * Writes what is buffered with one synchronous write, for a process about to end (an uncaught
   * exception, exit, a fatal signal): even stdout and stderr are written with `writeSync` on their
   * descriptor, since an asynchronous stream write would not leave before the process does.
   */
  flushSync(): void {
    if (this.buffer.length === 0 || this.closed) return;
    if (this.fd !== null || this.out === null) return this.flush();
    this.scheduled = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const text = `${this.buffer.join("\n")}\n`;
    this.buffer = [];
    this.writeFile(this.out === process.stderr ? 2 : 1, text);
  }

  /**
   * Reopens the file by its path (after a rotation moved it away: `mv access.log access.log.1`, then
   * SIGUSR2): what is buffered goes to the old file first, and the next lines to a new file at the path.
   * If the path cannot be opened, lines keep going to the old file. False when there is no file.
   */
  reopen(): boolean {
    if (this.path === null || this.fd === null || this.closed) return false;
    this.flush();
    let fd: number;
    try {
      fd = openSync(this.path, "a");
    } catch (err) {
      process.stderr.write(
        `tokengate: cannot reopen the request log ${this.path}, still writing to the old file: ${(err as Error).message}\n`,
      );
      return false;
    }
    const old = this.fd;
    this.fd = fd;
    this.failed = false;
    closeSync(old);
    this.event("log.reopened", { path: this.path });
    return true;
  }

  async close(): Promise<void> {
    this.flush();
    this.closed = true;
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
    }
  }

  /** Writes the whole batch; a failing destination (disk full) loses lines, never the gateway. */
  private writeFile(fd: number, text: string): void {
    const bytes = Buffer.from(text);
    try {
      for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off);
    } catch (err) {
      if (!this.failed) {
        this.failed = true;
        process.stderr.write(
          `tokengate: request log write failed, lines are lost: ${(err as Error).message}\n`,
        );
      }
    }
  }
}
