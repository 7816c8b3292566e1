// The Files and Batch API's store in Redis (node-redis), shared by gateway replicas on any host: the
// contract of batch-store.ts, with every state change that must be atomic across replicas one Lua
// script (redis-batch-scripts.ts for lines, redis-batch-job-scripts.ts for files and jobs). Key layout
// in redis-batch-keys.ts. Standalone Redis or a primary only: the scripts reach keys they derive from
// the namespace, which a cluster's hash slots would not allow.
//
// - Times come from the callers' `now`, never Redis's clock; a lease a long write holds (a job's
//   writer, a finalizer) is moved on by the time the write has taken.
// - Big values do not block: a file is written in 1 MiB pieces with a TTL, one command at a time, and
//   its metadata last (an interrupted upload leaves nothing lasting); a job's lines in pieces of a few
//   hundred KB while it is `validating` (never claimed), then one script opens it. A job whose writer's
//   lease ran out is failed by `finalizeReady` (`batch_creation_interrupted`), its lines removed.
// - Finalization (redis-batch-finalize.ts) seals, closes, writes the files as pieces and commits in one
//   step under a finalizer's lease another replica takes over when it runs out.

import { randomUUID } from "node:crypto";
import {
  BATCH_PAGE_DEFAULT,
  BATCH_PAGE_MAX,
  type BatchRow,
  type ClaimedLine,
  clampLimit,
  FILE_PAGE_DEFAULT,
  FILE_PAGE_MAX,
  type FileRow,
  type LineKey,
  type LineOutcome,
  type LineRow,
  type NewBatch,
  type NewBatchLine,
  newBatchId,
  newFileId,
  page,
  seconds,
  toBatchObject,
  toFileObject,
} from "./batch-rows.js";
import type { BatchStore, NewFile } from "./batch-store.js";
import { FileTooLarge } from "./batch-store.js";
import type { BatchErrors, BatchObject, FileObject, FilePurpose, ListPage } from "./batch-types.js";
import { BatchRedis, int, type PieceHook, PieceWriter, strings } from "./redis-batch-client.js";
import { finalizeBatch } from "./redis-batch-finalize.js";
import {
  BATCH_CREATE_SCRIPT,
  BATCH_DROP_SCRIPT,
  BATCH_OPEN_SCRIPT,
  CANCEL_SCRIPT,
  EXPIRE_SCRIPT,
  FILE_COMMIT_SCRIPT,
  FILE_DELETE_SCRIPT,
  INTERRUPTED_SCRIPT,
  LINES_WRITE_SCRIPT,
  READY_SCRIPT,
} from "./redis-batch-job-scripts.js";
import {
  BatchKeys,
  batchFields,
  batchRow,
  fileRow,
  LINE_COLUMNS,
  lineRow,
  newBatchRow,
} from "./redis-batch-keys.js";
import {
  BatchCreationInterrupted,
  checkUnique,
  INTERRUPTED_ERRORS,
  linePieces,
  taskOf,
  WRITER_LEASE_MS,
} from "./redis-batch-lines.js";
import {
  CLAIM_SCRIPT,
  FINISH_SCRIPT,
  RELEASE_SCRIPT,
  RENEW_SCRIPT,
  RETRY_SCRIPT,
} from "./redis-batch-scripts.js";

export { BatchCreationInterrupted, WRITER_LEASE_MS } from "./redis-batch-lines.js";

export interface RedisBatchStoreOptions {
  readonly url: string;
  /** Key prefix, e.g. `tg:b:batch`. */
  readonly namespace: string;
  /** A command slower than this fails; 5000 ms unless told. */
  readonly timeoutMs?: number;
  /** Called after each piece written (a file's, a job's lines, a finalization's): a test's seam. */
  readonly afterPiece?: PieceHook;
}

/**
 * The batch store in Redis: every replica that opens one on the same server and namespace shares it.
 *
 * @example
 * const store = new RedisBatchStore({ url: "redis://127.0.0.1:6379", namespace: "tg:b:batch" });
 */
export class RedisBatchStore implements BatchStore {
  readonly kind = "redis";
  private readonly redis: BatchRedis;
  private readonly keys: BatchKeys;
  private readonly hook: PieceHook | undefined;

  constructor(opts: RedisBatchStoreOptions) {
    this.redis = new BatchRedis(opts.url, opts.timeoutMs ?? 5000);
    this.keys = new BatchKeys(opts.namespace);
    this.hook = opts.afterPiece;
  }

  close(): Promise<void> {
    return this.redis.close();
  }

  // --- Files -------------------------------------------------------------------------------------------

  async createFile(f: NewFile, now = Date.now()): Promise<FileRow> {
    if (f.maxBytes !== undefined && f.content.length > f.maxBytes) {
      throw new FileTooLarge(f.content.length, f.maxBytes);
    }
    const id = newFileId();
    const w = new PieceWriter(this.redis, (i) => this.keys.piece(id, i), this.hook, "file");
    await w.add(f.content);
    const pieces = await w.end();
    const row: FileRow = {
      id,
      tenant: f.tenant,
      purpose: f.purpose,
      filename: f.filename,
      bytes: f.content.length,
      created_at: seconds(now),
    };
    const spec = {
      ...row,
      bytes: String(row.bytes),
      created_at: String(row.created_at),
      pieces: String(pieces),
    };
    const ok = await this.redis.script(FILE_COMMIT_SCRIPT, [this.keys.prefix, JSON.stringify(spec)]);
    if (int(ok) !== 1) throw new Error(`file ${id}: a piece expired before the file was complete`);
    return row;
  }

  async getFile(tenant: string, id: string): Promise<FileRow | null> {
    const row = fileRow(await this.redis.cmd((c) => c.hGetAll(this.keys.file(id))));
    return row && row.tenant === tenant ? row : null;
  }

  async fileContent(tenant: string, id: string): Promise<Buffer | null> {
    const [owner, count] = await this.redis.cmd((c) => c.hmGet(this.keys.file(id), ["tenant", "pieces"]));
    if (owner !== tenant || count === null || count === undefined) return null;
    const parts: Buffer[] = [];
    for (let i = 0; i < Number(count); i++) {
      const piece = await this.redis.getBuffer(this.keys.piece(id, i));
      if (piece === null) return null; // deleted while read
      parts.push(piece);
    }
    return Buffer.concat(parts);
  }

  async deleteFile(tenant: string, id: string): Promise<boolean> {
    return int(await this.redis.script(FILE_DELETE_SCRIPT, [this.keys.prefix, id, tenant])) === 1;
  }

  async listFiles(
    tenant: string,
    opts: { purpose?: FilePurpose; limit?: number; after?: string } = {},
  ): Promise<ListPage<FileObject>> {
    const limit = clampLimit(opts.limit, FILE_PAGE_DEFAULT, FILE_PAGE_MAX);
    const ids = await this.newestFirst(this.keys.files(tenant, opts.purpose), (id) => this.keys.file(id), {
      tenant,
      limit,
      after: opts.after,
    });
    const rows = await this.redis.hashes(ids.map((id) => this.keys.file(id)));
    const files = rows.map(fileRow).filter((r): r is FileRow => r !== null && r.tenant === tenant);
    return page(files.map(toFileObject), limit, (f) => f.id);
  }

  // --- Batches -----------------------------------------------------------------------------------------

  async createBatch(b: NewBatch & { lines: readonly NewBatchLine[] }, now = Date.now()): Promise<BatchRow> {
    checkUnique(b.lines);
    const id = newBatchId();
    const token = randomUUID();
    const started = Date.now();
    const writerUntil = () => String(now + (Date.now() - started) + WRITER_LEASE_MS);
    const fields = batchFields(newBatchRow(id, b, now, "validating", null));
    await this.redis.script(BATCH_CREATE_SCRIPT, [this.keys.prefix, id, token, writerUntil(), ...fields]);
    try {
      await this.writeLines(id, token, b.lines, writerUntil);
      const opened = [this.keys.prefix, id, token, seconds(now), b.lines.length];
      if (int(await this.redis.script(BATCH_OPEN_SCRIPT, opened)) !== 1) {
        throw new BatchCreationInterrupted(id);
      }
    } catch (err) {
      // Best effort: if Redis is away, the batch stays `validating` and `finalizeReady` fails it later.
      await this.redis.script(BATCH_DROP_SCRIPT, [this.keys.prefix, id, token]).catch(() => undefined);
      throw err;
    }
    return (await this.batchById(id))!;
  }

  /** A job's lines, a piece per script call, each extending the writer's lease. */
  private async writeLines(
    id: string,
    token: string,
    lines: readonly NewBatchLine[],
    writerUntil: () => string,
  ): Promise<void> {
    let index = 0;
    for (const piece of linePieces(lines)) {
      const args = [this.keys.prefix, id, token, writerUntil(), ...piece];
      if (int(await this.redis.script(LINES_WRITE_SCRIPT, args)) !== 1) {
        throw new BatchCreationInterrupted(id);
      }
      await this.hook?.("lines", ++index);
    }
  }

  async createFailedBatch(b: NewBatch & { errors: BatchErrors }, now = Date.now()): Promise<BatchRow> {
    const id = newBatchId();
    const fields = batchFields(newBatchRow(id, b, now, "failed", b.errors));
    await this.redis.script(BATCH_CREATE_SCRIPT, [this.keys.prefix, id, "", "0", ...fields]);
    return (await this.batchById(id))!;
  }

  async getBatch(tenant: string, id: string): Promise<BatchRow | null> {
    const row = await this.batchById(id);
    return row && row.tenant === tenant ? row : null;
  }

  async listBatches(
    tenant: string,
    opts: { limit?: number; after?: string } = {},
  ): Promise<ListPage<BatchObject>> {
    const limit = clampLimit(opts.limit, BATCH_PAGE_DEFAULT, BATCH_PAGE_MAX);
    const ids = await this.newestFirst(this.keys.batches(tenant), (id) => this.keys.batch(id), {
      tenant,
      limit,
      after: opts.after,
    });
    const rows = (await this.redis.hashes(ids.map((id) => this.keys.batch(id)))).map(batchRow);
    const mine = rows.filter((r): r is BatchRow => r !== null && r.tenant === tenant);
    return page(
      mine.map((r) => toBatchObject(r)),
      limit,
      (o) => o.id,
    );
  }

  async batchById(id: string): Promise<BatchRow | null> {
    return batchRow(await this.redis.cmd((c) => c.hGetAll(this.keys.batch(id))));
  }

  async cancelBatch(tenant: string, id: string, now = Date.now()): Promise<BatchRow | null> {
    const found = await this.redis.script(CANCEL_SCRIPT, [this.keys.prefix, id, tenant, seconds(now)]);
    return int(found) === 1 ? this.getBatch(tenant, id) : null;
  }

  async expireDue(now = Date.now()): Promise<string[]> {
    return strings(await this.redis.script(EXPIRE_SCRIPT, [this.keys.prefix, seconds(now)]));
  }

  // --- Lines -------------------------------------------------------------------------------------------

  async getLine(batchId: string, line: number): Promise<LineRow | null> {
    const columns = LINE_COLUMNS.map((c) => this.keys.column(batchId, c));
    return lineRow(batchId, line, await this.redis.fieldOf(columns, String(line)));
  }

  async claimLines(owner: string, n: number, leaseMs: number, now = Date.now()): Promise<ClaimedLine[]> {
    if (n <= 0) return [];
    const leaseUntil = now + leaseMs;
    const args = [this.keys.prefix, owner, n, leaseUntil, now, seconds(now)];
    const v = strings(await this.redis.script(CLAIM_SCRIPT, args));
    const out: ClaimedLine[] = [];
    for (let i = 0; i + 7 < v.length; i += 8) {
      out.push({
        batchId: v[i]!,
        line: Number(v[i + 1]),
        customId: v[i + 2]!,
        body: v[i + 3]!,
        attempts: Number(v[i + 4]),
        tenant: v[i + 5]!,
        endpoint: v[i + 6]!,
        jobTask: taskOf(v[i + 7] === "" ? null : v[i + 7]!),
        leaseUntil,
      });
    }
    return out;
  }

  async renewLeases(
    owner: string,
    lines: readonly LineKey[],
    leaseMs: number,
    now = Date.now(),
  ): Promise<LineKey[]> {
    if (lines.length === 0) return [];
    const pairs = lines.flatMap((k) => [k.batchId, String(k.line)]);
    const v = strings(
      await this.redis.script(RENEW_SCRIPT, [this.keys.prefix, owner, now + leaseMs, ...pairs]),
    );
    const lost: LineKey[] = [];
    for (let i = 0; i + 1 < v.length; i += 2) lost.push({ batchId: v[i]!, line: Number(v[i + 1]) });
    return lost;
  }

  async finishLine(
    owner: string,
    batchId: string,
    line: number,
    outcome: LineOutcome,
    now = Date.now(),
  ): Promise<boolean> {
    const result = JSON.stringify(outcome.result);
    const args = [this.keys.prefix, owner, batchId, line, outcome.state, result, now];
    return int(await this.redis.script(FINISH_SCRIPT, args)) === 1;
  }

  async retryLine(owner: string, batchId: string, line: number, notBefore: number): Promise<boolean> {
    const args = [this.keys.prefix, owner, batchId, line, notBefore, 0];
    return int(await this.redis.script(RETRY_SCRIPT, args)) === 1;
  }

  async deferLine(owner: string, batchId: string, line: number, notBefore: number): Promise<boolean> {
    const args = [this.keys.prefix, owner, batchId, line, notBefore, 1];
    return int(await this.redis.script(RETRY_SCRIPT, args)) === 1;
  }

  async releaseOwner(owner: string): Promise<number> {
    return int(await this.redis.script(RELEASE_SCRIPT, [this.keys.prefix, owner]));
  }

  // --- Finalization ------------------------------------------------------------------------------------

  async finalizeReady(now = Date.now()): Promise<string[]> {
    await this.expireDue(now);
    const failed = strings(
      await this.redis.script(INTERRUPTED_SCRIPT, [
        this.keys.prefix,
        now,
        seconds(now),
        JSON.stringify(INTERRUPTED_ERRORS),
      ]),
    );
    const ended = [...failed];
    for (const id of strings(await this.redis.script(READY_SCRIPT, [this.keys.prefix, now]))) {
      if (await finalizeBatch(this.redis, this.keys, id, now, this.hook)) ended.push(id);
    }
    return ended;
  }

  // --- Reading -----------------------------------------------------------------------------------------

  /**
   * Up to `limit + 1` ids of a tenant's sorted set, newest first, older than `after` (which must be
   * the tenant's: otherwise none).
   */
  private async newestFirst(
    set: string,
    hashOf: (id: string) => string,
    o: { tenant: string; limit: number; after: string | undefined },
  ): Promise<string[]> {
    let max = "+inf";
    if (o.after !== undefined) {
      const after = o.after;
      const [owner, seq] = await this.redis.cmd((c) => c.hmGet(hashOf(after), ["tenant", "seq"]));
      if (owner !== o.tenant || seq === null || seq === undefined) return [];
      max = `(${seq}`;
    }
    return this.redis.cmd((c) =>
      c.zRange(set, max, "-inf", { BY: "SCORE", REV: true, LIMIT: { offset: 0, count: o.limit + 1 } }),
    );
  }
}
