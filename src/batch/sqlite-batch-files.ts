// The files of the SQLite batch store: uploads and batches' output and error files, each as pieces of
// at most FILE_PIECE_BYTES — the first in its `files` row, the rest in `file_chunks` — so that no single
// statement moves more than a piece and the event loop runs between pieces. A file's pieces are written
// before its row; until the row is committed nobody sees the file, and the pieces of a file whose writer
// died are deleted once they are an hour old.

import { setImmediate as nextTurn } from "node:timers/promises";
import { asBuffer, type SqliteFile } from "../sqlite/sqlite-file.js";
import type { prepareAll } from "./batch-sql.js";
import {
  clampLimit,
  FILE_PAGE_DEFAULT,
  FILE_PAGE_MAX,
  type FileRow,
  FileTooLarge,
  type NewFile,
  newFileId,
  page,
  seconds,
  toFileObject,
} from "./batch-store.js";
import type { FileObject, FilePurpose, ListPage } from "./batch-types.js";

/** A file's bytes per piece. */
export const FILE_PIECE_BYTES = 1 << 20;
/** Pieces of a file never committed are deleted once they are this old. */
const ORPHAN_AGE_MS = 3_600_000;

/** A file written as pieces and not yet visible: its row and first piece, for `commit`. */
export interface UncommittedFile {
  readonly row: FileRow;
  readonly first: Buffer;
}

export class SqliteBatchFiles {
  private sweptAt = 0;

  constructor(
    private readonly db: SqliteFile,
    private readonly stmts: ReturnType<typeof prepareAll>,
  ) {
    this.sweepOrphans(Date.now());
  }

  async create(f: NewFile, now: number): Promise<FileRow> {
    if (f.maxBytes !== undefined && f.content.length > f.maxBytes) {
      throw new FileTooLarge(f.content.length, f.maxBytes);
    }
    const file = await this.write(f.tenant, f.purpose, f.filename, now, async (add) => {
      for (let off = 0; off < f.content.length; off += FILE_PIECE_BYTES) {
        if (add(f.content.subarray(off, off + FILE_PIECE_BYTES))) await nextTurn();
      }
    });
    this.commit(file);
    return file.row;
  }

  get(tenant: string, id: string): FileRow | null {
    return this.stmts.getFile.get(id, tenant) ?? null;
  }

  async content(tenant: string, id: string): Promise<Buffer | null> {
    const row = this.stmts.fileContent.get(id, tenant);
    if (!row) return null;
    const pieces = [asBuffer(row.content)];
    for (let seq = 1; ; seq++) {
      await nextTurn();
      const c = this.stmts.chunk.get(id, seq);
      if (!c) break;
      pieces.push(asBuffer(c.data));
    }
    return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
  }

  delete(tenant: string, id: string): boolean {
    return this.db.transaction(() => {
      if (this.stmts.deleteFile.run(id, tenant).changes === 0) return false;
      this.stmts.deleteChunks.run(id);
      return true;
    });
  }

  list(
    tenant: string,
    opts: { purpose?: FilePurpose; limit?: number; after?: string },
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

  /**
   * Writes a file's pieces but not its row: `produce` hands bytes to `add` (which says whether it wrote
   * a piece, a good moment to yield); `guard` runs in each piece's transaction (a writer's lease check).
   */
  async write(
    tenant: string,
    purpose: FilePurpose,
    filename: string,
    now: number,
    produce: (add: (b: Buffer) => boolean) => Promise<void>,
    guard: () => void = () => {},
  ): Promise<UncommittedFile> {
    const id = newFileId();
    const pieces = new PieceWriter((data, seq) => {
      this.db.transaction(() => {
        guard();
        this.stmts.insertChunk.run(id, seq, data, now);
      });
    });
    await produce((b) => pieces.add(b));
    const { first, bytes } = pieces.end();
    return { row: { id, tenant, purpose, filename, bytes, created_at: seconds(now) }, first };
  }

  /** Makes a written file visible (inside the caller's transaction, if any). */
  commit(file: UncommittedFile): void {
    const r = file.row;
    this.stmts.insertFile.run(r.id, r.tenant, r.purpose, r.filename, r.bytes, r.created_at, file.first);
  }

  /** Deletes old pieces of files never committed; at most hourly. */
  sweepOrphans(now: number): void {
    if (now - this.sweptAt < ORPHAN_AGE_MS && this.sweptAt !== 0) return;
    this.sweptAt = now;
    this.stmts.deleteOrphanChunks.run(now - ORPHAN_AGE_MS);
  }
}

/**
 * Cuts a stream of bytes into FILE_PIECE_BYTES pieces: the first is kept for the file's row, each later
 * one is handed to `write` with its sequence number (1, 2, …) as soon as it is full.
 */
class PieceWriter {
  private first: Buffer | null = null;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private seq = 0;
  private total = 0;

  constructor(private readonly write: (data: Buffer, seq: number) => void) {}

  /** Takes bytes; whether a piece was written. */
  add(b: Buffer): boolean {
    this.pending.push(b);
    this.pendingBytes += b.length;
    this.total += b.length;
    let wrote = false;
    while (this.pendingBytes >= FILE_PIECE_BYTES) {
      const all = Buffer.concat(this.pending);
      this.emit(all.subarray(0, FILE_PIECE_BYTES));
      const rest = all.subarray(FILE_PIECE_BYTES);
      this.pending = rest.length > 0 ? [rest] : [];
      this.pendingBytes = rest.length;
      wrote = true;
    }
    return wrote;
  }

  /** Writes out the rest; the first piece (empty for an empty file) and the total. */
  end(): { first: Buffer; bytes: number } {
    if (this.pendingBytes > 0) this.emit(Buffer.concat(this.pending));
    this.pending = [];
    this.pendingBytes = 0;
    return { first: this.first ?? Buffer.alloc(0), bytes: this.total };
  }

  private emit(piece: Buffer): void {
    if (this.first === null) this.first = Buffer.from(piece);
    else this.write(Buffer.from(piece), ++this.seq);
  }
}
