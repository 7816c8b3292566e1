// The benchmark clients' reading of a stream: its `data:` payloads, frame by frame. The gateway and the
// simulator frame with "\n\n" and write "data: " with the space, so this is a byte search, not the SSE
// grammar (the gateway's relay, proxy/sse-relay.ts, reads every framing an engine may use).

export class SseData {
  private buf = "";

  /** The payloads of the frames `chunk` completes, in order (comments and other fields skipped). */
  push(chunk: Buffer | string): string[] {
    this.buf += typeof chunk === "string" ? chunk : chunk.toString("utf8");
    const out: string[] = [];
    let idx = this.buf.indexOf("\n\n");
    while (idx >= 0) {
      const frame = this.buf.slice(0, idx);
      this.buf = this.buf.slice(idx + 2);
      idx = this.buf.indexOf("\n\n");
      if (frame.startsWith("data: ")) out.push(frame.slice(6));
    }
    return out;
  }
}
