// How a batch of the SQLite batch store ends (`finalizeReady`), in three steps so that its output and
// error files — up to the size of its input and more — are written piece by piece with the event loop
// free in between: a seal (one transaction: the batch still to end, its unrun lines closed with a
// `batch_cancelled` / `batch_expired` record when it was cancelled or expired, status `finalizing`, a
// finalizer's lease), the files' pieces (each piece's transaction checks the lease), and a commit (one
// transaction: the files' rows, the file ids, the final status). A finalizer that dies leaves its lease
// to run out; the next `finalizeReady` seals the batch again and redoes the files (the dead one's pieces
// are swept as orphans). Batches whose creator died while writing their lines are failed here too.

import { setImmediate as nextTurn } from "node:timers/promises";
import type { SqliteFile } from "../sqlite/sqlite-file.js";
import type { prepareAll } from "./batch-sql.js";
import { type BatchRow, newBatchRequestId, seconds } from "./batch-store.js";
import { type BatchErrors, type BatchRequestOutput, FINAL_STATUSES } from "./batch-types.js";
import type { SqliteBatchFiles, UncommittedFile } from "./sqlite-batch-files.js";

type Statements = ReturnType<typeof prepareAll>;

/** Results read per query when a batch's files are written. */
const RESULT_PAGE = 512;
/** A creation's or a finalization's lease; renewed with every piece. */
export const WRITER_LEASE_MS = 60_000;

/** How a batch ends: completed, or cancelled / expired with the code its unrun lines are closed with. */
type Ending =
  | { readonly status: "completed" }
  | { readonly status: "cancelled"; readonly code: "batch_cancelled" }
  | { readonly status: "expired"; readonly code: "batch_expired" };

const ENDINGS: Record<string, Ending> = {
  completed: { status: "completed" },
  cancelled: { status: "cancelled", code: "batch_cancelled" },
  expired: { status: "expired", code: "batch_expired" },
};

/** A writer's lease ran out, or another took it: its work is dropped. */
export class LostWriter extends Error {}

/** Inside a transaction: `writer` still holds `id`'s lease, renewed; LostWriter otherwise. */
export function holdWriter(stmts: Statements, id: string, writer: string, now: number): void {
  if (stmts.renewWriter.run(now + WRITER_LEASE_MS, id, writer).changes === 0) {
    throw new LostWriter(`the writer's lease of ${id} was taken`);
  }
}

export class SqliteBatchEndings {
  constructor(
    private readonly db: SqliteFile,
    private readonly stmts: Statements,
    private readonly files: SqliteBatchFiles,
    private readonly writer: string,
    private readonly expireDue: (now: number) => Promise<unknown>,
  ) {}

  async finalizeReady(now: number): Promise<string[]> {
    const ended = this.failLapsedCreations(now);
    await this.expireDue(now);
    this.files.sweepOrphans(now);
    for (const { id } of this.stmts.ready.all({ now })) {
      try {
        if (await this.finalizeOne(id, now)) ended.push(id);
      } catch (err) {
        if (!(err instanceof LostWriter)) throw err;
      }
    }
    return ended;
  }

  /** Batches whose creator died while writing their lines fail, their lines gone; their ids. */
  private failLapsedCreations(now: number): string[] {
    const errors: BatchErrors = {
      object: "list",
      data: [
        {
          code: "batch_creation_interrupted",
          message: "The gateway stopped while this batch's lines were being written; create the batch again.",
          param: null,
          line: null,
        },
      ],
    };
    const failed: string[] = [];
    for (const { batch_id } of this.stmts.lapsedCreations.all(now)) {
      this.db.transaction(() => {
        const w = this.stmts.getWriter.get(batch_id);
        if (w?.phase !== "create" || w.lease_until >= now) return;
        this.stmts.deleteLines.run(batch_id);
        this.stmts.deleteWriter.run(batch_id);
        this.stmts.failBatch.run(seconds(now), JSON.stringify(errors), batch_id);
        failed.push(batch_id);
      });
    }
    return failed;
  }

  /** Seal, write the files piece by piece, commit; false when the batch is not to be ended now. */
  private async finalizeOne(id: string, now: number): Promise<boolean> {
    const ending = this.seal(id, now);
    if (!ending) return false;
    const b = this.stmts.getBatchById.get(id)!;
    const output = await this.writeResults(id, b.tenant, `${id}_output.jsonl`, "succeeded", now);
    const errors = await this.writeResults(id, b.tenant, `${id}_error.jsonl`, "errors", now);
    const errorFile = errors.row.bytes > 0 ? errors : null;
    return this.db.transaction((): boolean => {
      holdWriter(this.stmts, id, this.writer, now);
      this.files.commit(output);
      if (errorFile) this.files.commit(errorFile);
      this.stmts.finalize.run({
        id,
        status: ending.status,
        at: seconds(now),
        output_file_id: output.row.id,
        error_file_id: errorFile?.row.id ?? null,
      });
      this.stmts.deleteWriter.run(id);
      return true;
    });
  }

  /**
   * In one transaction: checks the batch is to end (another replica may have ended or sealed it since
   * the scan), closes its unrun lines when it is cancelled or expired, puts it in `finalizing` and takes
   * the finalizer's lease. Its ending, or null.
   */
  private seal(id: string, now: number): Ending | null {
    return this.db.transaction((): Ending | null => {
      const b = this.stmts.getBatchById.get(id);
      if (!b || FINAL_STATUSES.has(b.status)) return null;
      const w = this.stmts.getWriter.get(id);
      if (w && w.lease_until >= now) return null;
      const ending = w?.phase === "finalize" ? ENDINGS[w.ending ?? ""] : endingOf(b);
      if (!ending) return null;
      const { live, open } = this.stmts.unfinished.get({ id, now })!;
      if (live > 0 || (ending.status === "completed" && open > 0)) return null;
      if (ending.status !== "completed") this.closeOpenLines(id, ending.code, now);
      this.stmts.seal.run(seconds(now), id);
      this.stmts.putWriter.run(id, "finalize", this.writer, now + WRITER_LEASE_MS, ending.status);
      return ending;
    });
  }

  /** Pending lines, and running ones whose lease ran out, closed with the ending's record. */
  private closeOpenLines(id: string, code: "batch_cancelled" | "batch_expired", now: number): void {
    const message =
      code === "batch_cancelled"
        ? "The batch was cancelled before this request ran."
        : "The request could not be run before the batch's completion window ended.";
    for (const l of this.stmts.openLines.all(id)) {
      const record: BatchRequestOutput = {
        id: newBatchRequestId(),
        custom_id: l.custom_id,
        response: null,
        error: { code, message },
      };
      this.stmts.close.run(JSON.stringify(record), now, id, l.line);
    }
  }

  /** A sealed batch's output (succeeded lines) or error file (failed and closed lines), in line order. */
  private writeResults(
    id: string,
    tenant: string,
    filename: string,
    which: "succeeded" | "errors",
    now: number,
  ): Promise<UncommittedFile> {
    const q = which === "succeeded" ? this.stmts.results : this.stmts.errorResults;
    return this.files.write(
      tenant,
      "batch_output",
      filename,
      now,
      async (add) => {
        for (let after = 0; ; ) {
          await nextTurn();
          const rows = q.all(id, after, RESULT_PAGE);
          for (const r of rows) add(Buffer.from(`${r.result}\n`, "utf8"));
          if (rows.length < RESULT_PAGE) return;
          after = rows[rows.length - 1]!.line;
        }
      },
      () => holdWriter(this.stmts, id, this.writer, now),
    );
  }
}

function endingOf(b: BatchRow): Ending | null {
  if (b.status === "in_progress") return ENDINGS.completed!;
  if (b.status === "cancelling") return ENDINGS.cancelled!;
  if (b.status === "finalizing" && b.expired_at !== null) return ENDINGS.expired!;
  return null;
}
