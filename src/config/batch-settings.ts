// GatewayConfig `batches`: the OpenAI Files and Batch API — where jobs, files and per-line results are
// kept (an embedded SQLite file, or the Redis server of `budgets.redis` for replicas on several hosts;
// the API is off without either), how large an upload may be, and how the
// gateway feeds a job's lines through its own request path (lines in flight per replica, the claim's
// lease, retries with backoff).

import type { IssueList } from "./errors.js";
import type { FieldReader } from "./fields.js";

export interface BatchSettings {
  /**
   * `sqlite` (the file `path`; replicas on one host may share it) or `redis` (the server and namespace
   * of `budgets.redis`, shared by replicas anywhere).
   */
  readonly store: "sqlite" | "redis";
  /** The SQLite file; null with store `sqlite`: the Batch API is off. Relative to where the gateway runs. */
  readonly path: string | null;
  /** An uploaded file's size cap, bytes; larger uploads get 413 and leave nothing behind. */
  readonly maxFileBytes: number;
  /** Requests (non-blank lines) one input file may hold. */
  readonly maxLines: number;
  /** One line's size cap, bytes. */
  readonly maxLineBytes: number;
  /** Lines this replica runs at once, across every job. */
  readonly concurrency: number;
  /** A claimed line's lease: renewed while it runs; a dead replica's lines return after it. */
  readonly leaseMs: number;
  /** Runs of a line that the engine failed (5xx, connection) before it goes to the error file. */
  readonly maxAttempts: number;
  /** The first retry's delay after an engine failure, doubled each time up to `maxBackoffMs`. */
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  /** How often the runner looks for lines to claim and jobs to finish. */
  readonly pollMs: number;
}

export const DEFAULT_BATCHES: BatchSettings = Object.freeze({
  store: "sqlite",
  path: null,
  maxFileBytes: 100 * 1024 * 1024,
  maxLines: 50_000,
  maxLineBytes: 1024 * 1024,
  concurrency: 16,
  leaseMs: 30_000,
  maxAttempts: 5,
  backoffMs: 1000,
  maxBackoffMs: 60_000,
  pollMs: 200,
});

/** Whether the Files and Batch API is on: a store is named. */
export function batchesOn(s: BatchSettings): boolean {
  return s.store === "redis" || s.path !== null;
}

/**
 * `GatewayConfig.spec.batches`, defaults filled in; `redisUrl` is `budgets.redis.url`, which store
 * `redis` needs.
 */
export function parseBatchSettings(
  spec: FieldReader,
  issues: IssueList,
  redisUrl: string | null,
): BatchSettings {
  const d = DEFAULT_BATCHES;
  const b = spec.map("batches");
  if (!b) return d;
  const s: BatchSettings = {
    store: (b.string("store", { oneOf: ["sqlite", "redis"] }) ?? d.store) as "sqlite" | "redis",
    path: b.string("path") ?? d.path,
    maxFileBytes: b.int("maxFileBytes", { min: 1024, max: 2 ** 31 - 1 }) ?? d.maxFileBytes,
    maxLines: b.int("maxLines", { min: 1, max: 1_000_000 }) ?? d.maxLines,
    maxLineBytes: b.int("maxLineBytes", { min: 256, max: 64 * 1024 * 1024 }) ?? d.maxLineBytes,
    concurrency: b.int("concurrency", { min: 1, max: 4096 }) ?? d.concurrency,
    leaseMs: b.int("leaseMs", { min: 500, max: 3_600_000 }) ?? d.leaseMs,
    maxAttempts: b.int("maxAttempts", { min: 1, max: 100 }) ?? d.maxAttempts,
    backoffMs: b.int("backoffMs", { min: 1, max: 3_600_000 }) ?? d.backoffMs,
    maxBackoffMs: b.int("maxBackoffMs", { min: 1, max: 86_400_000 }) ?? d.maxBackoffMs,
    pollMs: b.int("pollMs", { min: 10, max: 60_000 }) ?? d.pollMs,
  };
  if (s.maxBackoffMs < s.backoffMs) {
    issues.error(b.at("maxBackoffMs"), `must be at least backoffMs (${s.backoffMs}), got ${s.maxBackoffMs}`);
  }
  if (s.store === "redis" && redisUrl === null) {
    issues.error(
      b.at("store"),
      'store "redis" keeps jobs on the budgets\' Redis server: set budgets.redis.url (or urlEnv)',
    );
  }
  if (s.store === "redis" && s.path !== null) {
    issues.error(b.at("path"), 'is the SQLite file; with store "redis" leave it out');
  }
  if (s.maxLineBytes > s.maxFileBytes) {
    issues.error(b.at("maxLineBytes"), `must not exceed maxFileBytes (${s.maxFileBytes})`);
  }
  b.done();
  return s;
}
