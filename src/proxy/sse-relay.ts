// Relays an upstream SSE stream to the client chunk by chunk without re-encoding it. The stream is read
// as the WHATWG event-stream grammar has it (lines end with CRLF, LF or CR, also when a CRLF is split
// between chunks; a blank line dispatches an event; `data:` with or without its space, several data
// lines joined by LF; comments and other fields; a leading BOM), so vLLM's bytes and those of servers
// built on sse-starlette (CRLF) or Python's json.dumps (`"key": value`) are read alike.
//
// Complete events are written as they arrive (one write per upstream chunk, or a few when a dropped
// usage event sits between others); an incomplete one waits for its blank line. The gateway must know
// four things of the stream — the first event carrying generated text (TTFT), the usage event (read,
// and dropped when the caller did not ask for it), [DONE], and an error event — and finds them without
// parsing every event's JSON: [DONE] and `{"error"` are checked in place at the data's start; a
// whitespace-tolerant byte search over each chunk (a key, then whitespace, a colon, whitespace and the
// value's first byte) picks the usage and first-content candidates, and only those are parsed (the
// usage object alone; the first-content candidate whole, to check where its text sits).

import { skipJsonSpace, valueAfterKey } from "./json-bytes.js";
import { type StreamUsage, usageOf } from "./usage.js";

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const COLON = 0x3a;
const QUOTE = 0x22;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

// The keys searched for, by index into the per-chunk cache of their next occurrence. A search runs from
// its pattern's first byte, so each key is searched by a tail that starts with a byte rare in JSON, and
// the whole key is then checked in place: a quote is every few bytes (a 1.5 KB chunk took 1.7 µs to
// search for `"usage"`, 0.3 µs for `usage"`), and `t` is in most keys (`xt"` for `"text"`).
const CONTENT = 0;
const TEXT = 1;
const USAGE = 2;
const CHOICES = 3;
const KEYS = ['"content"', '"text"', '"usage"', '"choices"'].map((k) => Buffer.from(k));
const SEARCHED = ['content"', 'xt"', 'usage"', 'choices"'].map((k) => Buffer.from(k));
const ERROR = Buffer.from('"error"');
const DONE = Buffer.from("[DONE]");

// What the CR that ended the previous chunk ended; an LF opening the next chunk belongs to it.
const CR_NONE = 0;
/** A line inside an event: the LF is skipped, the event goes on. */
const CR_LINE = 1;
/** A blank line that completed a frame passed on: the LF goes out with the next chunk's bytes. */
const CR_FRAME = 2;
/** A blank line that completed a dropped frame (the usage event): the LF is dropped with it. */
const CR_DROPPED_FRAME = 3;

export class SseRelay {
  /** When the first frame carrying generated text passed (performance.now()); NaN before. */
  firstContentAt = Number.NaN;
  usage: StreamUsage | null = null;
  sawDone = false;
  /** The data (JSON text) of the first `{"error": …}` event the engine sent; null if none. */
  upstreamError: string | null = null;
  /** Events dispatched so far (lines up to a blank line, at least one of them a data line). */
  frames = 0;

  /** The bytes of the current, incomplete event; it starts at an event's first line. */
  private pending: Buffer | null = null;
  /** Where in `pending` its incomplete line starts (the lines before it were read). */
  private lineAt = 0;
  private afterCr = CR_NONE;
  /** No line has been read yet: the first one may open with a BOM. */
  private atStreamStart = true;
  // The current event's data lines: the first one's value [dataStart, dataEnd), and when there are more,
  // every value's range in `dataRanges` (start, end, start, end…). Offsets into `buf` during a push.
  private dataLines = 0;
  private dataStart = 0;
  private dataEnd = 0;
  private dataRanges: number[] | null = null;

  // Per push: the bytes read (pending + chunk), the cached next occurrence of LF, CR and each pattern
  // (-2: not searched yet, -1: none up to the end), and how far `pending` was known to hold no line end.
  private buf: Buffer = EMPTY;
  private nextLf = -2;
  private nextCr = -2;
  private searchFrom = 0;
  private readonly hits = [-2, -2, -2, -2];

  constructor(
    private readonly keepUsageFrame: boolean,
    /** Told the moment the first generated text passes (flow control watches TTFT as it happens). */
    private readonly onFirstContent: (() => void) | null = null,
    /** Tests: told each dispatched event's data, before the relay reads it. */
    private readonly onEvent: ((data: string) => void) | null = null,
  ) {}

  /** Returns the bytes to write to the client for this upstream chunk (possibly empty). */
  push(chunk: Buffer): Buffer {
    const held = this.pending;
    const buf = held ? Buffer.concat([held, chunk]) : chunk;
    const len = buf.length;
    this.buf = buf;
    this.nextLf = -2;
    this.nextCr = -2;
    this.searchFrom = held ? held.length : 0;
    const hits = this.hits;
    for (let i = 0; i < hits.length; i++) hits[i] = -2;

    let p = this.lineAt;
    /** End of the last complete frame: what can go out now. */
    let cut = 0;
    /** Start of the bytes not yet passed on or dropped. */
    let emitFrom = 0;
    let pieces: Buffer[] | null = null;
    let eventStart = 0;

    if (this.afterCr !== CR_NONE && p < len) {
      if (buf[p] === LF) {
        p++;
        if (this.afterCr !== CR_LINE) {
          cut = eventStart = p;
          if (this.afterCr === CR_DROPPED_FRAME) emitFrom = p;
        }
      }
      this.afterCr = CR_NONE;
    }

    while (p < len) {
      const c = buf[p];
      const t = c === LF || c === CR ? p : this.lineEnd(p);
      if (t < 0) break;
      let next = t + 1;
      let crAtEnd = false;
      if (buf[t] === CR) {
        if (next === len) crAtEnd = true;
        else if (buf[next] === LF) next++;
      }
      let start = p;
      if (this.atStreamStart) {
        this.atStreamStart = false;
        // The BOM is no part of the first event: it goes out at once (a dropped first event leaves it).
        if (buf[p] === 0xef && buf[p + 1] === 0xbb && buf[p + 2] === 0xbf) cut = eventStart = start += 3;
      }
      if (start === t) {
        // A blank line: the event (if it has data) is dispatched, and its frame is complete.
        const drop = this.dataLines > 0 && this.dispatch();
        if (drop) {
          if (eventStart > emitFrom) {
            pieces ??= [];
            pieces.push(buf.subarray(emitFrom, eventStart));
          }
          emitFrom = next;
        }
        this.dataLines = 0;
        this.dataRanges = null;
        cut = eventStart = next;
        if (crAtEnd) this.afterCr = drop ? CR_DROPPED_FRAME : CR_FRAME;
      } else {
        if (
          buf[start] === 0x64 && // d
          buf[start + 1] === 0x61 && // a
          buf[start + 2] === 0x74 && // t
          buf[start + 3] === 0x61 && // a
          (start + 4 === t || buf[start + 4] === COLON)
        ) {
          let v = start + 4 === t ? t : start + 5;
          if (v < t && buf[v] === SPACE) v++;
          this.addData(v, t);
        }
        // Anything else — a comment (`:`), `event:`, `id:`, `retry:`, an unknown field — is passed on
        // and otherwise ignored.
        if (crAtEnd) this.afterCr = CR_LINE;
      }
      p = next;
    }

    // Keep the incomplete event, its offsets now counted from its start.
    this.pending = cut < len ? buf.subarray(cut) : null;
    this.lineAt = p - cut;
    if (this.dataLines > 0) {
      this.dataStart -= cut;
      this.dataEnd -= cut;
      const ranges = this.dataRanges;
      if (ranges) for (let i = 0; i < ranges.length; i++) ranges[i]! -= cut;
    }
    this.buf = EMPTY;

    if (pieces) {
      if (cut > emitFrom) pieces.push(buf.subarray(emitFrom, cut));
      return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
    }
    if (cut <= emitFrom) return EMPTY;
    return emitFrom === 0 && cut === len ? buf : buf.subarray(emitFrom, cut);
  }

  /** Whatever was left without a closing blank line when the stream ended (never dispatched). */
  rest(): Buffer {
    const p = this.pending ?? EMPTY;
    this.pending = null;
    this.lineAt = 0;
    this.dataLines = 0;
    this.dataRanges = null;
    return p;
  }

  /** The first CR or LF at or after `p` in this push's bytes; -1 when the line is not complete yet. */
  private lineEnd(p: number): number {
    const buf = this.buf;
    const from = Math.max(p, this.searchFrom);
    let lf = this.nextLf;
    if (lf !== -1 && lf < p) this.nextLf = lf = buf.indexOf(LF, from);
    let cr = this.nextCr;
    if (cr !== -1 && cr < p) this.nextCr = cr = buf.indexOf(CR, from);
    if (cr < 0) return lf;
    if (lf < 0) return cr;
    return Math.min(cr, lf);
  }

  private addData(start: number, end: number): void {
    if (++this.dataLines === 1) {
      this.dataStart = start;
      this.dataEnd = end;
      return;
    }
    if (this.dataRanges) this.dataRanges.push(start, end);
    else this.dataRanges = [this.dataStart, this.dataEnd, start, end];
  }

  /** Reads the event just completed; true when its frame is to be dropped (an unwanted usage event). */
  private dispatch(): boolean {
    this.frames++;
    let b = this.buf;
    let start = this.dataStart;
    let end = this.dataEnd;
    if (this.dataRanges) {
      b = joinData(b, this.dataRanges);
      start = 0;
      end = b.length;
    }
    this.onEvent?.(b.toString("utf8", start, end));
    const first = skipJsonSpace(b, start, end);
    if (first === end) return false;
    if (b[first] === OPEN_BRACKET) {
      if (!this.sawDone && bytesAt(b, first, end, DONE)) this.sawDone = true;
      return false;
    }
    if (b[first] !== OPEN_BRACE) return false;

    if (Number.isNaN(this.firstContentAt) && this.carriesText(b, first, end)) {
      this.firstContentAt = performance.now();
      this.onFirstContent?.();
    }
    let drop = false;
    if (this.isUsageEvent(b, first, end)) {
      // A usage event whose object cannot be read is still the gateway's own: dropped all the same;
      // usage stays unknown (null in the log).
      const usage = usageOf(b.subarray(first, end));
      if (usage) this.usage = usage;
      drop = !this.keepUsageFrame;
    }
    if (this.upstreamError === null && isErrorEvent(b, first, end))
      this.upstreamError = b.toString("utf8", start, end);
    return drop;
  }

  /**
   * Whether the event carries generated text: a candidate has a `"content"` or `"text"` key with a
   * non-empty string value somewhere; it is parsed to check that this is a choice's delta.content
   * (chat) or text (completion), so a role-only frame (content "") or other keys never count.
   */
  private carriesText(b: Buffer, from: number, to: number): boolean {
    if (!this.nonEmptyString(b, CONTENT, from, to) && !this.nonEmptyString(b, TEXT, from, to)) return false;
    let parsed: unknown;
    try {
      parsed = JSON.parse(b.toString("utf8", from, to));
    } catch {
      return false;
    }
    const choices = (parsed as { choices?: unknown } | null)?.choices;
    if (!Array.isArray(choices)) return false;
    for (const choice of choices as { delta?: { content?: unknown } | null; text?: unknown }[]) {
      if (choice === null || typeof choice !== "object") continue;
      const content = choice.delta?.content;
      if (typeof content === "string" && content.length > 0) return true;
      if (typeof choice.text === "string" && choice.text.length > 0) return true;
    }
    return false;
  }

  private nonEmptyString(b: Buffer, pattern: number, from: number, to: number): boolean {
    for (let v = this.keyed(b, pattern, from, to); v >= 0; v = this.keyed(b, pattern, v, to)) {
      if (b[v] === QUOTE && v + 1 < to && b[v + 1] !== QUOTE) return true;
    }
    return false;
  }

  /** The usage event: a `"usage"` object and `"choices": []`. */
  private isUsageEvent(b: Buffer, from: number, to: number): boolean {
    let v = this.keyed(b, USAGE, from, to);
    while (v >= 0 && b[v] !== OPEN_BRACE) v = this.keyed(b, USAGE, v, to);
    if (v < 0) return false;
    v = this.keyed(b, CHOICES, from, to);
    if (v < 0 || b[v] !== OPEN_BRACKET) return false;
    const close = skipJsonSpace(b, v + 1, to);
    return close < to && b[close] === CLOSE_BRACKET;
  }

  /**
   * The start of the value of the next `pattern` key (the quoted name followed by a colon) found after
   * `from` and before `to`; -1 if none.
   */
  private keyed(b: Buffer, pattern: number, from: number, to: number): number {
    const key = KEYS[pattern]!;
    const lead = key.length - SEARCHED[pattern]!.length;
    for (let at = this.find(b, pattern, from + lead, to); at >= 0; at = this.find(b, pattern, at + 1, to)) {
      if (!bytesAt(b, at - lead, to, key)) continue;
      const v = valueAfterKey(b, at - lead + key.length, to);
      if (v >= 0) return v;
    }
    return -1;
  }

  /**
   * The next occurrence of a pattern in [from, to); -1 if none. In this push's bytes the answer is
   * cached: events are read in order, so one search serves every event up to the occurrence it found.
   */
  private find(b: Buffer, pattern: number, from: number, to: number): number {
    const bytes = SEARCHED[pattern]!;
    let at: number;
    if (b === this.buf) {
      at = this.hits[pattern]!;
      if (at !== -1 && at < from) this.hits[pattern] = at = b.indexOf(bytes, from);
    } else at = b.indexOf(bytes, from);
    return at >= 0 && at + bytes.length <= to ? at : -1;
  }
}

/** An event's data lines joined by LF (the rare event with several). */
function joinData(b: Buffer, ranges: number[]): Buffer {
  let size = ranges.length / 2 - 1;
  for (let i = 0; i < ranges.length; i += 2) size += ranges[i + 1]! - ranges[i]!;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (let i = 0; i < ranges.length; i += 2) {
    if (i > 0) out[at++] = LF;
    at += b.copy(out, at, ranges[i]!, ranges[i + 1]!);
  }
  return out;
}

/**
 * An error event, `{"error": …}`: an object whose first key is "error" (checked in place, no search),
 * parsed to check its value is not null.
 */
function isErrorEvent(b: Buffer, open: number, to: number): boolean {
  const key = skipJsonSpace(b, open + 1, to);
  if (!bytesAt(b, key, to, ERROR) || valueAfterKey(b, key + ERROR.length, to) < 0) return false;
  try {
    const parsed = JSON.parse(b.toString("utf8", open, to)) as { error?: unknown } | null;
    return parsed !== null && typeof parsed === "object" && parsed.error != null;
  } catch {
    return false;
  }
}

/** Whether `pattern` sits at `at` (ending by `to`); a loop, cheaper than Buffer.compare's checks. */
function bytesAt(b: Buffer, at: number, to: number, pattern: Buffer): boolean {
  if (at + pattern.length > to) return false;
  for (let i = 0; i < pattern.length; i++) if (b[at + i] !== pattern[i]) return false;
  return true;
}

const EMPTY = Buffer.alloc(0);
