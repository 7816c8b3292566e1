// The durable store of the Files and Batch API, in an embedded SQLite file (better-sqlite3): uploaded
// files (their bytes too), batch jobs, and every line of every job with its state and result. A batch
// runs line by line, by any replica of the gateway that opens the same file, and must survive a crash
// or a restart mid-job without losing a line or writing one twice into its output. So:
//
// - A line is claimed under a lease (`claimLines`, in a `BEGIN IMMEDIATE` transaction, so two replicas
//   never take the same line); a replica that dies leaves its claims to run out, and the line is claimed
//   again. A result is recorded only by the replica that still holds the claim (`finishLine`), and only
//   once: a late answer from a replica whose lease was taken over is refused.
// - A batch ends (`finalizeReady`) in one transaction that writes its output file (the succeeded lines'
//   results, in input-line order) and error file (failed lines, and the lines a cancel or the expiry of
//   the completion window left unrun), and sets its final status. Each custom_id is in exactly one of the
//   two files. Two replicas finalizing at once are safe: the second finds the batch already final.
// - A cancel (`cancelBatch`) stops claims of the batch's pending lines; the lines running may finish; the
//   batch ends `cancelled` once none is running under a live lease. The end of the window (`expireDue`)
//   puts the batch in `finalizing` with `expired_at` set, the same way, and it ends `expired`. Completion
//   goes from `in_progress` to `completed` in one transaction (`finalizing_at` = `completed_at`), so in
//   this store a batch waits in `finalizing` only when it expired.
//
// Times given to the methods (`now`) are epoch milliseconds; the OpenAI timestamps of files and batches
// are stored as Unix seconds, the lease and backoff times of lines in milliseconds. Validation of an
// input file is done elsewhere (batch-input.ts); this module trusts what it is given.

import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";
import {
  type BatchErrors,
  type BatchMetadata,
  type BatchObject,
  type BatchRequestOutput,
  type BatchStatus,
  FINAL_STATUSES,
  type FileObject,
  type FilePurpose,
  type LineState,
  type ListPage,
  type RequestCounts,
} from "./batch-types.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS files (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  tenant TEXT NOT NULL,
  purpose TEXT NOT NULL,
  filename TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  content BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS files_by_tenant ON files (tenant, seq);
CREATE TABLE IF NOT EXISTS batches (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  tenant TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  input_file_id TEXT NOT NULL,
  completion_window TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  in_progress_at INTEGER,
  expires_at INTEGER,
  finalizing_at INTEGER,
  completed_at INTEGER,
  failed_at INTEGER,
  expired_at INTEGER,
  cancelling_at INTEGER,
  cancelled_at INTEGER,
  metadata TEXT,
  errors TEXT,
  output_file_id TEXT,
  error_file_id TEXT,
  request_total INTEGER NOT NULL DEFAULT 0,
  request_completed INTEGER NOT NULL DEFAULT 0,
  request_failed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS batches_by_tenant ON batches (tenant, seq);
CREATE INDEX IF NOT EXISTS batches_by_status ON batches (status, seq);
CREATE TABLE IF NOT EXISTS batch_lines (
  batch_id TEXT NOT NULL REFERENCES batches (id),
  line INTEGER NOT NULL,
  custom_id TEXT NOT NULL,
  body TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  claimed_by TEXT,
  lease_until INTEGER,
  not_before INTEGER NOT NULL DEFAULT 0,
  result TEXT,
  finished_at INTEGER,
  PRIMARY KEY (batch_id, line),
  UNIQUE (batch_id, custom_id)
) WITHOUT ROWID;
-- The lines still to run: a claim, and the checks of whether a batch is done, read only these, however
-- many of the batch's lines have finished. A query names it (INDEXED BY: without ANALYZE statistics the
-- planner prefers the primary key) and repeats its condition on state, which SQLite requires to use it.
CREATE INDEX IF NOT EXISTS batch_lines_open ON batch_lines (batch_id, line) WHERE state IN ('pending', 'running');
`;

/** A stored file without its content, as the `files` table has it. */
export interface FileRow {
  readonly id: string;
  readonly tenant: string;
  readonly purpose: FilePurpose;
  readonly filename: string;
  readonly bytes: number;
  /** Unix seconds. */
  readonly created_at: number;
}

/** A batch as the `batches` table has it: timestamps in Unix seconds, `metadata` and `errors` JSON text. */
export interface BatchRow {
  readonly id: string;
  readonly tenant: string;
  readonly endpoint: string;
  readonly input_file_id: string;
  readonly completion_window: string;
  readonly status: BatchStatus;
  readonly created_at: number;
  readonly in_progress_at: number | null;
  readonly expires_at: number | null;
  readonly finalizing_at: number | null;
  readonly completed_at: number | null;
  readonly failed_at: number | null;
  readonly expired_at: number | null;
  readonly cancelling_at: number | null;
  readonly cancelled_at: number | null;
  readonly metadata: string | null;
  readonly errors: string | null;
  readonly output_file_id: string | null;
  readonly error_file_id: string | null;
  /** Its lines; kept with the row so that reading a batch never counts them. */
  readonly request_total: number;
  /** Its lines that succeeded (`request_counts.completed`). */
  readonly request_completed: number;
  readonly request_failed: number;
}

/** A line of a batch as the `batch_lines` table has it; times in epoch ms. */
export interface LineRow {
  readonly batch_id: string;
  readonly line: number;
  readonly custom_id: string;
  /** The request body, JSON text. */
  readonly body: string;
  readonly state: LineState;
  readonly attempts: number;
  readonly claimed_by: string | null;
  readonly lease_until: number | null;
  readonly not_before: number;
  /** The line's output record, JSON text; null until it is finished or closed. */
  readonly result: string | null;
  readonly finished_at: number | null;
}

/** A line handed to a runner by `claimLines`, with what it needs to send it. */
export interface ClaimedLine {
  readonly batchId: string;
  readonly line: number;
  readonly customId: string;
  /** The request body, JSON text, sent on unchanged. */
  readonly body: string;
  /** Claims of this line so far, this one included. */
  readonly attempts: number;
  readonly tenant: string;
  readonly endpoint: string;
  /** Epoch ms; `renewLeases` moves it. */
  readonly leaseUntil: number;
}

/** Names a line of a batch. */
export interface LineKey {
  readonly batchId: string;
  readonly line: number;
}

/** One request of a new batch. */
export interface NewBatchLine {
  /** 1-based line number in the input file. */
  readonly line: number;
  readonly customId: string;
  /** The request body: an object (serialized here) or JSON text. */
  readonly body: Readonly<Record<string, unknown>> | string;
}

export interface NewBatch {
  readonly tenant: string;
  readonly endpoint: string;
  readonly inputFileId: string;
  /** How long the batch may run; `expires_at` = creation + this. */
  readonly completionWindowMs: number;
  /** The window as the client named it; `24h` unless told. */
  readonly completionWindow?: string;
  readonly metadata?: BatchMetadata | null;
}

/** How a line that ran ended: `succeeded` goes to the output file, `failed` to the error file. */
export interface LineOutcome {
  readonly state: "succeeded" | "failed";
  readonly result: BatchRequestOutput;
}

export interface BatchStoreOptions {
  /** How long a write waits for another process's transaction before SQLITE_BUSY; 5000 ms unless told. */
  readonly busyTimeoutMs?: number;
  /** `FULL` (every commit on disk before it returns) unless told; `NORMAL` may lose the last commits to a power cut. */
  readonly synchronous?: "FULL" | "NORMAL";
}

/** A file over the size cap; nothing was written. */
export class FileTooLarge extends Error {
  readonly code = "file_too_large";
  constructor(
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(`file is ${bytes} bytes, over the limit of ${maxBytes}`);
  }
}

/** Batches a list page holds unless told, and at most. */
export const BATCH_PAGE_DEFAULT = 20;
export const BATCH_PAGE_MAX = 100;
/** Files a list page holds unless told, and at most (OpenAI's limits for `GET /v1/files`). */
export const FILE_PAGE_DEFAULT = 10_000;
export const FILE_PAGE_MAX = 10_000;

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `n` random base62 characters (bytes ≥ 248 are dropped, so each character is uniform). */
function randomBase62(n: number): string {
  let out = "";
  while (out.length < n) {
    for (const b of randomBytes(n + 8)) {
      if (b >= 248) continue;
      out += BASE62[b % 62];
      if (out.length === n) break;
    }
  }
  return out;
}

/** A new file id, `file-` and 24 base62 characters, as OpenAI's look. */
export function newFileId(): string {
  return `file-${randomBase62(24)}`;
}

/** A new batch id, `batch_` and 32 hex characters. */
export function newBatchId(): string {
  return `batch_${randomBytes(16).toString("hex")}`;
}

/** A new id for one request's record in an output or error file, `batch_req_` and 32 hex characters. */
export function newBatchRequestId(): string {
  return `batch_req_${randomBytes(16).toString("hex")}`;
}

/** OpenAI's file object of a stored file. */
export function toFileObject(row: FileRow): FileObject {
  return {
    id: row.id,
    object: "file",
    bytes: row.bytes,
    created_at: row.created_at,
    filename: row.filename,
    purpose: row.purpose,
    status: "processed",
  };
}

/** `request_counts` of a stored batch. */
export function countsOf(row: BatchRow): RequestCounts {
  return { total: row.request_total, completed: row.request_completed, failed: row.request_failed };
}

/** OpenAI's batch object of a stored batch; its counts are the row's unless given. */
export function toBatchObject(row: BatchRow, counts: RequestCounts = countsOf(row)): BatchObject {
  return {
    id: row.id,
    object: "batch",
    endpoint: row.endpoint,
    errors: row.errors === null ? null : (JSON.parse(row.errors) as BatchErrors),
    input_file_id: row.input_file_id,
    completion_window: row.completion_window,
    status: row.status,
    output_file_id: row.output_file_id,
    error_file_id: row.error_file_id,
    created_at: row.created_at,
    in_progress_at: row.in_progress_at,
    expires_at: row.expires_at,
    finalizing_at: row.finalizing_at,
    completed_at: row.completed_at,
    failed_at: row.failed_at,
    expired_at: row.expired_at,
    cancelling_at: row.cancelling_at,
    cancelled_at: row.cancelled_at,
    request_counts: { total: counts.total, completed: counts.completed, failed: counts.failed },
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as BatchMetadata),
  };
}

function seconds(nowMs: number): number {
  return Math.floor(nowMs / 1000);
}

function clampLimit(limit: number | undefined, dflt: number, max: number): number {
  if (limit === undefined || !Number.isFinite(limit)) return dflt;
  return Math.min(max, Math.max(1, Math.floor(limit)));
}

function page<T>(items: T[], limit: number, idOf: (t: T) => string): ListPage<T> {
  const data = items.slice(0, limit);
  return {
    object: "list",
    data,
    first_id: data.length > 0 ? idOf(data[0]!) : null,
    last_id: data.length > 0 ? idOf(data[data.length - 1]!) : null,
    has_more: items.length > limit,
  };
}

/** How a batch ends: completed, or cancelled / expired with the code its unrun lines are closed with. */
type Ending =
  | { readonly status: "completed" }
  | { readonly status: "cancelled"; readonly code: "batch_cancelled" }
  | { readonly status: "expired"; readonly code: "batch_expired" };

const FILE_COLUMNS = "id, tenant, purpose, filename, bytes, created_at";
const BATCH_COLUMNS =
  "id, tenant, endpoint, input_file_id, completion_window, status, created_at, in_progress_at, expires_at, " +
  "finalizing_at, completed_at, failed_at, expired_at, cancelling_at, cancelled_at, metadata, errors, " +
  "output_file_id, error_file_id, request_total, request_completed, request_failed";

export class SqliteBatchStore {
  private readonly db: Database.Database;
  private readonly stmts: ReturnType<typeof prepareAll>;

  private constructor(
    readonly path: string,
    opts: BatchStoreOptions,
  ) {
    this.db = new Database(path, { timeout: opts.busyTimeoutMs ?? 5000 });
    this.db.pragma("journal_mode = WAL");
    this.db.pragma(`synchronous = ${opts.synchronous ?? "FULL"}`);
    this.db.pragma("foreign_keys = ON");
    this.db.exec(SCHEMA);
    this.stmts = prepareAll(this.db);
  }

  /**
   * Opens (creating) the store at `path`. Several processes (the gateway's replicas) may open the same
   * file; `:memory:` keeps it in this process only.
   */
  static open(path: string, opts: BatchStoreOptions = {}): SqliteBatchStore {
    return new SqliteBatchStore(path, opts);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  // --- Files -------------------------------------------------------------------------------------------

  /** Stores a file; throws FileTooLarge (writing nothing) when `content` is over `maxBytes`. */
  createFile(
    f: { tenant: string; purpose: FilePurpose; filename: string; content: Buffer; maxBytes?: number },
    now = Date.now(),
  ): FileRow {
    if (f.maxBytes !== undefined && f.content.length > f.maxBytes) {
      throw new FileTooLarge(f.content.length, f.maxBytes);
    }
    return this.insertFile(f.tenant, f.purpose, f.filename, f.content, now);
  }

  /** The tenant's file; null when there is none of that id, or it is another tenant's. */
  getFile(tenant: string, id: string): FileRow | null {
    return this.stmts.getFile.get(id, tenant) ?? null;
  }

  /** The bytes of the tenant's file; null as `getFile`. */
  fileContent(tenant: string, id: string): Buffer | null {
    const row = this.stmts.fileContent.get(id, tenant);
    return row ? row.content : null;
  }

  /** Deletes the tenant's file; whether there was one. */
  deleteFile(tenant: string, id: string): boolean {
    return this.stmts.deleteFile.run(id, tenant).changes > 0;
  }

  /** The tenant's files, newest first; `after` is the `last_id` of the previous page. */
  listFiles(
    tenant: string,
    opts: { purpose?: FilePurpose; limit?: number; after?: string } = {},
  ): ListPage<FileObject> {
    const limit = clampLimit(opts.limit, FILE_PAGE_DEFAULT, FILE_PAGE_MAX);
    let before = Number.MAX_SAFE_INTEGER;
    if (opts.after !== undefined) {
      const cursor = this.stmts.fileSeq.get(opts.after, tenant);
      if (!cursor) return page<FileObject>([], limit, (f) => f.id);
      before = cursor.seq;
    }
    const rows =
      opts.purpose === undefined
        ? this.stmts.listFiles.all(tenant, before, limit + 1)
        : this.stmts.listFilesOfPurpose.all(tenant, opts.purpose, before, limit + 1);
    return page(rows.map(toFileObject), limit, (f) => f.id);
  }

  // --- Batches -----------------------------------------------------------------------------------------

  /**
   * Creates a batch in `in_progress` with every line `pending`, in one transaction: on any error (a
   * custom_id twice, a line number twice) nothing is written and the error is thrown.
   */
  createBatch(b: NewBatch & { lines: readonly NewBatchLine[] }, now = Date.now()): BatchRow {
    const id = newBatchId();
    const at = seconds(now);
    const write = this.db.transaction(() => {
      this.stmts.insertBatch.run({
        id,
        tenant: b.tenant,
        endpoint: b.endpoint,
        input_file_id: b.inputFileId,
        completion_window: b.completionWindow ?? "24h",
        status: "in_progress",
        created_at: at,
        in_progress_at: at,
        expires_at: seconds(now + b.completionWindowMs),
        failed_at: null,
        metadata: b.metadata ? JSON.stringify(b.metadata) : null,
        errors: null,
        request_total: b.lines.length,
      });
      for (const l of b.lines) {
        this.stmts.insertLine.run(
          id,
          l.line,
          l.customId,
          typeof l.body === "string" ? l.body : JSON.stringify(l.body),
        );
      }
    });
    write.immediate();
    return this.stmts.getBatchById.get(id)!;
  }

  /** Records a batch whose input failed validation: status `failed`, with its `errors`, and no lines. */
  createFailedBatch(b: NewBatch & { errors: BatchErrors }, now = Date.now()): BatchRow {
    const id = newBatchId();
    const at = seconds(now);
    this.stmts.insertBatch.run({
      id,
      tenant: b.tenant,
      endpoint: b.endpoint,
      input_file_id: b.inputFileId,
      completion_window: b.completionWindow ?? "24h",
      status: "failed",
      created_at: at,
      in_progress_at: null,
      expires_at: seconds(now + b.completionWindowMs),
      failed_at: at,
      metadata: b.metadata ? JSON.stringify(b.metadata) : null,
      errors: JSON.stringify(b.errors),
      request_total: 0,
    });
    return this.stmts.getBatchById.get(id)!;
  }

  /** The tenant's batch; null when there is none of that id, or it is another tenant's. */
  getBatch(tenant: string, id: string): BatchRow | null {
    return this.stmts.getBatch.get(id, tenant) ?? null;
  }

  /** The tenant's batch as OpenAI's batch object, counts included; null as `getBatch`. */
  batchObject(tenant: string, id: string): BatchObject | null {
    const row = this.getBatch(tenant, id);
    return row ? toBatchObject(row) : null;
  }

  /**
   * The tenant's batches as OpenAI's batch objects, newest first, `limit` a page (20 unless told, at
   * most 100); `after` is the `last_id` of the previous page. An `after` that is not one of the tenant's
   * batches gives an empty page.
   */
  listBatches(tenant: string, opts: { limit?: number; after?: string } = {}): ListPage<BatchObject> {
    const limit = clampLimit(opts.limit, BATCH_PAGE_DEFAULT, BATCH_PAGE_MAX);
    let before = Number.MAX_SAFE_INTEGER;
    if (opts.after !== undefined) {
      const cursor = this.stmts.batchSeq.get(opts.after, tenant);
      if (!cursor) return page<BatchObject>([], limit, (b) => b.id);
      before = cursor.seq;
    }
    const rows = this.stmts.listBatches.all(tenant, before, limit + 1);
    return page(
      rows.map((r) => toBatchObject(r)),
      limit,
      (b) => b.id,
    );
  }

  /**
   * `request_counts` of a batch: its lines, those that succeeded, those that failed (a line a cancel or
   * the expiry closed unrun is neither); zeros when there is no such batch.
   */
  counts(batchId: string): RequestCounts {
    const row = this.stmts.getBatchById.get(batchId);
    return row ? countsOf(row) : { total: 0, completed: 0, failed: 0 };
  }

  /** One line of a batch, as stored; null when there is none. */
  getLine(batchId: string, line: number): LineRow | null {
    return this.stmts.getLine.get(batchId, line) ?? null;
  }

  /**
   * Starts cancelling the tenant's batch: `in_progress` or `validating` becomes `cancelling` (its pending
   * lines are claimed no more; those running may finish), and `finalizeReady` ends it. Returns the batch
   * as it is after, unchanged when it was in another status (the caller tells a repeated cancel, status
   * `cancelling`/`cancelled`, from a conflict); null as `getBatch`.
   */
  cancelBatch(tenant: string, id: string, now = Date.now()): BatchRow | null {
    this.stmts.cancel.run(seconds(now), id, tenant);
    return this.getBatch(tenant, id);
  }

  /**
   * Batches in `in_progress` (or `validating`) whose window has ended with lines still to run go to
   * `finalizing` with `expired_at`: their pending lines are claimed no more, those running may finish,
   * and `finalizeReady` ends them `expired`. (One whose every line has finished is left to complete.)
   * Returns their ids.
   */
  expireDue(now = Date.now()): string[] {
    const at = seconds(now);
    return this.db
      .transaction(() => {
        const due = this.stmts.due.all(at).map((r) => r.id);
        for (const id of due) this.stmts.expire.run(at, at, id);
        return due;
      })
      .immediate();
  }

  // --- Lines -------------------------------------------------------------------------------------------

  /**
   * Claims up to `n` lines for `owner` until `now + leaseMs`: lines `pending` whose backoff is over, and
   * lines `running` whose lease ran out (their replica died or stalled), of batches `in_progress` within
   * their window, oldest batch first, then in line order. Each claim counts an attempt. Atomic across
   * every process on the file: no line is handed to two owners.
   */
  claimLines(owner: string, n: number, leaseMs: number, now = Date.now()): ClaimedLine[] {
    if (n <= 0) return [];
    const leaseUntil = now + leaseMs;
    return this.db
      .transaction((): ClaimedLine[] => {
        const rows = this.stmts.claimable.all({ now, now_s: seconds(now), n });
        return rows.map((r) => {
          this.stmts.claim.run(owner, leaseUntil, r.batch_id, r.line);
          return {
            batchId: r.batch_id,
            line: r.line,
            customId: r.custom_id,
            body: r.body,
            attempts: r.attempts + 1,
            tenant: r.tenant,
            endpoint: r.endpoint,
            leaseUntil,
          };
        });
      })
      .immediate();
  }

  /**
   * Extends `owner`'s leases of `lines` to `now + leaseMs`. Returns the lines that are no longer the
   * owner's (taken over after the lease ran out, closed by a cancel or expiry, already finished): the
   * runner may stop working on them, their result would be refused.
   */
  renewLeases(owner: string, lines: readonly LineKey[], leaseMs: number, now = Date.now()): LineKey[] {
    const until = now + leaseMs;
    return this.db
      .transaction(() =>
        lines.filter((k) => this.stmts.renew.run(until, k.batchId, k.line, owner).changes === 0),
      )
      .immediate();
  }

  /**
   * Records how a line ended, once: only while it is `running` and claimed by `owner`. False otherwise
   * (its lease ran out and another replica took it, the batch was finalized without it, it was already
   * finished): the result is dropped, so no line is ever written twice.
   */
  finishLine(owner: string, batchId: string, line: number, outcome: LineOutcome, now = Date.now()): boolean {
    const result = JSON.stringify(outcome.result);
    return this.db
      .transaction((): boolean => {
        if (this.stmts.finish.run(outcome.state, result, now, batchId, line, owner).changes === 0)
          return false;
        (outcome.state === "succeeded" ? this.stmts.countSucceeded : this.stmts.countFailed).run(batchId);
        return true;
      })
      .immediate();
  }

  /**
   * Puts `owner`'s running line back to `pending`, to be claimed no earlier than `notBefore` (epoch ms):
   * the engine failed and the runner backs off. Its attempt stays counted. False when it is not the
   * owner's running line.
   */
  retryLine(owner: string, batchId: string, line: number, notBefore: number): boolean {
    return this.stmts.retry.run(notBefore, batchId, line, owner).changes > 0;
  }

  /**
   * As `retryLine`, with the attempt given back: the line was not run but told to wait (the batch pool
   * paused, the tenant outside its window or out of budget), which is a delay, never a failure.
   */
  deferLine(owner: string, batchId: string, line: number, notBefore: number): boolean {
    return this.stmts.defer.run(notBefore, batchId, line, owner).changes > 0;
  }

  /**
   * At shutdown: every line `owner` is running goes back to `pending`, its attempt uncounted, for
   * another replica to claim at once. Returns how many.
   */
  releaseOwner(owner: string): number {
    return this.stmts.release.run(owner).changes;
  }

  // --- Finalization ------------------------------------------------------------------------------------

  /**
   * Ends every batch that is done: `in_progress` with no line pending or running (→ `completed`),
   * `cancelling` (→ `cancelled`) or expired (→ `expired`, after `expireDue`, which this runs first) with
   * no line running under a live lease. Each batch in one transaction: its unfinished lines closed with
   * a `batch_cancelled`/`batch_expired` record, the output file (succeeded lines' results, in line
   * order) and, when any line failed or was closed, the error file written, the file ids and the final
   * status and timestamps set. Returns the ids of the batches ended.
   */
  finalizeReady(now = Date.now()): string[] {
    this.expireDue(now);
    const ended: string[] = [];
    for (const { id } of this.stmts.ready.all({ now })) {
      if (this.finalizeOne(id, now)) ended.push(id);
    }
    return ended;
  }

  private finalizeOne(id: string, now: number): boolean {
    return this.db
      .transaction((): boolean => {
        // Checked again inside the write lock: another replica may have ended it since the scan.
        const b = this.stmts.getBatchById.get(id);
        if (!b || FINAL_STATUSES.has(b.status)) return false;
        const ending = endingOf(b);
        if (!ending) return false;
        const { live, open } = this.stmts.unfinished.get({ id, now })!;
        if (live > 0 || (ending.status === "completed" && open > 0)) return false;

        if (ending.status !== "completed") {
          // Pending lines, and running ones whose lease ran out: a late answer for them is refused.
          const message =
            ending.code === "batch_cancelled"
              ? "The batch was cancelled before this request ran."
              : "The request could not be run before the batch's completion window ended.";
          for (const l of this.stmts.openLines.all(id)) {
            const record: BatchRequestOutput = {
              id: newBatchRequestId(),
              custom_id: l.custom_id,
              response: null,
              error: { code: ending.code, message },
            };
            this.stmts.close.run(JSON.stringify(record), now, id, l.line);
          }
        }

        const tenant = b.tenant;
        const output = this.insertFile(
          tenant,
          "batch_output",
          `${id}_output.jsonl`,
          jsonl(this.stmts.results.all(id, "succeeded")),
          now,
        );
        const errorLines = this.stmts.errorResults.all(id);
        const errorFile =
          errorLines.length > 0
            ? this.insertFile(tenant, "batch_output", `${id}_error.jsonl`, jsonl(errorLines), now)
            : null;
        this.stmts.finalize.run({
          id,
          status: ending.status,
          at: seconds(now),
          output_file_id: output.id,
          error_file_id: errorFile?.id ?? null,
        });
        return true;
      })
      .immediate();
  }

  private insertFile(
    tenant: string,
    purpose: FilePurpose,
    filename: string,
    content: Buffer,
    now: number,
  ): FileRow {
    const row: FileRow = {
      id: newFileId(),
      tenant,
      purpose,
      filename,
      bytes: content.length,
      created_at: seconds(now),
    };
    this.stmts.insertFile.run(row.id, tenant, purpose, filename, row.bytes, row.created_at, content);
    return row;
  }
}

function endingOf(b: BatchRow): Ending | null {
  if (b.status === "in_progress") return { status: "completed" };
  if (b.status === "cancelling") return { status: "cancelled", code: "batch_cancelled" };
  if (b.status === "finalizing" && b.expired_at !== null) return { status: "expired", code: "batch_expired" };
  return null;
}

/** Results (JSON text, one line each) as a JSONL file, each line ended by a newline. */
function jsonl(rows: readonly { result: string }[]): Buffer {
  return Buffer.from(rows.map((r) => `${r.result}\n`).join(""), "utf8");
}

function prepareAll(db: Database.Database) {
  return {
    insertFile: db.prepare<[string, string, string, string, number, number, Buffer]>(
      "INSERT INTO files (id, tenant, purpose, filename, bytes, created_at, content) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ),
    getFile: db.prepare<[string, string], FileRow>(
      `SELECT ${FILE_COLUMNS} FROM files WHERE id = ? AND tenant = ?`,
    ),
    fileContent: db.prepare<[string, string], { content: Buffer }>(
      "SELECT content FROM files WHERE id = ? AND tenant = ?",
    ),
    deleteFile: db.prepare<[string, string]>("DELETE FROM files WHERE id = ? AND tenant = ?"),
    fileSeq: db.prepare<[string, string], { seq: number }>(
      "SELECT seq FROM files WHERE id = ? AND tenant = ?",
    ),
    listFiles: db.prepare<[string, number, number], FileRow>(
      `SELECT ${FILE_COLUMNS} FROM files WHERE tenant = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
    ),
    listFilesOfPurpose: db.prepare<[string, string, number, number], FileRow>(
      `SELECT ${FILE_COLUMNS} FROM files WHERE tenant = ? AND purpose = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
    ),

    insertBatch: db.prepare<
      [
        {
          id: string;
          tenant: string;
          endpoint: string;
          input_file_id: string;
          completion_window: string;
          status: BatchStatus;
          created_at: number;
          in_progress_at: number | null;
          expires_at: number;
          failed_at: number | null;
          metadata: string | null;
          errors: string | null;
          request_total: number;
        },
      ]
    >(`
      INSERT INTO batches (id, tenant, endpoint, input_file_id, completion_window, status, created_at,
        in_progress_at, expires_at, failed_at, metadata, errors, request_total)
      VALUES (@id, @tenant, @endpoint, @input_file_id, @completion_window, @status, @created_at,
        @in_progress_at, @expires_at, @failed_at, @metadata, @errors, @request_total)`),
    insertLine: db.prepare<[string, number, string, string]>(
      "INSERT INTO batch_lines (batch_id, line, custom_id, body, state) VALUES (?, ?, ?, ?, 'pending')",
    ),
    getBatchById: db.prepare<[string], BatchRow>(`SELECT ${BATCH_COLUMNS} FROM batches WHERE id = ?`),
    getBatch: db.prepare<[string, string], BatchRow>(
      `SELECT ${BATCH_COLUMNS} FROM batches WHERE id = ? AND tenant = ?`,
    ),
    batchSeq: db.prepare<[string, string], { seq: number }>(
      "SELECT seq FROM batches WHERE id = ? AND tenant = ?",
    ),
    listBatches: db.prepare<[string, number, number], BatchRow>(
      `SELECT ${BATCH_COLUMNS} FROM batches WHERE tenant = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
    ),
    countSucceeded: db.prepare<[string]>(
      "UPDATE batches SET request_completed = request_completed + 1 WHERE id = ?",
    ),
    countFailed: db.prepare<[string]>("UPDATE batches SET request_failed = request_failed + 1 WHERE id = ?"),
    getLine: db.prepare<[string, number], LineRow>(
      "SELECT * FROM batch_lines WHERE batch_id = ? AND line = ?",
    ),
    cancel: db.prepare<[number, string, string]>(`
      UPDATE batches SET status = 'cancelling', cancelling_at = ?
      WHERE id = ? AND tenant = ? AND status IN ('in_progress', 'validating')`),
    due: db.prepare<[number], { id: string }>(`
      SELECT b.id FROM batches b
      WHERE b.status IN ('in_progress', 'validating') AND b.expires_at <= ?
        AND (b.status = 'validating' OR EXISTS (
          SELECT 1 FROM batch_lines l INDEXED BY batch_lines_open
          WHERE l.batch_id = b.id AND l.state IN ('pending', 'running')))
      ORDER BY b.seq`),
    expire: db.prepare<[number, number, string]>(`
      UPDATE batches SET status = 'finalizing', finalizing_at = ?, expired_at = ?
      WHERE id = ? AND status IN ('in_progress', 'validating')`),

    claimable: db.prepare<
      [{ now: number; now_s: number; n: number }],
      {
        batch_id: string;
        line: number;
        custom_id: string;
        body: string;
        attempts: number;
        tenant: string;
        endpoint: string;
      }
    >(`
      SELECT l.batch_id, l.line, l.custom_id, l.body, l.attempts, b.tenant, b.endpoint
      FROM batches b JOIN batch_lines l INDEXED BY batch_lines_open ON l.batch_id = b.id
      WHERE b.status = 'in_progress' AND b.expires_at > @now_s AND l.state IN ('pending', 'running')
        AND ((l.state = 'pending' AND l.not_before <= @now) OR (l.state = 'running' AND l.lease_until < @now))
      ORDER BY b.seq, l.line
      LIMIT @n`),
    claim: db.prepare<[string, number, string, number]>(`
      UPDATE batch_lines SET state = 'running', claimed_by = ?, lease_until = ?, attempts = attempts + 1
      WHERE batch_id = ? AND line = ?`),
    renew: db.prepare<[number, string, number, string]>(`
      UPDATE batch_lines SET lease_until = ?
      WHERE batch_id = ? AND line = ? AND state = 'running' AND claimed_by = ?`),
    finish: db.prepare<[LineState, string, number, string, number, string]>(`
      UPDATE batch_lines SET state = ?, result = ?, finished_at = ?, claimed_by = NULL, lease_until = NULL
      WHERE batch_id = ? AND line = ? AND state = 'running' AND claimed_by = ?`),
    retry: db.prepare<[number, string, number, string]>(`
      UPDATE batch_lines SET state = 'pending', not_before = ?, claimed_by = NULL, lease_until = NULL
      WHERE batch_id = ? AND line = ? AND state = 'running' AND claimed_by = ?`),
    defer: db.prepare<[number, string, number, string]>(`
      UPDATE batch_lines SET state = 'pending', not_before = ?, claimed_by = NULL, lease_until = NULL,
        attempts = MAX(attempts - 1, 0)
      WHERE batch_id = ? AND line = ? AND state = 'running' AND claimed_by = ?`),
    release: db.prepare<[string]>(`
      UPDATE batch_lines SET state = 'pending', claimed_by = NULL, lease_until = NULL,
        attempts = MAX(attempts - 1, 0)
      WHERE state = 'running' AND claimed_by = ?`),

    ready: db.prepare<[{ now: number }], { id: string }>(`
      SELECT b.id FROM batches b
      WHERE (b.status = 'in_progress' AND NOT EXISTS (
               SELECT 1 FROM batch_lines l INDEXED BY batch_lines_open
               WHERE l.batch_id = b.id AND l.state IN ('pending', 'running')))
         OR (b.status IN ('cancelling', 'finalizing') AND NOT EXISTS (
               SELECT 1 FROM batch_lines l INDEXED BY batch_lines_open
               WHERE l.batch_id = b.id AND l.state IN ('pending', 'running')
                 AND l.state = 'running' AND l.lease_until >= @now))
      ORDER BY b.seq`),
    unfinished: db.prepare<[{ id: string; now: number }], { live: number; open: number }>(`
      SELECT COALESCE(SUM(state = 'running' AND lease_until >= @now), 0) AS live,
             COUNT(*) AS open
      FROM batch_lines INDEXED BY batch_lines_open WHERE batch_id = @id AND state IN ('pending', 'running')`),
    openLines: db.prepare<[string], { line: number; custom_id: string }>(`
      SELECT line, custom_id FROM batch_lines INDEXED BY batch_lines_open
      WHERE batch_id = ? AND state IN ('pending', 'running') ORDER BY line`),
    close: db.prepare<[string, number, string, number]>(`
      UPDATE batch_lines SET state = 'closed', result = ?, finished_at = ?, claimed_by = NULL, lease_until = NULL
      WHERE batch_id = ? AND line = ?`),
    results: db.prepare<[string, LineState], { result: string }>(
      "SELECT result FROM batch_lines WHERE batch_id = ? AND state = ? ORDER BY line",
    ),
    errorResults: db.prepare<[string], { result: string }>(`
      SELECT result FROM batch_lines
      WHERE batch_id = ? AND state IN ('failed', 'closed') ORDER BY line`),
    finalize: db.prepare<
      [{ id: string; status: string; at: number; output_file_id: string; error_file_id: string | null }]
    >(`
      UPDATE batches SET status = @status,
        finalizing_at = COALESCE(finalizing_at, @at),
        completed_at = CASE WHEN @status = 'completed' THEN @at ELSE completed_at END,
        cancelled_at = CASE WHEN @status = 'cancelled' THEN @at ELSE cancelled_at END,
        expired_at = CASE WHEN @status = 'expired' THEN COALESCE(expired_at, @at) ELSE expired_at END,
        output_file_id = @output_file_id, error_file_id = @error_file_id
      WHERE id = @id`),
  };
}
