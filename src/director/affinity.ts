// Session affinity: a session (and model) keeps the region it was first sent to for a TTL from then —
// short, so its conversation's prefix caches stay warm without pinning it for ever — and the director
// breaks it at once when the region fails.

/** A session's region until `expiresAt`. */
interface Entry {
  readonly region: string;
  readonly expiresAt: number;
}

/** Expired entries are swept after this many writes (lookups ignore them meanwhile). */
const SWEEP_EVERY = 4096;
/** Sessions come from a request header: beyond this many live ones, the least recently used go first. */
export const MAX_SESSIONS = 100_000;

/** Session → region, each with a TTL. */
export class AffinityTable {
  private readonly entries = new Map<string, Entry>();
  private writes = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = MAX_SESSIONS,
  ) {}

  /** A session's entry key: per model, as one session may use models served in different regions. */
  static key(session: string, model: string): string {
    return `${session}\u0000${model}`;
  }

  /** The session's region, or null when it has none or it expired. */
  lookup(key: string, now: number): string | null {
    const e = this.entries.get(key);
    return e !== undefined && e.expiresAt > now ? e.region : null;
  }

  /** Records the session's region until now + ttlMs. */
  write(key: string, region: string, now: number): void {
    // Re-inserted, so the map's order is least recently used first.
    this.entries.delete(key);
    this.entries.set(key, { region, expiresAt: now + this.ttlMs });
    if (++this.writes % SWEEP_EVERY === 0) this.sweep(now);
    for (const k of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(k);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  private sweep(now: number): void {
    for (const [k, e] of this.entries) if (e.expiresAt <= now) this.entries.delete(k);
  }
}
