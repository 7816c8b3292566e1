// The batch store in an embedded SQLite file (node:sqlite): uploaded files (their bytes too), batch
// jobs, and every line of every job with its state and result; the contract is batch-store.ts's. Every
// replica of the gateway that opens the same file shares it: claims, results and endings are
// `BEGIN IMMEDIATE` transactions, so the file's write lock is what keeps two replicas from taking one
// line or ending one batch twice.
//
// node:sqlite runs each statement synchronously on the event loop, so nothing big is written in one
// go: a file's bytes go in 1 MiB pieces (file_chunks, the file's row last), a new batch's lines in pieces
// of about 256 KiB while it is `validating` under a writer's lease, and a batch's output and error files
// piece by piece between a seal (the batch `finalizing`, its unrun lines closed, a finalizer's lease) and
// a commit (the files' rows, the final status), with the event loop free in between. A process that dies
// mid-way leaves a lease that runs out: an unfinished creation fails the batch
// (`batch_creation_interrupted`), an unfinished finalization is done again by whoever comes next, and the
// pieces of files never committed are deleted at the next open.

import { randomUUID } from "node:crypto";
import { setImmediate as nextTurn } from "node:timers/promises";
import { SqliteFile } from "../sqlite/sqlite-file.js";
import { prepareAll, SCHEMA } from "./batch-sql.js";
import {
  BATCH_PAGE_DEFAULT,
  BATCH_PAGE_MAX,
  type BatchRow,
  type BatchStore,
  type ClaimedLine,
  clampLimit,
  type FileRow,
  type LineKey,
  type LineOutcome,
  type LineRow,
  type NewBatch,
  type NewBatchLine,
  type NewFile,
  newBatchId,
  page,
  seconds,
  toBatchObject,
} from "./batch-store.js";
import type { BatchErrors, BatchObject, FileObject, FilePurpose, ListPage } from "./batch-types.js";
import { holdWriter, LostWriter, SqliteBatchEndings, WRITER_LEASE_MS } from "./sqlite-batch-endings.js";
import { SqliteBatchFiles } from "./sqlite-batch-files.js";

export interface BatchStoreOptions {
  /** How long a write waits for another process's transaction before SQLITE_BUSY; 5000 ms unless told. */
  readonly busyTimeoutMs?: number;
  /** `FULL` (every commit on disk before it returns) unless told; `NORMAL` may lose the last commits to a power cut. */
  readonly synchronous?: "FULL" | "NORMAL";
}

/** About this many bytes of a new batch's lines per transaction. */
export const LINE_PIECE_BYTES = 256 << 10;
export class SqliteBatchStore implements BatchStore {
  readonly kind = "sqlite";
  private readonly db: SqliteFile;
  private readonly stmts: ReturnType<typeof prepareAll>;
  /** This store's name as a writer of batches. */
  private readonly writer = `w-${randomUUID()}`;
  private readonly files: SqliteBatchFiles;
  private readonly endings: SqliteBatchEndings;

  private constructor(
    readonly path: string,
    opts: BatchStoreOptions,
  ) {
    this.db = SqliteFile.open(path, {
      busyTimeoutMs: opts.busyTimeoutMs ?? 5000,
      synchronous: opts.synchronous ?? "FULL",
      foreignKeys: true,
    });
    this.db.exec(SCHEMA);
    this.stmts = prepareAll(this.db);
    this.files = new SqliteBatchFiles(this.db, this.stmts);
    this.endings = new SqliteBatchEndings(this.db, this.stmts, this.files, this.writer, (now) =>
      this.expireDue(now),
    );
  }

  /**
   * Opens (creating) the store at `path`. Several processes (the gateway's replicas) may open the same
   * file; `:memory:` keeps it in this process only.
   */
  static open(path: string, opts: BatchStoreOptions = {}): SqliteBatchStore {
    return new SqliteBatchStore(path, opts);
  }

  async close(): Promise<void> {
    this.db.close();
  }

  // --- Files -------------------------------------------------------------------------------------------

  async createFile(f: NewFile, now = Date.now()): Promise<FileRow> {
    return this.files.create(f, now);
  }

  async getFile(tenant: string, id: string): Promise<FileRow | null> {
    return this.files.get(tenant, id);
  }

  async fileContent(tenant: string, id: string): Promise<Buffer | null> {
    return this.files.content(tenant, id);
  }

  async deleteFile(tenant: string, id: string): Promise<boolean> {
    return this.files.delete(tenant, id);
  }

  async listFiles(
    tenant: string,
    opts: { purpose?: FilePurpose; limit?: number; after?: string } = {},
  ): Promise<ListPage<FileObject>> {
    return this.files.list(tenant, opts);
  }

  // --- Batches -----------------------------------------------------------------------------------------

  async createBatch(b: NewBatch & { lines: readonly NewBatchLine[] }, now = Date.now()): Promise<BatchRow> {
    const bodies = b.lines.map((l) => (typeof l.body === "string" ? l.body : JSON.stringify(l.body)));
    assertDistinct(b.lines);
    const id = newBatchId();
    this.db.transaction(() => {
      this.insertBatch(id, b, now, { status: "validating", errors: null, total: b.lines.length });
      this.stmts.putWriter.run(id, "create", this.writer, now + WRITER_LEASE_MS, null);
    });
    try {
      let i = 0;
      while (i < b.lines.length) {
        await nextTurn();
        let bytes = 0;
        const from = i;
        while (i < b.lines.length && (i === from || bytes < LINE_PIECE_BYTES)) bytes += bodies[i++]!.length;
        this.db.transaction(() => {
          holdWriter(this.stmts, id, this.writer, now);
          for (let k = from; k < i; k++) {
            const l = b.lines[k]!;
            this.stmts.insertLine.run(id, l.line, l.customId, bodies[k]!);
          }
        });
      }
      this.db.transaction(() => {
        holdWriter(this.stmts, id, this.writer, now);
        this.stmts.startBatch.run(seconds(now), id);
        this.stmts.deleteWriter.run(id);
      });
    } catch (err) {
      if (!(err instanceof LostWriter)) this.dropBatch(id);
      throw err;
    }
    return this.stmts.getBatchById.get(id)!;
  }

  async createFailedBatch(b: NewBatch & { errors: BatchErrors }, now = Date.now()): Promise<BatchRow> {
    const id = newBatchId();
    this.insertBatch(id, b, now, { status: "failed", errors: b.errors, total: 0 });
    return this.stmts.getBatchById.get(id)!;
  }

  /** The batch row as created: being written (its lines follow) or failed at once (its errors). */
  private insertBatch(
    id: string,
    b: NewBatch,
    now: number,
    how: { status: "validating" | "failed"; errors: BatchErrors | null; total: number },
  ): void {
    const at = seconds(now);
    const failed = how.status === "failed";
    this.stmts.insertBatch.run({
      id,
      tenant: b.tenant,
      endpoint: b.endpoint,
      input_file_id: b.inputFileId,
      completion_window: b.completionWindow ?? "24h",
      status: how.status,
      created_at: at,
      in_progress_at: null,
      expires_at: seconds(now + b.completionWindowMs),
      failed_at: failed ? at : null,
      metadata: b.metadata ? JSON.stringify(b.metadata) : null,
      errors: how.errors === null ? null : JSON.stringify(how.errors),
      request_total: how.total,
    });
  }

  /** A creation that threw part-way: the batch and the lines written so far go. */
  private dropBatch(id: string): void {
    this.db.transaction(() => {
      this.stmts.deleteLines.run(id);
      this.stmts.deleteWriter.run(id);
      this.stmts.deleteBatch.run(id);
    });
  }

  async getBatch(tenant: string, id: string): Promise<BatchRow | null> {
    return this.stmts.getBatch.get(id, tenant) ?? null;
  }

  async listBatches(
    tenant: string,
    opts: { limit?: number; after?: string } = {},
  ): Promise<ListPage<BatchObject>> {
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

  async batchById(id: string): Promise<BatchRow | null> {
    return this.stmts.getBatchById.get(id) ?? null;
  }

  async getLine(batchId: string, line: number): Promise<LineRow | null> {
    return this.stmts.getLine.get(batchId, line) ?? null;
  }

  async cancelBatch(tenant: string, id: string, now = Date.now()): Promise<BatchRow | null> {
    this.stmts.cancel.run(seconds(now), id, tenant);
    return this.getBatch(tenant, id);
  }

  async expireDue(now = Date.now()): Promise<string[]> {
    const at = seconds(now);
    return this.db.transaction(() => {
      const due = this.stmts.due.all(at).map((r) => r.id);
      for (const id of due) this.stmts.expire.run(at, at, id);
      return due;
    });
  }

  // --- Lines -------------------------------------------------------------------------------------------

  async claimLines(owner: string, n: number, leaseMs: number, now = Date.now()): Promise<ClaimedLine[]> {
    if (n <= 0) return [];
    const leaseUntil = now + leaseMs;
    return this.db.transaction((): ClaimedLine[] => {
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
    });
  }

  async renewLeases(
    owner: string,
    lines: readonly LineKey[],
    leaseMs: number,
    now = Date.now(),
  ): Promise<LineKey[]> {
    const until = now + leaseMs;
    return this.db.transaction(() =>
      lines.filter((k) => this.stmts.renew.run(until, k.batchId, k.line, owner).changes === 0),
    );
  }

  async finishLine(
    owner: string,
    batchId: string,
    line: number,
    outcome: LineOutcome,
    now = Date.now(),
  ): Promise<boolean> {
    const result = JSON.stringify(outcome.result);
    return this.db.transaction((): boolean => {
      if (this.stmts.finish.run(outcome.state, result, now, batchId, line, owner).changes === 0) return false;
      (outcome.state === "succeeded" ? this.stmts.countSucceeded : this.stmts.countFailed).run(batchId);
      return true;
    });
  }

  async retryLine(owner: string, batchId: string, line: number, notBefore: number): Promise<boolean> {
    return this.stmts.retry.run(notBefore, batchId, line, owner).changes > 0;
  }

  async deferLine(owner: string, batchId: string, line: number, notBefore: number): Promise<boolean> {
    return this.stmts.defer.run(notBefore, batchId, line, owner).changes > 0;
  }

  async releaseOwner(owner: string): Promise<number> {
    return this.stmts.release.run(owner).changes;
  }

  async finalizeReady(now = Date.now()): Promise<string[]> {
    return this.endings.finalizeReady(now);
  }
}

/** A line number or custom_id twice throws before anything is written. */
function assertDistinct(lines: readonly NewBatchLine[]): void {
  const nums = new Set<number>();
  const ids = new Set<string>();
  for (const l of lines) {
    if (nums.has(l.line)) throw new Error(`line ${l.line} is given twice`);
    if (ids.has(l.customId)) throw new Error(`custom_id ${JSON.stringify(l.customId)} is given twice`);
    nums.add(l.line);
    ids.add(l.customId);
  }
}

/** `metadata.task` of a job's stored metadata, or null. */
function taskOf(metadata: string | null): string | null {
  if (metadata === null) return null;
  const t = (JSON.parse(metadata) as Record<string, unknown>).task;
  return typeof t === "string" && t !== "" ? t : null;
}
