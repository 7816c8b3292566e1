// The pick stage for now (the full filter-and-score endpoint picker is a later issue): among the pool's
// healthy endpoints, the one with the least outstanding work — the gateway's own in-flight tokens,
// plus the engine's scraped waiting queue when its metrics are fresh. Ties are broken at random, so a
// burst does not herd onto one pod.

export interface PickCandidate {
  readonly name: string;
  readonly healthy: boolean;
  readonly draining: boolean;
  readonly ejectedUntil: number;
  readonly inflightRequests: number;
  readonly inflightTokens: number;
  readonly waiting: number | null;
  readonly kvUsage: number | null;
  metricsFresh(now: number): boolean;
}

export interface Pick<E extends PickCandidate> {
  endpoint: E;
  /** `metrics` when the engine's scraped queue counted, `local` when only the gateway's accounting did. */
  mode: "metrics" | "local";
  /** Outstanding work of the chosen endpoint, in tokens. */
  load: number;
  candidates: number;
}

/** Tokens one waiting request is assumed to cost when only its count is known. */
const WAITING_REQUEST_TOKENS = 1024;

export function pickLeastLoaded<E extends PickCandidate>(
  endpoints: readonly E[],
  exclude: ReadonlySet<E>,
  now: number,
  random: () => number = Math.random,
): Pick<E> | null {
  let best: E | null = null;
  let bestLoad = Number.POSITIVE_INFINITY;
  let bestMode: "metrics" | "local" = "local";
  let ties = 0;
  let candidates = 0;
  for (const e of endpoints) {
    if (!e.healthy || e.draining || e.ejectedUntil > now || exclude.has(e)) continue;
    candidates++;
    const fresh = e.waiting !== null && e.metricsFresh(now);
    // The gateway's own in-flight tokens are exact for what it sent; the engine's queue also shows work from
    // elsewhere (and a backlog the gateway's count cannot see), so a fresh queue depth adds to it.
    const load = e.inflightTokens + (fresh ? e.waiting! * WAITING_REQUEST_TOKENS : 0);
    if (load < bestLoad) {
      best = e;
      bestLoad = load;
      bestMode = fresh ? "metrics" : "local";
      ties = 1;
    } else if (load === bestLoad && random() * ++ties < 1) {
      best = e;
      bestMode = fresh ? "metrics" : "local";
    }
  }
  return best ? { endpoint: best, mode: bestMode, load: bestLoad, candidates } : null;
}
