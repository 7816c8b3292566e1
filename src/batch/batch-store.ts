// What the Files and Batch API keeps, whichever store keeps it: uploaded files, batch jobs, and every
// line of every job with its state and result. Two stores implement it — an SQLite file (one host: the
// replicas that open the same file share it) and Redis (replicas on any host, the budgets' shared store)
// — and one contract holds for both (src/testing/batch-store-contract.ts runs the same cases on each):
//
// - A line is claimed under a lease (`claimLines`, atomic across every replica on the store, so two
//   replicas never take the same line); a replica that dies leaves its claims to run out, and the line
//   is claimed again. A result is recorded only by the replica that still holds the claim
//   (`finishLine`), and only once: a late answer from a replica whose lease was taken over is refused.
// - A batch ends (`finalizeReady`) with its output file (the succeeded lines' results, in input-line
//   order) and error file (failed lines, and the lines a cancel or the end of the completion window left
//   unrun) and its final status, at once: no reader sees a final status without its files. Each
//   custom_id is in exactly one of the two files. Two replicas finalizing at once are safe: the second
//   finds the batch already final.
// - A cancel stops claims of the batch's pending lines; the lines running may finish; the batch ends
//   `cancelled` once none is running under a live lease. The end of the window (`expireDue`) puts the
//   batch in `finalizing` with `expired_at` set, the same way, and it ends `expired`.
// - Big writes (a file, a job's lines) are cut in pieces with the event loop free in between, so a
//   100 MB upload does not stall the live requests the same process serves; a job is claimable only
//   once every line is written.
//
// Times given to the methods (`now`) are epoch milliseconds; the OpenAI timestamps of files and batches
// are Unix seconds, the lease and backoff times of lines milliseconds. Validation of an input file is
// done elsewhere (batch-input.ts); a store trusts what it is given.

import type {
  BatchRow,
  ClaimedLine,
  FileRow,
  LineKey,
  LineOutcome,
  LineRow,
  NewBatch,
  NewBatchLine,
} from "./batch-rows.js";
import type { BatchErrors, BatchObject, FileObject, FilePurpose, ListPage } from "./batch-types.js";

export * from "./batch-rows.js";

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

export interface NewFile {
  readonly tenant: string;
  readonly purpose: FilePurpose;
  readonly filename: string;
  readonly content: Buffer;
  /** Refuse (FileTooLarge, nothing written) a file over this many bytes. */
  readonly maxBytes?: number;
}

export interface BatchStore {
  /** `sqlite` or `redis`, for logs and metrics. */
  readonly kind: "sqlite" | "redis";
  close(): Promise<void>;

  // --- Files ---
  /** Stores a file; FileTooLarge (writing nothing) when `content` is over `maxBytes`. */
  createFile(f: NewFile, now?: number): Promise<FileRow>;
  /** The tenant's file; null when there is none of that id, or it is another tenant's. */
  getFile(tenant: string, id: string): Promise<FileRow | null>;
  /** The bytes of the tenant's file; null as `getFile`. */
  fileContent(tenant: string, id: string): Promise<Buffer | null>;
  /** Deletes the tenant's file; whether there was one. */
  deleteFile(tenant: string, id: string): Promise<boolean>;
  /** The tenant's files, newest first, `limit` a page (10,000 at most); `after` = the previous page's `last_id`. */
  listFiles(
    tenant: string,
    opts?: { purpose?: FilePurpose; limit?: number; after?: string },
  ): Promise<ListPage<FileObject>>;

  // --- Batches ---
  /**
   * Creates a batch in `in_progress` with every line `pending`. While its lines are written it is
   * `validating` and nothing of it is claimed; a line number or custom_id twice throws and leaves no
   * batch. A batch left `validating` by a process that died while writing it is failed by
   * `finalizeReady` once its writer's lease has run out (code `batch_creation_interrupted`). One
   * cancelled (or past its window) while being written is returned `cancelling` (`finalizing`) and ends
   * as any other.
   */
  createBatch(b: NewBatch & { lines: readonly NewBatchLine[] }, now?: number): Promise<BatchRow>;
  /** Records a batch whose input failed validation: status `failed`, with its `errors`, and no lines. */
  createFailedBatch(b: NewBatch & { errors: BatchErrors }, now?: number): Promise<BatchRow>;
  /** The tenant's batch; null when there is none of that id, or it is another tenant's. */
  getBatch(tenant: string, id: string): Promise<BatchRow | null>;
  /** The tenant's batches as batch objects, newest first, 20 a page unless told (at most 100). */
  listBatches(tenant: string, opts?: { limit?: number; after?: string }): Promise<ListPage<BatchObject>>;
  /** A batch whoever owns it (the runner's own view, never an API answer). */
  batchById(id: string): Promise<BatchRow | null>;
  /**
   * Starts cancelling the tenant's batch: `in_progress` or `validating` becomes `cancelling`. Returns the
   * batch as it is after (unchanged when it was in another status); null as `getBatch`.
   */
  cancelBatch(tenant: string, id: string, now?: number): Promise<BatchRow | null>;
  /** Batches past their window with lines still to run go to `finalizing` with `expired_at`; their ids. */
  expireDue(now?: number): Promise<string[]>;

  // --- Lines ---
  /** One line of a batch, as stored; null when there is none. */
  getLine(batchId: string, line: number): Promise<LineRow | null>;
  /**
   * Claims up to `n` lines for `owner` until `now + leaseMs`: lines `pending` whose backoff is over and
   * lines `running` whose lease ran out, of batches `in_progress` within their window, oldest batch
   * first, then in line order. Each claim counts an attempt. No line is handed to two owners.
   */
  claimLines(owner: string, n: number, leaseMs: number, now?: number): Promise<ClaimedLine[]>;
  /** Extends `owner`'s leases; returns the lines that are no longer the owner's. */
  renewLeases(owner: string, lines: readonly LineKey[], leaseMs: number, now?: number): Promise<LineKey[]>;
  /** Records how a line ended, once, only while `owner` holds it; false (result dropped) otherwise. */
  finishLine(
    owner: string,
    batchId: string,
    line: number,
    outcome: LineOutcome,
    now?: number,
  ): Promise<boolean>;
  /** The owner's running line back to `pending` until `notBefore` (epoch ms), its attempt counted. */
  retryLine(owner: string, batchId: string, line: number, notBefore: number): Promise<boolean>;
  /** As `retryLine`, the attempt given back: told to wait (paused, out of window), never a failure. */
  deferLine(owner: string, batchId: string, line: number, notBefore: number): Promise<boolean>;
  /** At shutdown: the owner's running lines back to `pending`, their attempts uncounted; how many. */
  releaseOwner(owner: string): Promise<number>;

  // --- Finalization ---
  /**
   * Ends every batch that is done (`expireDue` first): `in_progress` with no line pending or running →
   * `completed`; `cancelling` → `cancelled` and expired → `expired` once no line runs under a live
   * lease, their unfinished lines closed with a `batch_cancelled` / `batch_expired` record; and fails
   * batches whose creation was interrupted. Returns the ids of the batches ended (those failed too).
   */
  finalizeReady(now?: number): Promise<string[]>;
}
