// A streaming reader of multipart/form-data request bodies, for `POST /v1/files`: the `openai` client
// (and anything built on `fetch` and FormData) uploads a batch input file as a `file` part with a
// filename beside text fields such as `purpose`. The body is read chunk by chunk as it arrives, and the
// file is held in memory only up to its cap: past it the reader stops pulling and throws, so an upload
// too large is refused (413) having cost at most the cap, never the whole upload, and nothing of it is
// written anywhere. Text fields and the number of parts are capped too.
//
// Delimiters are found with Buffer.indexOf over what arrived, keeping back only the bytes that could be
// the start of a delimiter split across chunks, so the work is linear in the body whatever its chunking
// (one byte at a time included). Grammar: RFC 2046 §5.1.1 (boundaries, preamble, epilogue, transport
// padding) and RFC 7578 (form-data).

import { filenameOf, parseHeaders, parseHeaderValue } from "./multipart-headers.js";

/** Why a body could not be read; the caller answers 400 (`invalid_multipart`, `too_many_parts`) or 413. */
export class MultipartError extends Error {
  constructor(
    readonly code: "invalid_multipart" | "file_too_large" | "too_many_parts",
    message: string,
    /** The form field at fault (`file`, `purpose`), when one is. */
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = "MultipartError";
  }
}

/** The one file part of a form. */
export interface MultipartFile {
  /** The part's form name, e.g. `file`. */
  readonly fieldName: string;
  /** As the client sent it, possibly empty. */
  readonly filename: string;
  /** The part's Content-Type; `text/plain` when it had none (RFC 7578 §4.4). */
  readonly contentType: string;
  readonly data: Buffer;
}

export interface MultipartForm {
  /** Text fields by name; of a name sent twice, the first (as FormData.get gives it). */
  readonly fields: Record<string, string>;
  /** The file part; null when the form had none. */
  readonly file: MultipartFile | null;
}

export interface MultipartLimits {
  /** Bytes the file part may hold; past them, `file_too_large`. */
  readonly maxFileBytes: number;
  /** Bytes each text field may hold (default 64 KiB). */
  readonly maxFieldBytes?: number;
  /** Parts in all, fields and file (default 16). */
  readonly maxParts?: number;
}

export const DEFAULT_MAX_FIELD_BYTES = 64 * 1024;
export const DEFAULT_MAX_PARTS = 16;
/** A part's header block. */
const MAX_HEADER_BYTES = 16 * 1024;
/** What may come before the first boundary, and after the last. */
const MAX_PREAMBLE_BYTES = 64 * 1024;
const MAX_EPILOGUE_BYTES = 64 * 1024;
/** Transport padding after a boundary, before its CRLF. */
const MAX_PADDING_BYTES = 256;

const CRLF = Buffer.from("\r\n");
const HEADER_END = Buffer.from("\r\n\r\n");
/** RFC 2046 bchars: 1 to 70 of them, not ending in a space. */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;

/**
 * The boundary of a `multipart/form-data` Content-Type, quoted or not; `invalid_multipart` when the
 * header is missing, of another type, or has no valid boundary.
 */
export function multipartBoundary(contentType: string | undefined): string {
  if (!contentType) throw new MultipartError("invalid_multipart", "the request has no Content-Type header");
  const { value, params } = parseHeaderValue(contentType);
  if (value !== "multipart/form-data") {
    throw new MultipartError(
      "invalid_multipart",
      `the Content-Type is ${value || "empty"}, not multipart/form-data`,
    );
  }
  const boundary = params.get("boundary");
  if (boundary === undefined) {
    throw new MultipartError("invalid_multipart", "the multipart/form-data Content-Type has no boundary");
  }
  if (!BOUNDARY.test(boundary)) {
    throw new MultipartError("invalid_multipart", "the multipart boundary is not 1 to 70 valid characters");
  }
  return boundary;
}

/**
 * Reads a multipart/form-data body: its text fields and at most one file part. Throws MultipartError
 * as soon as the body breaks a rule or a limit, having stopped pulling from `body` there; the source is
 * not destroyed (for an IncomingMessage, that would drop the socket before the 413 is sent), so the
 * caller ends it. On success the body is read to its end, epilogue included.
 */
export async function readMultipart(
  body: AsyncIterable<Uint8Array>,
  contentType: string | undefined,
  limits: MultipartLimits,
): Promise<MultipartForm> {
  const parser = new MultipartParser(multipartBoundary(contentType), limits);
  // Pulled by hand rather than with for-await: leaving that loop by a throw would call the iterator's
  // return(), which destroys a stream.
  const it = body[Symbol.asyncIterator]();
  for (;;) {
    const next = await it.next();
    if (next.done) break;
    const chunk = next.value;
    parser.push(
      Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength),
    );
  }
  return parser.end();
}

type State = "preamble" | "boundary" | "headers" | "body" | "epilogue";

interface Part {
  readonly name: string;
  readonly filename: string | null;
  readonly contentType: string;
  readonly data: Collector;
}

/** The parser's state between chunks: a push per chunk, then end. */
class MultipartParser {
  private readonly delimiter: Buffer;
  private readonly maxFieldBytes: number;
  private readonly maxParts: number;
  /** Bytes not yet consumed, from `pos`: at most a delimiter's worth between chunks, while in a body. */
  private buf: Buffer;
  private pos = 0;
  private state: State = "preamble";
  private skipped = 0;
  private parts = 0;
  private part: Part | null = null;
  private readonly fields: Record<string, string> = {};
  private file: MultipartFile | null = null;

  constructor(
    boundary: string,
    private readonly limits: MultipartLimits,
  ) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`, "latin1");
    this.maxFieldBytes = limits.maxFieldBytes ?? DEFAULT_MAX_FIELD_BYTES;
    this.maxParts = limits.maxParts ?? DEFAULT_MAX_PARTS;
    // The first boundary may open the body with no CRLF before it: give it one, so every boundary is
    // found as the same delimiter.
    this.buf = Buffer.from(CRLF);
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.state === "epilogue") {
      this.skip(chunk.length, MAX_EPILOGUE_BYTES, "after the closing boundary");
      return;
    }
    this.buf = this.pos < this.buf.length ? Buffer.concat([this.buf.subarray(this.pos), chunk]) : chunk;
    this.pos = 0;
    while (this.step()) {}
  }

  end(): MultipartForm {
    if (this.state !== "epilogue") {
      throw new MultipartError("invalid_multipart", "the body ended before the closing multipart boundary");
    }
    return { fields: this.fields, file: this.file };
  }

  /** One move through the body; false when it needs more bytes. */
  private step(): boolean {
    switch (this.state) {
      case "preamble":
        return this.preamble();
      case "boundary":
        return this.afterBoundary();
      case "headers":
        return this.headers();
      case "body":
        return this.partBody();
      case "epilogue":
        this.skip(this.buf.length - this.pos, MAX_EPILOGUE_BYTES, "after the closing boundary");
        this.pos = this.buf.length;
        return false;
    }
  }

  private preamble(): boolean {
    const at = this.buf.indexOf(this.delimiter, this.pos);
    if (at < 0) {
      const keep = Math.max(this.pos, this.buf.length - (this.delimiter.length - 1));
      this.skip(keep - this.pos, MAX_PREAMBLE_BYTES, "before the first boundary");
      this.pos = keep;
      return false;
    }
    this.skip(at - this.pos, MAX_PREAMBLE_BYTES, "before the first boundary");
    this.pos = at + this.delimiter.length;
    this.state = "boundary";
    return true;
  }

  /** Just past a delimiter: `--` closes the body; otherwise optional padding, CRLF, and a part. */
  private afterBoundary(): boolean {
    if (this.buf.length - this.pos < 2) return false;
    if (this.buf[this.pos] === 0x2d && this.buf[this.pos + 1] === 0x2d) {
      this.pos += 2;
      this.skipped = 0;
      this.state = "epilogue";
      return true;
    }
    const eol = this.buf.indexOf(CRLF, this.pos);
    if (eol < 0) {
      if (this.buf.length - this.pos > MAX_PADDING_BYTES)
        throw invalid("a boundary line is not followed by CRLF");
      return false;
    }
    for (let i = this.pos; i < eol; i++) {
      if (this.buf[i] !== 0x20 && this.buf[i] !== 0x09)
        throw invalid("a boundary line is not followed by CRLF");
    }
    this.pos = eol + 2;
    if (++this.parts > this.maxParts) {
      throw new MultipartError("too_many_parts", `the form has more than ${this.maxParts} parts`);
    }
    this.state = "headers";
    return true;
  }

  private headers(): boolean {
    let block: string;
    if (this.buf.length - this.pos >= 2 && this.buf[this.pos] === 0x0d && this.buf[this.pos + 1] === 0x0a) {
      block = ""; // no headers at all: the blank line right after the boundary's CRLF
      this.pos += 2;
    } else {
      const at = this.buf.indexOf(HEADER_END, this.pos);
      if (at < 0) {
        if (this.buf.length - this.pos > MAX_HEADER_BYTES) throw invalid("a part's headers are too large");
        return false;
      }
      if (at - this.pos > MAX_HEADER_BYTES) throw invalid("a part's headers are too large");
      block = this.buf.toString("utf8", this.pos, at);
      this.pos = at + HEADER_END.length;
    }
    const headers = parseHeaders(block);
    if (headers === null) throw invalid("a part has a malformed header line");
    this.part = this.openPart(headers);
    this.state = "body";
    return true;
  }

  /** A part from its headers: a named form-data part, the file if it has a filename. */
  private openPart(headers: Map<string, string>): Part {
    const disposition = headers.get("content-disposition");
    if (disposition === undefined) throw invalid("a part has no Content-Disposition header");
    const { value, params } = parseHeaderValue(disposition);
    const name = params.get("name");
    if (value !== "form-data" || name === undefined) {
      throw invalid("a part's Content-Disposition is not form-data with a name");
    }
    const filename = filenameOf(params);
    const contentType = headers.get("content-type")?.trim() || "text/plain";
    if (filename === null) return { name, filename, contentType, data: new Collector(this.maxFieldBytes) };
    if (this.file !== null) {
      throw new MultipartError(
        "invalid_multipart",
        `the form has a second file part, ${JSON.stringify(name)}`,
        name,
      );
    }
    return { name, filename, contentType, data: new Collector(this.limits.maxFileBytes) };
  }

  private partBody(): boolean {
    const part = this.part!;
    const at = this.buf.indexOf(this.delimiter, this.pos);
    if (at < 0) {
      // Keep back what could be the start of a delimiter; the rest is the part's.
      const keep = Math.max(this.pos, this.buf.length - (this.delimiter.length - 1));
      this.take(part, keep);
      return false;
    }
    this.take(part, at);
    this.pos = at + this.delimiter.length;
    this.closePart(part);
    this.state = "boundary";
    return true;
  }

  /** Adds the bytes from `pos` to `to` to the part, within its cap. */
  private take(part: Part, to: number): void {
    if (to > this.pos && !part.data.add(this.buf.subarray(this.pos, to))) {
      if (part.filename !== null) {
        throw new MultipartError(
          "file_too_large",
          `the file is larger than the limit of ${this.limits.maxFileBytes} bytes`,
          part.name,
        );
      }
      throw new MultipartError(
        "invalid_multipart",
        `the field ${JSON.stringify(part.name)} is larger than the limit of ${this.maxFieldBytes} bytes`,
        part.name,
      );
    }
    this.pos = to;
  }

  private closePart(part: Part): void {
    this.part = null;
    if (part.filename !== null) {
      this.file = {
        fieldName: part.name,
        filename: part.filename,
        contentType: part.contentType,
        data: part.data.bytes(),
      };
    } else if (!Object.hasOwn(this.fields, part.name)) {
      this.fields[part.name] = part.data.bytes().toString("utf8");
    }
  }

  /** Counts bytes read past (preamble, epilogue) against their cap. */
  private skip(n: number, max: number, where: string): void {
    this.skipped += n;
    if (this.skipped > max) throw invalid(`more than ${max} bytes ${where}`);
  }
}

function invalid(message: string): MultipartError {
  return new MultipartError("invalid_multipart", message);
}

/**
 * A part's bytes, copied into one buffer that doubles up to the cap, so tiny chunks cost no more than
 * large ones and the result needs no concatenation.
 */
class Collector {
  private buf = Buffer.alloc(0);
  private size = 0;

  constructor(private readonly cap: number) {}

  /** False, adding nothing, when the piece would take the part past its cap. */
  add(piece: Buffer): boolean {
    const needed = this.size + piece.length;
    if (needed > this.cap) return false;
    if (needed > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.min(this.cap, Math.max(needed, this.buf.length * 2, 1024)));
      this.buf.copy(grown, 0, 0, this.size);
      this.buf = grown;
    }
    piece.copy(this.buf, this.size);
    this.size = needed;
    return true;
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.size);
  }
}
