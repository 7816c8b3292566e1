// Where the Redis batch store keeps what, and how its hashes read back as the store's rows. The Lua
// scripts (redis-batch-scripts.ts, redis-batch-job-scripts.ts) build the same keys from the prefix.
//
// Keys, for prefix P (`<namespace>:`):
//   P seq                    counter: the order of files and batches (newest first = highest)
//   P f:<id>                 hash: a file's metadata (id tenant purpose filename bytes created_at pieces seq),
//                            written last; P f:<id>:<i> its pieces (≤ 1 MiB), with a TTL until then
//   P tf:<tenant>            sorted set by seq: the tenant's files; P tfp:<purpose>:<tenant> by purpose
//   P tb:<tenant>            sorted set by seq: the tenant's batches
//   P b:<id>                 hash: a batch row (absent field = null), seq, writer/writer_until while its
//                            lines are written, fin_owner/fin_until while it is finalized
//   P b:<id>:<column>        hashes by line number: cid body state att own lease nb res fin
//   P b:<id>:nums            sorted set: every line number (the order of the output)
//   P b:<id>:ready|later|run the open lines: ready to claim (by line), pending backing off (by not_before),
//                            running (by lease end); every open line is in exactly one
//   P active                 sorted set by seq: batches in_progress (claimable)
//   P ending                 sorted set by seq: batches cancelling or finalizing
//   P expiry                 sorted set by expires_at (s): batches whose window may end
//   P creating               sorted set by writer_until (ms): batches being written
//   P o:<owner>              set of `<batch id>|<line>`: the lines an owner runs (for releaseOwner)

import { type BatchRow, type FileRow, type LineRow, type NewBatch, seconds } from "./batch-rows.js";
import type { BatchErrors, BatchStatus, FilePurpose, LineState } from "./batch-types.js";

/** The keys the client reads directly, under one namespace. */
export class BatchKeys {
  /** What every script gets as ARGV[1]. */
  readonly prefix: string;
  constructor(namespace: string) {
    this.prefix = `${namespace}:`;
  }
  file(id: string): string {
    return `${this.prefix}f:${id}`;
  }
  piece(id: string, i: number): string {
    return `${this.prefix}f:${id}:${i}`;
  }
  files(tenant: string, purpose?: FilePurpose): string {
    return purpose === undefined ? `${this.prefix}tf:${tenant}` : `${this.prefix}tfp:${purpose}:${tenant}`;
  }
  batches(tenant: string): string {
    return `${this.prefix}tb:${tenant}`;
  }
  batch(id: string): string {
    return `${this.prefix}b:${id}`;
  }
  column(id: string, c: LineColumn): string {
    return `${this.prefix}b:${id}:${c}`;
  }
}

export type LineColumn = "cid" | "body" | "state" | "att" | "own" | "lease" | "nb" | "res" | "fin" | "nums";

/** The columns of a line, in the order `lineRow` reads them. */
export const LINE_COLUMNS = ["cid", "body", "state", "att", "own", "lease", "nb", "res", "fin"] as const;

type Hash = Readonly<Record<string, string>>;

function num(v: string | undefined): number | null {
  return v === undefined || v === "" ? null : Number(v);
}

function str(v: string | undefined): string | null {
  return v === undefined ? null : v;
}

/** A file's metadata hash as a row; null when there is none. */
export function fileRow(h: Hash): FileRow | null {
  if (h.id === undefined) return null;
  return {
    id: h.id,
    tenant: h.tenant ?? "",
    purpose: (h.purpose ?? "batch") as FilePurpose,
    filename: h.filename ?? "",
    bytes: Number(h.bytes ?? 0),
    created_at: Number(h.created_at ?? 0),
  };
}

/** A batch hash as a row; null when there is none. */
export function batchRow(h: Hash): BatchRow | null {
  if (h.id === undefined) return null;
  return {
    id: h.id,
    tenant: h.tenant ?? "",
    endpoint: h.endpoint ?? "",
    input_file_id: h.input_file_id ?? "",
    completion_window: h.completion_window ?? "24h",
    status: (h.status ?? "failed") as BatchStatus,
    created_at: Number(h.created_at ?? 0),
    in_progress_at: num(h.in_progress_at),
    expires_at: num(h.expires_at),
    finalizing_at: num(h.finalizing_at),
    completed_at: num(h.completed_at),
    failed_at: num(h.failed_at),
    expired_at: num(h.expired_at),
    cancelling_at: num(h.cancelling_at),
    cancelled_at: num(h.cancelled_at),
    metadata: str(h.metadata),
    errors: str(h.errors),
    output_file_id: str(h.output_file_id),
    error_file_id: str(h.error_file_id),
    request_total: Number(h.request_total ?? 0),
    request_completed: Number(h.request_completed ?? 0),
    request_failed: Number(h.request_failed ?? 0),
  };
}

/** A line from its columns (`LINE_COLUMNS` order, null = absent); null when there is no such line. */
export function lineRow(batchId: string, line: number, v: readonly (string | null)[]): LineRow | null {
  const [cid, body, state, att, own, lease, nb, res, fin] = v;
  if (state === null || state === undefined) return null;
  return {
    batch_id: batchId,
    line,
    custom_id: cid ?? "",
    body: body ?? "",
    state: state as LineState,
    attempts: Number(att ?? 0),
    claimed_by: own ?? null,
    lease_until: num(lease ?? undefined),
    not_before: Number(nb ?? 0),
    result: res ?? null,
    finished_at: num(fin ?? undefined),
  };
}

/** A batch row's fields as stored (null ones left out), for the create script's field/value pairs. */
export function batchFields(row: BatchRow): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(row)) {
    if (v !== null && v !== undefined) out.push(k, String(v));
  }
  return out;
}

/** The row of a new batch: `validating` (its lines to be written) or `failed` with its errors. */
export function newBatchRow(
  id: string,
  b: NewBatch,
  now: number,
  status: "validating" | "failed",
  errors: BatchErrors | null,
): BatchRow {
  const at = seconds(now);
  return {
    id,
    tenant: b.tenant,
    endpoint: b.endpoint,
    input_file_id: b.inputFileId,
    completion_window: b.completionWindow ?? "24h",
    status,
    created_at: at,
    in_progress_at: null,
    expires_at: seconds(now + b.completionWindowMs),
    finalizing_at: null,
    completed_at: null,
    failed_at: status === "failed" ? at : null,
    expired_at: null,
    cancelling_at: null,
    cancelled_at: null,
    metadata: b.metadata ? JSON.stringify(b.metadata) : null,
    errors: errors === null ? null : JSON.stringify(errors),
    output_file_id: null,
    error_file_id: null,
    request_total: 0,
    request_completed: 0,
    request_failed: 0,
  };
}
