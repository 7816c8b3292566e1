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

import Database from "better-sqlite3";
import {
  BATCH_PAGE_DEFAULT,
  BATCH_PAGE_MAX,
  type BatchRow,
  type ClaimedLine,
  clampLimit,
  countsOf,
  FILE_PAGE_DEFAULT,
  FILE_PAGE_MAX,
  type FileRow,
  type LineKey,
  type LineOutcome,
  type LineRow,
  type NewBatch,
  type NewBatchLine,
  newBatchId,
  newBatchRequestId,
  newFileId,
  page,
  seconds,
  toBatchObject,
  toFileObject,
} from "./batch-rows.js";
import { prepareAll, SCHEMA } from "./batch-sql.js";
import {
  type BatchErrors,
  type BatchObject,
  type BatchRequestOutput,
  FINAL_STATUSES,
  type FileObject,
  type FilePurpose,
  type ListPage,
  type RequestCounts,
} from "./batch-types.js";

export * from "./batch-rows.js";

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

/** How a batch ends: completed, or cancelled / expired with the code its unrun lines are closed with. */
type Ending =
  | { readonly status: "completed" }
  | { readonly status: "cancelled"; readonly code: "batch_cancelled" }
  | { readonly status: "expired"; readonly code: "batch_expired" };

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
    const write = this.db.transaction(() => {
      this.insertBatch(id, b, now, { status: "in_progress", errors: null, total: b.lines.length });
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
    this.insertBatch(id, b, now, { status: "failed", errors: b.errors, total: 0 });
    return this.stmts.getBatchById.get(id)!;
  }

  /** The batch row as created: running (its lines follow) or failed at once (its errors). */
  private insertBatch(
    id: string,
    b: NewBatch,
    now: number,
    how: { status: "in_progress" | "failed"; errors: BatchErrors | null; total: number },
  ): void {
    const at = seconds(now);
    const running = how.status === "in_progress";
    this.stmts.insertBatch.run({
      id,
      tenant: b.tenant,
      endpoint: b.endpoint,
      input_file_id: b.inputFileId,
      completion_window: b.completionWindow ?? "24h",
      status: how.status,
      created_at: at,
      in_progress_at: running ? at : null,
      expires_at: seconds(now + b.completionWindowMs),
      failed_at: running ? null : at,
      metadata: b.metadata ? JSON.stringify(b.metadata) : null,
      errors: how.errors === null ? null : JSON.stringify(how.errors),
      request_total: how.total,
    });
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
  /** A batch whoever owns it (the runner's own view, never an API answer). */
  batchById(id: string): BatchRow | null {
    return this.stmts.getBatchById.get(id) ?? null;
  }

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
            jobTask: taskOf(r.metadata),
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

/** `metadata.task` of a job's stored metadata, or null. */
function taskOf(metadata: string | null): string | null {
  if (metadata === null) return null;
  const t = (JSON.parse(metadata) as Record<string, unknown>).task;
  return typeof t === "string" && t !== "" ? t : null;
}
