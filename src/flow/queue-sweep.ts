// The clock that re-examines waiting requests: most chances to dispatch come as events (a lease released,
// a first token, a scrape), but some come with time alone — a non-streaming request's assumed prefill
// ends, a stale scrape's grace runs out — and nothing announces them. One sweep serves every pool, in
// their route priority order, so pools sharing engines meet such a moment highest priority first: with a
// timer per pool, the batch pool's timer ran a fixed phase ahead of the long-context pool's on the pod
// they share, won every time-driven opening, and held split pools' long-context requests to their
// maxQueueMs (TTFT P90 ~1 s → 12.9 s).

/** What the sweep asks of a pool. */
export interface Sweepable {
  /** Requests waiting. */
  readonly depth: number;
  /** Dispatches from the head of the queue while endpoints have room. */
  pump(): void;
  /** Removed by a reload: swept until its last waiting request has gone, then dropped. */
  readonly retired?: boolean;
}

/** While anything waits, the queues are re-examined at least this often. */
export const SWEEP_MS = 50;

export class QueueSweep {
  private pools: Sweepable[] = [];
  private timer: NodeJS.Timeout | null = null;

  /** Adds a pool; pools are swept in the order added (highest priority first). */
  add(pool: Sweepable): void {
    this.pools.push(pool);
  }

  /** The pools to sweep, in order (a reload's new set; retired pools still waiting among them). */
  set(pools: readonly Sweepable[]): void {
    this.pools = [...pools];
  }

  /** Something waits: make sure the sweep runs. */
  arm(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => this.run(), SWEEP_MS);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private run(): void {
    this.timer = null;
    let waiting = false;
    for (const p of this.pools) {
      if (p.depth === 0) continue;
      p.pump();
      if (p.depth > 0) waiting = true;
    }
    if (this.pools.some((p) => p.retired && p.depth === 0)) {
      this.pools = this.pools.filter((p) => !(p.retired && p.depth === 0));
    }
    if (waiting) this.arm();
  }
}
