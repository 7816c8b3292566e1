// The shapes of the Files and Batch API as OpenAI's clients read them (the file object, the batch object,
// the list page, the per-request record of an output or error file), and the states of a batch's lines
// as the store keeps them. Shared by the store, the runner that executes the lines and the HTTP routes,
// so that what is written to the database and what goes on the wire are one definition.

/** What a file is for: `batch` for an uploaded input, `batch_output` for a batch's output and error files. */
export type FilePurpose = "batch" | "batch_output";

/** OpenAI's file object (`GET /v1/files/{id}`). */
export interface FileObject {
  readonly id: string;
  readonly object: "file";
  readonly bytes: number;
  /** Unix seconds. */
  readonly created_at: number;
  readonly filename: string;
  readonly purpose: FilePurpose;
  /** Deprecated by OpenAI and still sent; a stored file is always `processed`. */
  readonly status: "processed";
}

export type BatchStatus =
  | "validating"
  | "failed"
  | "in_progress"
  | "finalizing"
  | "completed"
  | "expired"
  | "cancelling"
  | "cancelled";

/** The statuses a batch ends in; nothing about it changes after. */
export const FINAL_STATUSES: ReadonlySet<BatchStatus> = new Set([
  "failed",
  "completed",
  "expired",
  "cancelled",
]);

/** One problem of a batch that failed validation; `line` is the 1-based input line, null for the file. */
export interface BatchError {
  readonly code: string;
  readonly message: string;
  readonly param: string | null;
  readonly line: number | null;
}

/** A failed batch's `errors`. */
export interface BatchErrors {
  readonly object: "list";
  readonly data: readonly BatchError[];
}

/** `request_counts` of a batch: `completed` are the lines that succeeded. */
export interface RequestCounts {
  readonly total: number;
  readonly completed: number;
  readonly failed: number;
}

/** Up to 16 string pairs a client attaches to a batch. */
export type BatchMetadata = Readonly<Record<string, string>>;

/** OpenAI's batch object (`GET /v1/batches/{id}`); timestamps are Unix seconds, null while unset. */
export interface BatchObject {
  readonly id: string;
  readonly object: "batch";
  readonly endpoint: string;
  readonly errors: BatchErrors | null;
  readonly input_file_id: string;
  readonly completion_window: string;
  readonly status: BatchStatus;
  readonly output_file_id: string | null;
  readonly error_file_id: string | null;
  readonly created_at: number;
  readonly in_progress_at: number | null;
  readonly expires_at: number | null;
  readonly finalizing_at: number | null;
  readonly completed_at: number | null;
  readonly failed_at: number | null;
  readonly expired_at: number | null;
  readonly cancelling_at: number | null;
  readonly cancelled_at: number | null;
  readonly request_counts: RequestCounts;
  readonly metadata: BatchMetadata | null;
}

/** A page of a list endpoint, newest first; `after` = `last_id` asks for the next. */
export interface ListPage<T> {
  readonly object: "list";
  readonly data: T[];
  readonly first_id: string | null;
  readonly last_id: string | null;
  readonly has_more: boolean;
}

/**
 * One line of a batch's output or error file: the request's answer (`response`) or why there is none
 * (`error`, e.g. `batch_cancelled`, `batch_expired`). The runner builds it; the store keeps it and
 * writes it out unchanged.
 */
export interface BatchRequestOutput {
  /** `batch_req_…` */
  readonly id: string;
  readonly custom_id: string;
  readonly response: {
    readonly status_code: number;
    readonly request_id: string;
    readonly body: unknown;
  } | null;
  readonly error: { readonly code: string; readonly message: string } | null;
}

/**
 * Where a line of a batch is. `pending`: waiting for a runner (after `not_before`). `running`: claimed by
 * a replica until its lease ends. `succeeded` / `failed`: its result is recorded (output file / error
 * file). `closed`: never finished, the batch was cancelled or expired first; its result is the
 * `batch_cancelled` / `batch_expired` record of the error file, and it counts neither as completed nor
 * as failed.
 */
export type LineState = "pending" | "running" | "succeeded" | "failed" | "closed";
