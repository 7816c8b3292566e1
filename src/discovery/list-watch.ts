// A list-then-watch loop for one kind of object, keeping a store of them by name. A list replaces the
// whole store, so a missed delete cannot live on (a peer once routed to a deleted pod for 22 hours); the
// watch goes on from the list's resourceVersion, bookmarks advance it, a 410 (HTTP status or ERROR event)
// lists afresh, a lost watch resumes from the last version with backoff, a stream silent past its
// timeout is taken as lost, and a full relist every `relistMs` is the safety net.

import { setTimeout as sleep } from "node:timers/promises";
import { asDiscoveryError, DiscoveryError } from "./discovery-error.js";
import type { KubeConnection, KubeQuery } from "./kube-connection.js";
import { objectMeta } from "./kube-objects.js";
import { type WatchEnd, type WatchEvent, watchOnce } from "./watch-stream.js";

/** Why a list was made. */
export type ListReason = "initial" | "expired" | "periodic";

/** What the loop tells its owner, for logs and status. */
export type ListWatchNotice =
  | {
      readonly kind: "listed";
      readonly reason: ListReason;
      readonly items: number;
      readonly resourceVersion: string;
    }
  | {
      readonly kind: "relist";
      readonly reason: Exclude<ListReason, "initial">;
      readonly error: string | null;
    }
  | { readonly kind: "watch-lost"; readonly error: string; readonly resourceVersion: string }
  | { readonly kind: "request-failed"; readonly error: DiscoveryError };

/** The loop's state. */
export interface ListWatchStatus {
  /** A list has succeeded and no relist is owed (false before the first list and after a 410). */
  readonly synced: boolean;
  /** The last request reached the API server (an error status counts as reached, a 503 does not). */
  readonly connected: boolean;
  /** When the last full list succeeded (ms since the epoch). */
  readonly lastSyncAt: number | null;
  /** The last failure, until a request succeeds. */
  readonly lastError: DiscoveryError | null;
  /** The version the next watch starts from. */
  readonly resourceVersion: string | null;
}

/** Delays between retries: `initialMs`, doubling up to `maxMs`. */
export interface RetryPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { initialMs: 250, maxMs: 30_000 };
export const DEFAULT_RELIST_MS = 5 * 60_000;

/** What to list and watch, and whom to tell. */
export interface ListWatchOptions<T> {
  readonly connection: KubeConnection;
  /** The collection, e.g. `/api/v1/namespaces/llm/pods`. */
  readonly path: string;
  /** `labelSelector` / `fieldSelector`, for the list and the watch alike. */
  readonly query: KubeQuery;
  /** The object's typed view; null leaves it out of the store. */
  readonly decode: (raw: unknown) => T | null;
  /** After a list (the whole store replaced) or after each watch event that changed it. */
  readonly onChange: (items: ReadonlyMap<string, T>, cause: "list" | "event") => void;
  readonly onNotice?: (notice: ListWatchNotice) => void;
  /** Called whenever `status()` may have changed. */
  readonly onStatus?: () => void;
  /** Full relist period; default 5 min. */
  readonly relistMs?: number;
  /** The server ends each watch after this; default 290 s. */
  readonly watchTimeoutSeconds?: number;
  /** A list taking longer (idle socket), or a watch silent 30 s past its timeout, fails; default 30 s. */
  readonly requestTimeoutMs?: number;
  readonly retry?: RetryPolicy;
}

/** A watch shorter than this that ends cleanly counts as a failure for the backoff (no tight loop). */
const SHORT_WATCH_MS = 1000;

/** The loop for one collection; `items()` is the store. */
export class ListWatch<T> {
  private store = new Map<string, T>();
  private rv: string | null = null;
  private synced = false;
  private connected = false;
  private lastSyncAt: number | null = null;
  private lastError: DiscoveryError | null = null;
  private stopped = false;
  private readonly stopping = new AbortController();
  private watchAbort: AbortController | null = null;
  /** Set by the timer that ends a watch for the periodic relist. */
  private relistDue = false;
  private loop: Promise<void> | null = null;
  private readonly relistMs: number;
  private readonly retry: RetryPolicy;
  private readonly timeoutSeconds: number;
  private readonly requestTimeoutMs: number;

  constructor(private readonly opts: ListWatchOptions<T>) {
    this.relistMs = opts.relistMs ?? DEFAULT_RELIST_MS;
    this.retry = opts.retry ?? DEFAULT_RETRY;
    this.timeoutSeconds = opts.watchTimeoutSeconds ?? 290;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
  }

  /** Starts the loop (once). */
  start(): void {
    this.loop ??= this.run();
  }

  /** Ends the loop and its watch; resolves once it has stopped. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    this.watchAbort?.abort();
    await this.loop;
  }

  items(): ReadonlyMap<string, T> {
    return this.store;
  }

  status(): ListWatchStatus {
    return {
      synced: this.synced,
      connected: this.connected,
      lastSyncAt: this.lastSyncAt,
      lastError: this.lastError,
      resourceVersion: this.rv,
    };
  }

  private async run(): Promise<void> {
    let reason: ListReason | null = "initial";
    let failures = 0;
    let relistAt = 0;
    while (!this.stopped) {
      if (reason === null && (this.relistDue || Date.now() >= relistAt)) {
        reason = "periodic";
        this.notice({ kind: "relist", reason, error: null });
      }
      if (reason !== null) {
        try {
          await this.list(reason);
          reason = null;
          this.relistDue = false;
          failures = 0;
          relistAt = Date.now() + this.relistMs;
        } catch (err) {
          if (this.stopped) break;
          this.failed(asDiscoveryError(err, "kube_api_unreachable"));
          await this.pause(failures++);
          continue;
        }
      }
      const began = Date.now();
      const end = await this.watch(relistAt);
      if (end.kind === "aborted") continue;
      const short = Date.now() - began < SHORT_WATCH_MS;
      if (end.kind === "expired") {
        reason = "expired";
        this.synced = false;
        this.notice({ kind: "relist", reason, error: end.error.describe() });
        this.changed();
        // A list whose version has already expired again: back off rather than list in a loop.
        failures = short ? failures + 1 : 0;
      } else if (end.kind === "closed") {
        failures = short ? failures + 1 : 0;
      } else {
        // A watch that never opened is a failed request (told once as such), not a lost watch.
        if (!end.opened) this.failed(end.error);
        else this.notice({ kind: "watch-lost", error: end.error.describe(), resourceVersion: this.rv ?? "" });
        failures = end.opened && !short ? 0 : failures + 1;
      }
      if (failures > 0) await this.pause(failures - 1);
    }
  }

  private async list(reason: ListReason): Promise<void> {
    const body = (await this.opts.connection.getJson(this.opts.path, this.opts.query, {
      signal: this.stopping.signal,
      idleMs: this.requestTimeoutMs,
    })) as { items?: unknown };
    const rv = objectMeta(body).resourceVersion;
    if (!rv || !Array.isArray(body.items)) {
      throw new DiscoveryError(
        "kube_bad_response",
        `list ${this.opts.path}: no items or resourceVersion`,
        200,
      );
    }
    const store = new Map<string, T>();
    for (const raw of body.items) {
      const name = objectMeta(raw).name;
      const item = name ? this.opts.decode(raw) : null;
      if (name && item !== null) store.set(name, item);
    }
    this.store = store;
    this.rv = rv;
    this.synced = true;
    this.reached();
    this.lastSyncAt = Date.now();
    this.notice({ kind: "listed", reason, items: store.size, resourceVersion: rv });
    this.opts.onChange(this.store, "list");
    this.changed();
  }

  /** One watch from the current version, aborted at `relistAt` for the periodic relist. */
  private async watch(relistAt: number): Promise<WatchEnd> {
    const abort = new AbortController();
    this.watchAbort = abort;
    const timer = setTimeout(
      () => {
        this.relistDue = true;
        abort.abort();
      },
      Math.max(0, relistAt - Date.now()),
    );
    try {
      return await watchOnce(this.opts.connection, {
        path: this.opts.path,
        query: this.opts.query,
        resourceVersion: this.rv ?? "",
        timeoutSeconds: this.timeoutSeconds,
        idleMs: this.timeoutSeconds * 1000 + this.requestTimeoutMs,
        signal: AbortSignal.any([abort.signal, this.stopping.signal]),
        onOpen: () => this.reached(),
        onEvent: (e) => this.apply(e),
      });
    } finally {
      clearTimeout(timer);
      this.watchAbort = null;
    }
  }

  private apply(e: WatchEvent): void {
    const { name, resourceVersion } = objectMeta(e.object);
    if (resourceVersion) this.rv = resourceVersion;
    if (e.type === "BOOKMARK" || !name) return;
    const item = e.type === "DELETED" ? null : this.opts.decode(e.object);
    if (item === null && !this.store.has(name)) return;
    const store = new Map(this.store);
    if (item === null) store.delete(name);
    else store.set(name, item);
    this.store = store;
    this.opts.onChange(this.store, "event");
  }

  private reached(): void {
    const was = this.connected && this.lastError === null;
    this.connected = true;
    this.lastError = null;
    if (!was) this.changed();
  }

  private failed(error: DiscoveryError): void {
    this.connected = error.code !== "kube_api_unreachable" && error.status !== null;
    this.lastError = error;
    this.notice({ kind: "request-failed", error });
    this.changed();
  }

  private async pause(attempt: number): Promise<void> {
    const base = Math.min(this.retry.maxMs, this.retry.initialMs * 2 ** Math.min(attempt, 30));
    try {
      await sleep(base * (0.8 + 0.4 * Math.random()), undefined, { signal: this.stopping.signal });
    } catch {
      // Stopped.
    }
  }

  private notice(n: ListWatchNotice): void {
    this.opts.onNotice?.(n);
  }

  private changed(): void {
    this.opts.onStatus?.();
  }
}
