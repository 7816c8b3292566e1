// Whether the client of a request left, and why.

/**
 * Whether the client left, and why. Most requests never need an AbortSignal (the upstream attempt
 * watches the response's "close" itself), so one is made only for whoever asks: the flow-control queue.
 */
export class ClientGone {
  aborted = false;
  reason: unknown = undefined;
  private ac: AbortController | null = null;

  get signal(): AbortSignal {
    if (!this.ac) {
      this.ac = new AbortController();
      if (this.aborted) this.ac.abort(this.reason);
    }
    return this.ac.signal;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.ac?.abort(reason);
  }
}
