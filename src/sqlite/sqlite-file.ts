// An embedded SQLite file through Node's built-in `node:sqlite` (no native module to build): the config
// history, the SQLite budget ledger and the Batch API's job store all open their file here, so the
// pragmas, the busy timeout and the transaction rules are the same for the three.
//
// Every call is synchronous on the event loop, as the stores want: an apply is validated, written and
// swapped with no await in between; a claim is one `BEGIN IMMEDIATE` transaction. Several processes
// may open one file (the gateway's replicas share a batch store); a writer waits up to the busy timeout
// for another's transaction.

import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import { dropSqliteExperimentalWarning } from "./quiet-experimental-warning.js";

/** A value SQLite takes as a parameter: null, a number, a bigint, text, or bytes. */
export type SqlValue = SQLInputValue;

/** What `run` tells of a write. */
export interface RunResult {
  readonly changes: number;
  readonly lastInsertRowid: number;
}

/**
 * A prepared statement typed by its parameters `P` (positional values, or one object of named values
 * for `@name` placeholders) and the row `R` it reads. Rows are plain objects of the selected columns;
 * a BLOB column reads as a Uint8Array.
 */
export interface Statement<P extends readonly unknown[] = SqlValue[], R = Record<string, unknown>> {
  run(...params: P): RunResult;
  get(...params: P): R | undefined;
  all(...params: P): R[];
}

export interface SqliteOptions {
  /** How long a write waits for another connection's transaction before SQLITE_BUSY; 5000 ms unless told. */
  readonly busyTimeoutMs?: number;
  /** `FULL` (every commit on disk before it returns) or `NORMAL` (WAL: a power cut may lose the last commits). */
  readonly synchronous?: "FULL" | "NORMAL";
  /** Enforce foreign keys; off unless told (SQLite's default). */
  readonly foreignKeys?: boolean;
  /** Open read-only; the file must exist. */
  readonly readOnly?: boolean;
}

/** `node:sqlite`, loaded on first use (so that Node 22's warning about it can be dropped first). */
let sqlite: typeof import("node:sqlite") | null = null;
function sqliteModule(): typeof import("node:sqlite") {
  if (sqlite === null) {
    dropSqliteExperimentalWarning();
    sqlite = process.getBuiltinModule("node:sqlite");
  }
  return sqlite;
}

export class SqliteFile {
  private readonly db: DatabaseSync;
  /** Transactions open on this connection: the outermost is BEGIN IMMEDIATE, inner ones savepoints. */
  private depth = 0;
  private closed = false;

  private constructor(
    readonly path: string,
    opts: SqliteOptions,
  ) {
    this.db = new (sqliteModule().DatabaseSync)(path, {
      timeout: opts.busyTimeoutMs ?? 5000,
      readOnly: opts.readOnly === true,
      enableForeignKeyConstraints: opts.foreignKeys === true,
    });
    if (opts.readOnly !== true && path !== ":memory:") this.db.exec("PRAGMA journal_mode = WAL");
    if (opts.synchronous !== undefined) this.db.exec(`PRAGMA synchronous = ${opts.synchronous}`);
  }

  /** Opens (creating, unless read-only) the file at `path`; `:memory:` keeps it in this process only. */
  static open(path: string, opts: SqliteOptions = {}): SqliteFile {
    return new SqliteFile(path, opts);
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Runs SQL text with no parameters and no result: a schema, a pragma. */
  exec(sql: string): void {
    this.db.exec(sql);
  }

  prepare<P extends readonly unknown[] = SqlValue[], R = Record<string, unknown>>(
    sql: string,
  ): Statement<P, R> {
    // StatementSync's run/get/all take the same arguments and return numbers (no readBigInts): the
    // interface above only names the types.
    return this.db.prepare(sql) as unknown as Statement<P, R>;
  }

  /**
   * Runs `fn` in a transaction and returns what it returns: `BEGIN IMMEDIATE` (the write lock taken at
   * once, so two processes never both read then both write), committed when `fn` returns, rolled back
   * when it throws. Inside another transaction of this file it is a savepoint, so an inner failure
   * undoes only its own writes. `fn` must be synchronous: a promise would commit before its work.
   */
  transaction<T>(fn: () => T): T {
    const savepoint = this.depth > 0 ? `tx${this.depth}` : null;
    this.db.exec(savepoint === null ? "BEGIN IMMEDIATE" : `SAVEPOINT ${savepoint}`);
    this.depth++;
    let value: T;
    try {
      value = fn();
      if (value instanceof Promise) throw new TypeError("a transaction's function must not return a promise");
    } catch (err) {
      this.depth--;
      // SQLite may have rolled the transaction back itself (SQLITE_FULL, SQLITE_IOERR): nothing to undo then.
      if (this.db.isTransaction) {
        if (savepoint === null) this.db.exec("ROLLBACK");
        else this.db.exec(`ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`);
      }
      throw err;
    }
    this.depth--;
    this.db.exec(savepoint === null ? "COMMIT" : `RELEASE ${savepoint}`);
    return value;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }
}

/** A BLOB as read (a Uint8Array) viewed as a Buffer, without a copy. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
