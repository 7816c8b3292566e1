// A lean HTTP/1.1 client for the overhead benchmark's fixed-rate and throughput runs: plain keep-alive
// sockets, one write per request, a small parser for Content-Length and chunked replies, and SSE
// content frames found by byte search. The undici-based client (stream-client.ts) costs ~340–570 µs of
// CPU per request at 1,000 req/s on this kind of machine — as much as the router under test — and on a
// box the client, the engines and the router share, every microsecond it burns is queueing it adds to
// every path's tail. This one costs about half (~170 µs non-streaming, ~340 µs for a 16-token stream,
// most of it the reads: the engines write each token on its own). It speaks only what the simulated
// engines, tokengate and nginx answer: HTTP/1.1, no pipelining, no 1xx, no compression.

import { connect, type Socket } from "node:net";

export interface LeanResult {
  status: number;
  /** Send to the last byte of the reply (queueing for a free connection included). */
  ms: number;
  /** Streams: send to the first frame carrying generated text; NaN otherwise. */
  ttftMs: number;
  /** Same as `ms`, under the name the streaming figures use. */
  e2eMs: number;
  /** Streams: frames carrying generated text (delta.content or text, non-empty). */
  contentFrames: number;
  bytes: number;
  /** HTTP status other than 200, an error event, a stream without [DONE], or a connection error. */
  error: string | null;
}

interface Pending {
  head: string;
  body: string;
  stream: boolean;
  t0: number;
  resolve: (r: LeanResult) => void;
}

const CONTENT_KEYS = [Buffer.from('"content":"'), Buffer.from('"text":"')];
const QUOTE = 0x22;
const DONE = Buffer.from("data: [DONE]");
const ERROR_EVENT = Buffer.from('data: {"error"');
const HEAD_END = Buffer.from("\r\n\r\n");
const CRLF = Buffer.from("\r\n");

/**
 * Frames with non-empty generated text in `data` (one key per frame in OpenAI chunks), counting only
 * matches whose byte after the key is at `from` or later (the ones before were counted already).
 */
export function countContentFrames(data: Buffer, from = 0): number {
  let n = 0;
  for (const key of CONTENT_KEYS) {
    let i = data.indexOf(key);
    while (i >= 0) {
      const next = i + key.length;
      if (next < data.length && next >= from && data[next] !== QUOTE) n++;
      i = data.indexOf(key, next);
    }
  }
  return n;
}

export class LeanClient {
  private readonly host: string;
  private readonly port: number;
  private readonly idle: LeanConnection[] = [];
  private readonly open = new Set<LeanConnection>();
  private readonly waiting: Pending[] = [];

  constructor(
    baseUrl: string,
    private readonly maxConnections: number,
  ) {
    const u = new URL(baseUrl);
    if (u.protocol !== "http:") throw new Error(`lean client: http only, got ${baseUrl}`);
    this.host = u.hostname;
    this.port = Number(u.port || 80);
  }

  /** POSTs a JSON body; never rejects (failures come back in `error`). */
  post(path: string, body: string, stream: boolean): Promise<LeanResult> {
    const head =
      `POST ${path} HTTP/1.1\r\nhost: ${this.host}:${this.port}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n`;
    return new Promise((resolve) => {
      const p: Pending = { head, body, stream, t0: performance.now(), resolve };
      const conn = this.idle.pop() ?? (this.open.size < this.maxConnections ? this.dial() : null);
      if (conn) conn.send(p);
      else this.waiting.push(p);
    });
  }

  async close(): Promise<void> {
    for (const c of this.open) c.destroy();
    this.open.clear();
    this.idle.length = 0;
    for (const p of this.waiting.splice(0)) p.resolve(failed(p, "client closed"));
  }

  private dial(): LeanConnection {
    const c = new LeanConnection(this.host, this.port, this);
    this.open.add(c);
    return c;
  }

  /** The connection finished a request and can take another. */
  released(c: LeanConnection): void {
    const next = this.waiting.shift();
    if (next) c.send(next);
    else this.idle.push(c);
  }

  /** The connection is gone (closed, failed, or `connection: close`); queued requests get a new one. */
  dropped(c: LeanConnection): void {
    this.open.delete(c);
    const i = this.idle.indexOf(c);
    if (i >= 0) this.idle.splice(i, 1);
    const next = this.waiting.shift();
    if (next) this.dial().send(next);
  }
}

function failed(p: Pending, error: string): LeanResult {
  const ms = performance.now() - p.t0;
  return { status: 0, ms, ttftMs: Number.NaN, e2eMs: ms, contentFrames: 0, bytes: 0, error };
}

type State = "head" | "length" | "chunk-size" | "chunk-data" | "chunk-crlf" | "trailers";

/** Bytes kept from the end of one piece of a reply, to find a marker split across two reads. */
const OVERLAP = 16;

/**
 * One keep-alive connection: sends a request, parses its reply as it arrives, hands itself back.
 * Reads land in one reused buffer (`onread`: no Buffer and no stream event per read); a reply's body is
 * scanned piece by piece and not kept, except its first bytes for an error message.
 */
class LeanConnection {
  private readonly socket: Socket;
  private p: Pending | null = null;
  private state: State = "head";
  /** An incomplete head, chunk-size line or CRLF carried to the next read (a copy). */
  private carry: Buffer | null = null;
  private status = 0;
  private remaining = 0;
  private keepAlive = true;
  private bytes = 0;
  private ttftMs = Number.NaN;
  private contentFrames = 0;
  private sawDone = false;
  private errorEvent: string | null = null;
  /** The body's last OVERLAP bytes (streams), and its first bytes (error replies). */
  private tail: Buffer = EMPTY;
  private start: Buffer = EMPTY;
  private dead = false;

  constructor(
    host: string,
    port: number,
    private readonly owner: LeanClient,
  ) {
    this.socket = connect({
      host,
      port,
      noDelay: true,
      onread: { buffer: Buffer.allocUnsafe(65536), callback: (n, buf) => this.onRead(buf as Buffer, n) },
    });
    this.socket.on("error", (e) => this.fail(`${(e as Error & { code?: string }).code ?? e.message}`));
    this.socket.on("close", () => this.fail("connection closed"));
  }

  send(p: Pending): void {
    this.p = p;
    this.state = "head";
    this.status = 0;
    this.keepAlive = true;
    this.bytes = 0;
    this.ttftMs = Number.NaN;
    this.contentFrames = 0;
    this.sawDone = false;
    this.errorEvent = null;
    this.tail = EMPTY;
    this.start = EMPTY;
    this.socket.write(p.head + p.body);
  }

  /** Closes the connection; a request still on it is answered with an error. */
  destroy(): void {
    if (this.dead) return;
    this.dead = true;
    this.socket.destroy();
    const p = this.p;
    this.p = null;
    if (p) p.resolve(failed(p, "client closed"));
  }

  private fail(error: string): void {
    if (this.dead) return;
    this.dead = true;
    this.socket.destroy();
    const p = this.p;
    this.p = null;
    if (p) p.resolve(failed(p, error));
    this.owner.dropped(this);
  }

  /** `buf` is reused for the next read: whatever must outlive this call is copied. */
  private onRead(buf: Buffer, n: number): boolean {
    if (!this.p) {
      this.fail("bytes with no request outstanding");
      return false;
    }
    const data = this.carry ? Buffer.concat([this.carry, buf.subarray(0, n)]) : buf.subarray(0, n);
    this.carry = null;
    let at = 0;
    const keep = () => {
      this.carry = Buffer.from(data.subarray(at));
      return true;
    };
    while (at < data.length && this.p) {
      switch (this.state) {
        case "head": {
          const end = data.indexOf(HEAD_END, at);
          if (end < 0) return keep();
          if (!this.readHead(data.toString("latin1", at, end))) return false;
          at = end + 4;
          if ((this.state as State) === "length" && this.remaining === 0) this.finish();
          break;
        }
        case "length": {
          at = this.takeUpTo(data, at);
          if (this.remaining === 0) this.finish();
          break;
        }
        case "chunk-size": {
          const end = data.indexOf(CRLF, at);
          if (end < 0) return keep();
          const size = Number.parseInt(data.toString("latin1", at, end), 16);
          if (!Number.isFinite(size)) {
            this.fail("bad chunk size");
            return false;
          }
          at = end + 2;
          this.remaining = size;
          this.state = size === 0 ? "trailers" : "chunk-data";
          break;
        }
        case "chunk-data": {
          at = this.takeUpTo(data, at);
          if (this.remaining === 0) this.state = "chunk-crlf";
          break;
        }
        case "chunk-crlf": {
          if (data.length - at < 2) return keep();
          at += 2;
          this.state = "chunk-size";
          break;
        }
        case "trailers": {
          const end = data.indexOf(CRLF, at);
          if (end < 0) return keep();
          const empty = end === at;
          at = end + 2;
          // Trailer lines are skipped; the empty line after them ends the reply.
          if (empty) this.finish();
          break;
        }
      }
    }
    if (at < data.length && !this.p && !this.dead) this.fail("bytes after the reply");
    return true;
  }

  /** Parses the status line and the headers this client cares about; false when it failed. */
  private readHead(head: string): boolean {
    const sp = head.indexOf(" ");
    this.status = Number(head.slice(sp + 1, sp + 4));
    if (!(this.status >= 200)) {
      this.fail(`bad status line: ${head.slice(0, 40)}`);
      return false;
    }
    const lower = head.toLowerCase();
    if (lower.includes("\r\nconnection: close")) this.keepAlive = false;
    if (lower.includes("\r\ntransfer-encoding: chunked")) {
      this.state = "chunk-size";
      return true;
    }
    const m = /\r\ncontent-length: *(\d+)/.exec(lower);
    if (!m) {
      this.fail("reply with neither content-length nor chunked encoding");
      return false;
    }
    this.state = "length";
    this.remaining = Number(m[1]);
    return true;
  }

  /** Takes what `data` holds of the `remaining` body bytes from `at`; returns where it stopped. */
  private takeUpTo(data: Buffer, at: number): number {
    const k = Math.min(this.remaining, data.length - at);
    this.take(data.subarray(at, at + k));
    this.remaining -= k;
    return at + k;
  }

  /** One piece of the body (in the shared read buffer). */
  private take(piece: Buffer): void {
    this.bytes += piece.length;
    if (this.start.length < ERROR_DETAIL)
      this.start = Buffer.concat([this.start, piece.subarray(0, ERROR_DETAIL - this.start.length)]);
    if (!this.p!.stream || this.status !== 200) return;
    // Markers are searched in the previous piece's last bytes and this piece; a match that lies
    // wholly in those last bytes was counted with the previous piece.
    const old = this.tail.length;
    const seen = old > 0 ? Buffer.concat([this.tail, piece]) : piece;
    const found = countContentFrames(seen, old);
    if (found > 0) {
      if (this.contentFrames === 0) this.ttftMs = performance.now() - this.p!.t0;
      this.contentFrames += found;
    }
    if (!this.sawDone && seen.indexOf(DONE) >= 0) this.sawDone = true;
    if (this.errorEvent === null) {
      const e = seen.indexOf(ERROR_EVENT);
      if (e >= 0) this.errorEvent = seen.toString("utf8", e, e + 200);
    }
    this.tail = Buffer.from(seen.subarray(Math.max(0, seen.length - OVERLAP)));
  }

  private finish(): void {
    const p = this.p!;
    this.p = null;
    const ms = performance.now() - p.t0;
    let error: string | null = null;
    if (this.status !== 200) error = `HTTP ${this.status}: ${this.start.toString("utf8")}`;
    else if (p.stream) {
      if (this.errorEvent !== null) error = `stream error: ${this.errorEvent}`;
      else if (!this.sawDone) error = "stream ended without [DONE]";
    }
    p.resolve({
      status: this.status,
      ms,
      ttftMs: p.stream ? this.ttftMs : Number.NaN,
      e2eMs: ms,
      contentFrames: this.contentFrames,
      bytes: this.bytes,
      error,
    });
    if (this.keepAlive) this.owner.released(this);
    else this.fail("connection: close");
  }
}

const EMPTY = Buffer.alloc(0);
const ERROR_DETAIL = 200;
