// Relays an upstream SSE stream to the client chunk by chunk without re-encoding it: complete frames
// are written as they arrive (one write per upstream chunk), and a few byte searches find what the
// gateway must know — the first content token (TTFT), the usage frame (read, and dropped when the
// caller did not ask for it), [DONE], and an error event.

import { type StreamUsage, usageOf } from "./usage.js";

const FRAME_END = Buffer.from("\n\n");
const USAGE = Buffer.from('"usage":{');
const DONE = Buffer.from("data: [DONE]");
const ERROR = Buffer.from('data: {"error"');
const CONTENT = /"(?:content|text)":"(?:[^"\\]|\\.)/;

export class SseRelay {
  /** When the first frame carrying generated text passed (performance.now()); NaN before. */
  firstContentAt = Number.NaN;
  usage: StreamUsage | null = null;
  sawDone = false;
  upstreamError: string | null = null;
  frames = 0;
  private pending: Buffer | null = null;

  constructor(
    private readonly keepUsageFrame: boolean,
    /** Told the moment the first generated text passes (flow control watches TTFT as it happens). */
    private readonly onFirstContent: (() => void) | null = null,
  ) {}

  /** Returns the bytes to write to the client for this upstream chunk (possibly empty). */
  push(chunk: Buffer): Buffer {
    let data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    const last = data.lastIndexOf(FRAME_END);
    if (last < 0) {
      this.pending = data;
      return EMPTY;
    }
    const cut = last + 2;
    this.pending = cut < data.length ? data.subarray(cut) : null;
    data = data.subarray(0, cut);
    if (Number.isNaN(this.firstContentAt)) this.findFirstContent(data);
    if (data.indexOf(USAGE) >= 0) data = this.takeUsage(data);
    if (!this.sawDone && data.indexOf(DONE) >= 0) this.sawDone = true;
    if (this.upstreamError === null) {
      const e = data.indexOf(ERROR);
      if (e >= 0) {
        const end = data.indexOf(FRAME_END, e);
        this.upstreamError = data.subarray(e + 6, end < 0 ? data.length : end).toString("utf8");
      }
    }
    return data;
  }

  /** Whatever was left without a closing blank line when the stream ended. */
  rest(): Buffer {
    const p = this.pending ?? EMPTY;
    this.pending = null;
    return p;
  }

  private findFirstContent(data: Buffer): void {
    let start = 0;
    while (start < data.length) {
      const end = data.indexOf(FRAME_END, start);
      const stop = end < 0 ? data.length : end;
      this.frames++;
      if (CONTENT.test(data.toString("utf8", start, stop))) {
        this.firstContentAt = performance.now();
        this.onFirstContent?.();
        return;
      }
      start = stop + 2;
    }
  }

  /** Reads the usage frame (choices: []) and removes it unless the caller asked for usage. */
  private takeUsage(data: Buffer): Buffer {
    let start = 0;
    const kept: Buffer[] = [];
    let removed = false;
    while (start < data.length) {
      const end = data.indexOf(FRAME_END, start);
      const stop = end < 0 ? data.length : end + 2;
      const frame = data.subarray(start, stop);
      if (frame.indexOf(USAGE) >= 0 && frame.indexOf('"choices":[]') >= 0) {
        // A malformed usage frame is passed on as it is; usage stays unknown (null in the log).
        const usage = usageOf(frame);
        if (usage) this.usage = usage;
        if (!this.keepUsageFrame) {
          removed = true;
          start = stop;
          continue;
        }
      }
      kept.push(frame);
      start = stop;
    }
    return removed ? Buffer.concat(kept) : data;
  }
}

const EMPTY = Buffer.alloc(0);
