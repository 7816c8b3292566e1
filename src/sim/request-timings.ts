// The engine's own record of recently finished requests (queue, prefill and decode time, tokens), kept
// by request id so a benchmark can join it with what its client saw, whichever router sat in between.

import type { EngineRequest } from "./engine-request.js";

export interface RequestTiming {
  id: string;
  finish: string | null;
  queue_ms: number;
  prefill_ms: number | null;
  decode_ms: number | null;
  prompt_tokens: number;
  cached_tokens: number;
  output_tokens: number;
  preemptions: number;
}

export class RequestTimings {
  private readonly ring: (RequestTiming | undefined)[];
  private next = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    this.ring = new Array(capacity);
  }

  record(r: EngineRequest): void {
    const ms = (x: number) => (Number.isFinite(x) ? Math.round(x * 100) / 100 : null);
    this.ring[this.next] = {
      id: r.id,
      finish: r.finishReason,
      queue_ms: ms(r.firstScheduledAt - r.arrivedAt) ?? ms(r.finishedAt - r.arrivedAt) ?? 0,
      prefill_ms: ms(r.firstTokenAt - r.firstScheduledAt),
      decode_ms: ms(r.finishedAt - r.firstTokenAt),
      prompt_tokens: r.promptLen,
      cached_tokens: Math.max(0, r.cachedTokens),
      output_tokens: r.outputLen,
      preemptions: r.preemptions,
    };
    this.next = (this.next + 1) % this.capacity;
    if (this.size < this.capacity) this.size++;
  }

  /** Oldest first. */
  list(): RequestTiming[] {
    const out: RequestTiming[] = [];
    const start = (this.next - this.size + this.capacity) % this.capacity;
    for (let i = 0; i < this.size; i++) out.push(this.ring[(start + i) % this.capacity]!);
    return out;
  }

  clear(): void {
    this.ring.fill(undefined);
    this.next = 0;
    this.size = 0;
  }
}
