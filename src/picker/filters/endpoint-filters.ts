// The hard filters: each removes endpoints that must not take this request and says why. They are one
// predicate each, so they share a file; the profile decides what happens when one would remove them all.

import type { Filter, FilterOutcome, PickContext, PickerEndpoint } from "../framework/types.js";

const NONE_REMOVED: never[] = [];

/** A filter from a predicate returning why an endpoint is removed, or null to keep it. */
function predicateFilter(
  type: string,
  why: (e: PickerEndpoint, ctx: PickContext) => string | null,
  failOpen?: boolean,
): Filter {
  return {
    type,
    ...(failOpen === undefined ? {} : { failOpen }),
    filter<E extends PickerEndpoint>(ctx: PickContext, endpoints: readonly E[]): FilterOutcome<E> {
      // Most picks remove nothing: hand the same array back and allocate only on the first removal.
      let kept: E[] | null = null;
      let removed: { endpoint: E; why: string }[] | null = null;
      for (let i = 0; i < endpoints.length; i++) {
        const e = endpoints[i]!;
        const w = why(e, ctx);
        if (w === null) {
          kept?.push(e);
        } else {
          kept ??= endpoints.slice(0, i);
          removed ??= [];
          removed.push({ endpoint: e, why: w });
        }
      }
      return { kept: kept ?? endpoints, removed: removed ?? NONE_REMOVED };
    },
  };
}

/** Passed its health checks (a new endpoint is not ready until its first check passes). */
export const readyFilter = (failOpen?: boolean): Filter =>
  predicateFilter("ready", (e) => (e.healthy ? null : "not healthy"), failOpen);

/**
 * Not being drained by the gateway, not passively ejected for failures, not backing off after the
 * engine's 429/503, and not held by its circuit breaker.
 */
export const notDrainingFilter = (failOpen?: boolean): Filter =>
  predicateFilter(
    "not-draining",
    (e, ctx) =>
      e.draining
        ? "draining"
        : e.ejectedUntil > ctx.now
          ? `ejected for ${e.ejectedUntil - ctx.now} ms`
          : (e.holdWhy?.(ctx.now) ?? null),
    failOpen,
  );

/** Serves the requested model (and version, when the request names one); undeclared means "yes". */
export const servesModelFilter = (failOpen?: boolean): Filter =>
  predicateFilter(
    "serves-model",
    (e, { request: r }) => {
      if (e.model && e.model !== r.model) return `serves ${e.model}, not ${r.model}`;
      if (r.modelVersion && e.modelVersion && e.modelVersion !== r.modelVersion) {
        return `runs version ${e.modelVersion}, not ${r.modelVersion}`;
      }
      return null;
    },
    failOpen,
  );

/**
 * The engine can run the adapter now: it is running there, or fewer adapters are running than the
 * engine's `max_lora` slots (a free slot, or an idle resident adapter vLLM can evict). "Running" is the
 * last scrape's `running_lora_adapters` together with the gateway's own requests in flight there, which
 * the scrape may not show yet. An adapter only queued behind slots full of other running adapters is
 * not available: vLLM cannot schedule it until one of them drains, and sending more of its requests
 * there only lengthens that queue; they wait in the gateway instead, where the next freed slot on any
 * engine takes them. Unknown adapter state keeps the endpoint. While a slot is being freed on the engine
 * for an adapter that has none (endpoints/adapter-room.ts), the adapter leaving it gets no new request
 * there.
 */
export const loraAvailableFilter = (failOpen?: boolean): Filter =>
  predicateFilter(
    "lora-available",
    (e, { request: r, now }) => {
      const l = e.loras;
      if (r.lora === null || l === null) return null;
      const mine = e.adapterRecord;
      const slot = mine?.reserved?.(now);
      if (slot && slot.evicting === r.lora) {
        return `adapter ${r.lora}'s slot is being freed for ${slot.adapter}, which has none`;
      }
      if (l.running.includes(r.lora) || mine?.isActive(r.lora)) return null;
      if (l.max === null) return null;
      let busy = l.running.length;
      if (mine) for (const a of mine.active()) if (!l.running.includes(a)) busy++;
      if (busy < l.max) return null;
      return `adapter ${r.lora} not running and all ${l.max} adapter slots busy with running adapters`;
    },
    failOpen,
  );

/** KV-cache use under a watermark; stale readings are left to the metrics-fresh filter. */
export const kvWatermarkFilter = (threshold: number, failOpen?: boolean): Filter =>
  predicateFilter(
    "kv-watermark",
    (e, ctx) =>
      e.kvUsage !== null && e.metricsFresh(ctx.now) && e.kvUsage >= threshold
        ? `KV use ${e.kvUsage.toFixed(2)} >= watermark ${threshold}`
        : null,
    failOpen,
  );

/** The gateway's own in-flight requests under a per-endpoint concurrency cap. */
export const concurrencyCapFilter = (maxInflight: number, failOpen?: boolean): Filter =>
  predicateFilter(
    "concurrency-cap",
    (e) =>
      e.inflightRequests >= maxInflight ? `${e.inflightRequests} in flight >= cap ${maxInflight}` : null,
    failOpen,
  );

/** How long a stale endpoint stays a candidate under `prefer` (from its last good scrape), by default. */
export const DEFAULT_STALE_GRACE_MS = 2000;

/**
 * Metrics younger than the endpoint's staleness bound. `require` removes stale endpoints. `prefer`
 * removes a stale endpoint only when its last good scrape is older than `graceMs` (or it never had one,
 * or does not say when) and a fresher endpoint remains; with none left it keeps all, noted.
 *
 * A late scrape or two must not take an endpoint out of the pool: under load scrapes run late on some
 * endpoints and not others, and removing the late ones sent every request of that window to the few
 * endpoints scraped on time (a shared-prefix run at 120 req/s put 66 of 84 requests of half a second
 * on one replica, TTFT over 1 s). Kept, a recently stale endpoint makes the whole pick run on the
 * gateway's own accounting (`predicted`), which compares every candidate like for like.
 */
export function metricsFreshFilter(
  mode: "require" | "prefer",
  failOpen?: boolean,
  graceMs: number = DEFAULT_STALE_GRACE_MS,
): Filter {
  const inner = predicateFilter("metrics-fresh", (e, ctx) => {
    if (e.metricsFresh(ctx.now)) return null;
    if (mode === "require") return "metrics stale";
    const at = e.scrapedAt;
    if (at === undefined) return "metrics stale";
    if (at === null) return "no metrics yet";
    return ctx.now - at > graceMs ? `metrics stale for ${ctx.now - at} ms > grace ${graceMs} ms` : null;
  });
  return {
    type: "metrics-fresh",
    ...(failOpen === undefined ? {} : { failOpen }),
    filter<E extends PickerEndpoint>(ctx: PickContext, endpoints: readonly E[]): FilterOutcome<E> {
      const out = inner.filter(ctx, endpoints);
      if (mode === "require" || out.kept.length > 0 || endpoints.length === 0) return out;
      return {
        kept: endpoints,
        removed: NONE_REMOVED,
        note: "metrics-fresh(prefer): no endpoint has fresh metrics",
      };
    },
  };
}
