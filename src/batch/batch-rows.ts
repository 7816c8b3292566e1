// The rows of the batch store as SQLite holds them, what callers pass in and get back, and their
// OpenAI shapes on the wire (file and batch objects, list pages), with the ids the store gives out.

import { randomBytes } from "node:crypto";
import type {
  BatchErrors,
  BatchMetadata,
  BatchObject,
  BatchRequestOutput,
  BatchStatus,
  FileObject,
  FilePurpose,
  LineState,
  ListPage,
  RequestCounts,
} from "./batch-types.js";

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
  /** The job's `metadata.task`: the task of its lines that name none themselves; null: none. */
  readonly jobTask: string | null;
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

export function seconds(nowMs: number): number {
  return Math.floor(nowMs / 1000);
}

export function clampLimit(limit: number | undefined, dflt: number, max: number): number {
  if (limit === undefined || !Number.isFinite(limit)) return dflt;
  return Math.min(max, Math.max(1, Math.floor(limit)));
}

export function page<T>(items: T[], limit: number, idOf: (t: T) => string): ListPage<T> {
  const data = items.slice(0, limit);
  return {
    object: "list",
    data,
    first_id: data.length > 0 ? idOf(data[0]!) : null,
    last_id: data.length > 0 ? idOf(data[data.length - 1]!) : null,
    has_more: items.length > limit,
  };
}
