// The Redis batch store's connection: one node-redis client (a Buffer-reply view of it for file
// pieces), every command bounded by a timeout, scripts run by EVALSHA (loaded again after a Redis
// restart), and files written as pieces with a TTL, an `await` between pieces so a 100 MB file never
// holds the event loop or Redis for long.

import { createHash } from "node:crypto";
import type { createClient } from "redis";
import { loadRedis } from "../redis/load-redis.js";

type Client = ReturnType<typeof createClient>;

/** A file's pieces are this big (the last one smaller). */
export const PIECE_BYTES = 1024 * 1024;
/** A piece not yet under its file's metadata lives this long: an interrupted write leaves nothing lasting. */
export const PIECE_TTL_S = 3600;

/**
 * Called after each piece a store writes, `index` the pieces written so far (1-based; a finalization's
 * 0 is right after its seal): a test's seam to stop a writer there, as a process dying there would.
 */
export type PieceHook = (stage: "file" | "lines" | "finalize", index: number) => Promise<void> | void;

function bufferView(c: Client) {
  return c.withTypeMapping({ [loadRedis().RESP_TYPES.BLOB_STRING]: Buffer });
}

export class BatchRedis {
  readonly client: Client;
  private readonly buffers: ReturnType<typeof bufferView>;
  private readonly connecting: Promise<unknown>;
  private readonly shas = new Map<string, string>();
  private closed = false;

  constructor(
    url: string,
    private readonly timeoutMs: number,
  ) {
    this.client = loadRedis().createClient({
      url,
      disableOfflineQueue: true,
      socket: { connectTimeout: 1000, reconnectStrategy: (n) => Math.min(100 * (n + 1), 1000) },
    });
    // A failure shows as the rejection of the call that met it; the client reconnects by itself.
    this.client.on("error", () => {});
    this.buffers = bufferView(this.client);
    this.connecting = this.client.connect().catch(() => undefined);
  }

  /** Runs `f` once connected, within the timeout. */
  async cmd<T>(f: (c: Client) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error("batch store is closed");
    if (!this.client.isReady) await this.timed(this.connecting);
    return this.timed(f(this.client));
  }

  /** A script's reply: EVALSHA, or EVAL when Redis does not have it (first use, after a restart). */
  async script(src: string, args: readonly (string | number)[]): Promise<unknown> {
    let sha = this.shas.get(src);
    if (sha === undefined) {
      sha = createHash("sha1").update(src).digest("hex");
      this.shas.set(src, sha);
    }
    const argv = ["0", ...args.map(String)];
    try {
      return await this.cmd((c) => c.sendCommand(["EVALSHA", sha, ...argv]));
    } catch (err) {
      if (!String((err as Error).message).includes("NOSCRIPT")) throw err;
      return this.cmd((c) => c.sendCommand(["EVAL", src, ...argv]));
    }
  }

  /** The value of `key` as bytes; null when it is absent. */
  async getBuffer(key: string): Promise<Buffer | null> {
    if (this.closed) throw new Error("batch store is closed");
    if (!this.client.isReady) await this.timed(this.connecting);
    return this.timed(this.buffers.get(key));
  }

  /** Several hashes (HGETALL) in one round trip; {} for each absent one. */
  async hashes(keys: readonly string[]): Promise<Record<string, string>[]> {
    if (keys.length === 0) return [];
    const m = this.client.multi();
    for (const k of keys) m.hGetAll(k);
    const replies = await this.cmd(() => m.execAsPipeline());
    return replies.map((r) => asHash(r as unknown));
  }

  /** One field of several hashes, read at one instant (MULTI); null where absent. */
  async fieldOf(keys: readonly string[], field: string): Promise<(string | null)[]> {
    const m = this.client.multi();
    for (const k of keys) m.hGet(k, field);
    const replies = await this.cmd(() => m.exec());
    return replies.map((r) => (r === null || r === undefined ? null : String(r)));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      if (this.client.isOpen) await this.client.close();
    } catch {
      this.client.destroy();
    }
  }

  private timed<T>(p: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`redis: no answer within ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
    });
    return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
  }
}

/**
 * Writes a file's bytes as pieces (keys from `pieceKey`), each with a TTL, one command at a time.
 * The file's metadata, written after, keeps them; returns how many.
 */
export class PieceWriter {
  private parts: Buffer[] = [];
  private size = 0;
  pieces = 0;
  bytes = 0;

  constructor(
    private readonly redis: BatchRedis,
    private readonly pieceKey: (i: number) => string,
    private readonly hook: PieceHook | undefined,
    private readonly stage: "file" | "finalize",
  ) {}

  /** Adds bytes, writing every full piece. */
  async add(data: Buffer): Promise<void> {
    for (let at = 0; at < data.length; ) {
      const take = Math.min(PIECE_BYTES - this.size, data.length - at);
      this.parts.push(data.subarray(at, at + take));
      this.size += take;
      at += take;
      if (this.size === PIECE_BYTES) await this.flush();
    }
  }

  /** Writes what is left; returns the piece count. */
  async end(): Promise<number> {
    if (this.size > 0) await this.flush();
    return this.pieces;
  }

  private async flush(): Promise<void> {
    const piece = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    this.parts = [];
    this.size = 0;
    const key = this.pieceKey(this.pieces);
    await this.redis.cmd((c) => c.set(key, piece, { EX: PIECE_TTL_S }));
    this.pieces++;
    this.bytes += piece.length;
    await this.hook?.(this.stage, this.pieces);
  }
}

/** A script's array reply as strings. */
export function strings(reply: unknown): string[] {
  if (!Array.isArray(reply)) throw new Error(`redis: expected an array reply, got ${typeof reply}`);
  return reply.map((v) => (Buffer.isBuffer(v) ? v.toString("utf8") : String(v)));
}

/** A script's integer reply. */
export function int(reply: unknown): number {
  const n = Number(reply);
  if (!Number.isFinite(n)) throw new Error(`redis: expected an integer reply, got ${String(reply)}`);
  return n;
}

/** A HGETALL reply (an object, or field/value pairs) as a record. */
function asHash(reply: unknown): Record<string, string> {
  if (reply === null || reply === undefined) return {};
  if (Array.isArray(reply)) {
    const out: Record<string, string> = {};
    for (let i = 0; i + 1 < reply.length; i += 2) out[String(reply[i])] = String(reply[i + 1]);
    return out;
  }
  return reply as Record<string, string>;
}
