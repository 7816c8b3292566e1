// How the Redis batch store ends one batch without a long script or a 100 MB string in Redis: a seal
// (the batch is done; this finalizer's lease taken, after which no line of it changes but by it), its
// unrun lines closed in pages, its results read back in line order a page at a time and written as the
// pieces of the output and error files, then one commit that sets the files' metadata, the batch's file
// ids, final status and timestamps — only while the lease is still this finalizer's. A finalizer that
// dies leaves its lease to run out; another takes over and does it again; its pieces expire.

import { randomUUID } from "node:crypto";
import { type BatchRow, newFileId, seconds } from "./batch-rows.js";
import { type BatchRedis, int, type PieceHook, PieceWriter, strings } from "./redis-batch-client.js";
import { CLOSE_SCRIPT, COMMIT_SCRIPT, FIN_RENEW_SCRIPT, SEAL_SCRIPT } from "./redis-batch-job-scripts.js";
import { type BatchKeys, batchRow } from "./redis-batch-keys.js";

/** A finalizer holds a batch this long past its last renewal (after each page it writes). */
export const FINALIZER_LEASE_MS = 60_000;
/** Lines closed, and lines read back, per command. */
const PAGE = 1000;

type Ending = "completed" | "cancelled" | "expired";

const CLOSED: Record<Exclude<Ending, "completed">, { code: string; message: string }> = {
  cancelled: { code: "batch_cancelled", message: "The batch was cancelled before this request ran." },
  expired: {
    code: "batch_expired",
    message: "The request could not be run before the batch's completion window ended.",
  },
};

/** One batch's finalization by this process, under its own lease. */
class Finalizer {
  private readonly token = randomUUID();
  private readonly started = Date.now();

  constructor(
    private readonly redis: BatchRedis,
    private readonly keys: BatchKeys,
    private readonly id: string,
    private readonly now: number,
    private readonly hook: PieceHook | undefined,
  ) {}

  /** Whether this call ended the batch (false: not ready, another finalizer at it, or lease lost). */
  async run(): Promise<boolean> {
    const ending = await this.seal();
    if (ending === null) return false;
    await this.hook?.("finalize", 0);
    if (ending !== "completed" && !(await this.closeOpen(ending))) return false;
    const row = batchRow(await this.redis.cmd((c) => c.hGetAll(this.keys.batch(this.id))));
    if (!row) return false;
    const files = await this.writeFiles(row);
    if (files === null) return false;
    const committed = await this.redis.script(COMMIT_SCRIPT, [
      this.keys.prefix,
      this.id,
      this.token,
      ending,
      seconds(this.now),
      JSON.stringify(files),
    ]);
    return int(committed) === 1;
  }

  /** The lease runs from the caller's `now`, moved on by the time this finalization has taken. */
  private leaseUntil(): string {
    return String(this.now + (Date.now() - this.started) + FINALIZER_LEASE_MS);
  }

  private async seal(): Promise<Ending | null> {
    const reply = strings(
      await this.redis.script(SEAL_SCRIPT, [
        this.keys.prefix,
        this.id,
        this.token,
        this.now,
        seconds(this.now),
        this.leaseUntil(),
      ]),
    );
    return reply[0] === "sealed" ? (reply[1] as Ending) : null;
  }

  /** Closes the unrun lines a page at a time; false when the lease was lost. */
  private async closeOpen(ending: Exclude<Ending, "completed">): Promise<boolean> {
    const { code, message } = CLOSED[ending];
    for (;;) {
      const left = int(
        await this.redis.script(CLOSE_SCRIPT, [
          this.keys.prefix,
          this.id,
          this.token,
          this.now,
          code,
          message,
          PAGE,
        ]),
      );
      if (left < 0) return false;
      if (left === 0) return true;
      if (!(await this.renew())) return false;
    }
  }

  private async renew(): Promise<boolean> {
    const reply = await this.redis.script(FIN_RENEW_SCRIPT, [
      this.keys.prefix,
      this.id,
      this.token,
      this.leaseUntil(),
    ]);
    return int(reply) === 1;
  }

  /**
   * Reads the results in line order, a page at a time, into the output file (succeeded) and the error
   * file (failed and closed); the specs of the files for the commit (no error file when it would be
   * empty), or null when the lease was lost.
   */
  private async writeFiles(row: BatchRow): Promise<FileSpec[] | null> {
    const outId = newFileId();
    const errId = newFileId();
    const out = new PieceWriter(this.redis, (i) => this.keys.piece(outId, i), this.hook, "finalize");
    const err = new PieceWriter(this.redis, (i) => this.keys.piece(errId, i), this.hook, "finalize");
    let errLines = 0;
    for (let start = 0; ; start += PAGE) {
      const lines = await this.redis.cmd((c) =>
        c.zRange(this.keys.column(this.id, "nums"), start, start + PAGE - 1),
      );
      if (lines.length === 0) break;
      const [states, results] = await Promise.all([
        this.redis.cmd((c) => c.hmGet(this.keys.column(this.id, "state"), lines)),
        this.redis.cmd((c) => c.hmGet(this.keys.column(this.id, "res"), lines)),
      ]);
      let ok = "";
      let bad = "";
      states.forEach((state, i) => {
        const result = results[i];
        if (result === null || result === undefined) return;
        if (state === "succeeded") ok += `${result}\n`;
        else if (state === "failed" || state === "closed") {
          bad += `${result}\n`;
          errLines++;
        }
      });
      await out.add(Buffer.from(ok, "utf8"));
      await err.add(Buffer.from(bad, "utf8"));
      if (!(await this.renew())) return null;
    }
    const spec = (id: string, w: PieceWriter, pieces: number, name: string): FileSpec => ({
      id,
      tenant: row.tenant,
      purpose: "batch_output",
      filename: `${this.id}_${name}.jsonl`,
      bytes: String(w.bytes),
      created_at: String(seconds(this.now)),
      pieces: String(pieces),
    });
    const files = [spec(outId, out, await out.end(), "output")];
    if (errLines > 0) files.push(spec(errId, err, await err.end(), "error"));
    return files;
  }
}

/** A file as the commit script writes it; every value a string. */
export interface FileSpec {
  readonly id: string;
  readonly tenant: string;
  readonly purpose: string;
  readonly filename: string;
  readonly bytes: string;
  readonly created_at: string;
  readonly pieces: string;
}

/** Ends the batch `id` if it is done and no other finalizer holds it; whether this call ended it. */
export function finalizeBatch(
  redis: BatchRedis,
  keys: BatchKeys,
  id: string,
  now: number,
  hook?: PieceHook,
): Promise<boolean> {
  return new Finalizer(redis, keys, id, now, hook).run();
}
