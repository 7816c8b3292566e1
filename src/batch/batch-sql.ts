// The batch store's SQL: its schema and every statement it runs, prepared once per connection.

import type { SqliteFile } from "../sqlite/sqlite-file.js";
import type { BatchRow, FileRow, LineRow } from "./batch-rows.js";
import type { BatchStatus, LineState } from "./batch-types.js";

export const SCHEMA = `
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
-- A file's bytes past its first piece (files.content), in order. Pieces are written before their file's
-- row, each in a transaction of its own, so a file being written is invisible and a process that dies
-- mid-write leaves pieces of no file, which a later open deletes.
CREATE TABLE IF NOT EXISTS file_chunks (
  file_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  data BLOB NOT NULL,
  written_at INTEGER NOT NULL,
  PRIMARY KEY (file_id, seq)
) WITHOUT ROWID;
-- A batch being written (phase create: its lines go in piece by piece while it is validating) or being
-- finalized (phase finalize: its output and error files go in piece by piece; ending is the status it
-- ends in), by owner until its lease ends; a lease that ran out is taken over (finalize) or the batch
-- failed (create).
CREATE TABLE IF NOT EXISTS batch_writers (
  batch_id TEXT PRIMARY KEY,
  phase TEXT NOT NULL,
  owner TEXT NOT NULL,
  lease_until INTEGER NOT NULL,
  ending TEXT
);
`;

const FILE_COLUMNS = "id, tenant, purpose, filename, bytes, created_at";
const BATCH_COLUMNS =
  "id, tenant, endpoint, input_file_id, completion_window, status, created_at, in_progress_at, expires_at, " +
  "finalizing_at, completed_at, failed_at, expired_at, cancelling_at, cancelled_at, metadata, errors, " +
  "output_file_id, error_file_id, request_total, request_completed, request_failed";

export function prepareAll(db: SqliteFile) {
  return {
    insertFile: db.prepare<[string, string, string, string, number, number, Buffer]>(
      "INSERT INTO files (id, tenant, purpose, filename, bytes, created_at, content) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ),
    getFile: db.prepare<[string, string], FileRow>(
      `SELECT ${FILE_COLUMNS} FROM files WHERE id = ? AND tenant = ?`,
    ),
    fileContent: db.prepare<[string, string], { content: Uint8Array }>(
      "SELECT content FROM files WHERE id = ? AND tenant = ?",
    ),
    deleteFile: db.prepare<[string, string]>("DELETE FROM files WHERE id = ? AND tenant = ?"),
    insertChunk: db.prepare<[string, number, Buffer, number]>(
      "INSERT INTO file_chunks (file_id, seq, data, written_at) VALUES (?, ?, ?, ?)",
    ),
    chunk: db.prepare<[string, number], { data: Uint8Array }>(
      "SELECT data FROM file_chunks WHERE file_id = ? AND seq = ?",
    ),
    deleteChunks: db.prepare<[string]>("DELETE FROM file_chunks WHERE file_id = ?"),
    deleteOrphanChunks: db.prepare<[number]>(
      "DELETE FROM file_chunks WHERE written_at < ? AND file_id NOT IN (SELECT id FROM files)",
    ),
    getWriter: db.prepare<
      [string],
      { phase: "create" | "finalize"; owner: string; lease_until: number; ending: string | null }
    >("SELECT phase, owner, lease_until, ending FROM batch_writers WHERE batch_id = ?"),
    putWriter: db.prepare<[string, string, string, number, string | null]>(
      "INSERT OR REPLACE INTO batch_writers (batch_id, phase, owner, lease_until, ending) VALUES (?, ?, ?, ?, ?)",
    ),
    renewWriter: db.prepare<[number, string, string]>(
      "UPDATE batch_writers SET lease_until = ? WHERE batch_id = ? AND owner = ?",
    ),
    deleteWriter: db.prepare<[string]>("DELETE FROM batch_writers WHERE batch_id = ?"),
    lapsedCreations: db.prepare<[number], { batch_id: string }>(
      "SELECT batch_id FROM batch_writers WHERE phase = 'create' AND lease_until < ?",
    ),
    deleteLines: db.prepare<[string]>("DELETE FROM batch_lines WHERE batch_id = ?"),
    deleteBatch: db.prepare<[string]>("DELETE FROM batches WHERE id = ?"),
    startBatch: db.prepare<[number, string]>(
      "UPDATE batches SET status = 'in_progress', in_progress_at = ? WHERE id = ? AND status = 'validating'",
    ),
    failBatch: db.prepare<[number, string, string]>(
      "UPDATE batches SET status = 'failed', failed_at = ?, errors = ?, request_total = 0 WHERE id = ?",
    ),
    seal: db.prepare<[number, string]>(
      "UPDATE batches SET status = 'finalizing', finalizing_at = COALESCE(finalizing_at, ?) WHERE id = ?",
    ),
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
        metadata: string | null;
      }
    >(`
      SELECT l.batch_id, l.line, l.custom_id, l.body, l.attempts, b.tenant, b.endpoint, b.metadata
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
                 AND l.state = 'running' AND l.lease_until >= @now)
             AND NOT EXISTS (
               SELECT 1 FROM batch_writers w WHERE w.batch_id = b.id AND w.lease_until >= @now))
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
    results: db.prepare<[string, number, number], { line: number; result: string }>(`
      SELECT line, result FROM batch_lines
      WHERE batch_id = ? AND state = 'succeeded' AND line > ? ORDER BY line LIMIT ?`),
    errorResults: db.prepare<[string, number, number], { line: number; result: string }>(`
      SELECT line, result FROM batch_lines
      WHERE batch_id = ? AND state IN ('failed', 'closed') AND line > ? ORDER BY line LIMIT ?`),
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
