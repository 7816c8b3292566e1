// One watch request: GET with watch=true from a resourceVersion, its newline-delimited JSON events handed
// over one at a time in order, and how it ended: closed by the server (its timeoutSeconds), expired (410,
// as an HTTP status or as an ERROR event), lost (cut, silent too long, a line that is not JSON, another
// ERROR), or aborted by the caller.

import { asDiscoveryError, DiscoveryError } from "./discovery-error.js";
import type { KubeConnection, KubeQuery } from "./kube-connection.js";
import { decodeStatus } from "./kube-objects.js";

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK";

/** One event of a watch stream (ERROR events end the stream instead). */
export interface WatchEvent {
  readonly type: WatchEventType;
  readonly object: unknown;
}

/** Why a watch ended. */
export type WatchEnd =
  | { readonly kind: "closed" }
  | { readonly kind: "expired"; readonly error: DiscoveryError }
  /** `opened`: the server had answered 200 (the stream broke), else the request itself failed. */
  | { readonly kind: "lost"; readonly error: DiscoveryError; readonly opened: boolean }
  | { readonly kind: "aborted" };

/** One watch to run. */
export interface WatchRequest {
  /** The collection path, e.g. `/api/v1/namespaces/llm/pods`. */
  readonly path: string;
  /** Selectors, sent as they are with the watch parameters. */
  readonly query: KubeQuery;
  /** Events after this version are sent. */
  readonly resourceVersion: string;
  /** The server ends the stream after this long. */
  readonly timeoutSeconds: number;
  /** A stream silent (not even a bookmark) this long is lost: a half-open connection. */
  readonly idleMs: number;
  readonly signal: AbortSignal;
  /** Called when the server has answered 200. */
  readonly onOpen?: () => void;
  readonly onEvent: (event: WatchEvent) => void;
}

const EVENT_TYPES: ReadonlySet<string> = new Set(["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]);

/** Runs one watch until it ends; never throws. */
export async function watchOnce(conn: KubeConnection, w: WatchRequest): Promise<WatchEnd> {
  const query = {
    ...w.query,
    watch: "true",
    resourceVersion: w.resourceVersion,
    allowWatchBookmarks: "true",
    timeoutSeconds: String(w.timeoutSeconds),
  };
  let res: Awaited<ReturnType<KubeConnection["open"]>>;
  try {
    res = await conn.open(w.path, query, { signal: w.signal, idleMs: w.idleMs });
  } catch (err) {
    if (w.signal.aborted) return { kind: "aborted" };
    const error = asDiscoveryError(err, "kube_api_unreachable");
    return error.code === "kube_resource_expired"
      ? { kind: "expired", error }
      : { kind: "lost", error, opened: false };
  }
  w.onOpen?.();
  return new Promise<WatchEnd>((resolve) => {
    let buffered = "";
    let ended = false;
    const finish = (end: WatchEnd) => {
      if (ended) return;
      ended = true;
      res.destroy();
      resolve(end);
    };
    const lost = (message: string) =>
      finish({
        kind: "lost",
        opened: true,
        error: new DiscoveryError("kube_api_unreachable", `watch ${w.path}: ${message}`),
      });
    const line = (text: string) => {
      let event: { type?: unknown; object?: unknown };
      try {
        event = JSON.parse(text);
      } catch {
        return finish({
          kind: "lost",
          opened: true,
          error: new DiscoveryError("kube_bad_response", `watch ${w.path}: a line that is not JSON`),
        });
      }
      if (event.type === "ERROR") {
        const status = decodeStatus(event.object);
        const message = `watch ${w.path}: ERROR ${status?.code ?? "?"} ${status?.message ?? ""}`.trim();
        return status?.code === 410
          ? finish({ kind: "expired", error: new DiscoveryError("kube_resource_expired", message, 410) })
          : finish({
              kind: "lost",
              opened: true,
              error: new DiscoveryError("kube_api_status", message, status?.code ?? null),
            });
      }
      if (typeof event.type === "string" && EVENT_TYPES.has(event.type)) {
        w.onEvent({ type: event.type as WatchEventType, object: event.object });
      }
    };
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      buffered += chunk;
      for (let nl = buffered.indexOf("\n"); nl >= 0 && !ended; nl = buffered.indexOf("\n")) {
        const text = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (text) line(text);
      }
    });
    res.on("end", () => {
      if (buffered.trim()) line(buffered.trim());
      finish({ kind: "closed" });
    });
    res.on("error", (err) => (w.signal.aborted ? finish({ kind: "aborted" }) : lost(err.message)));
    res.on("close", () => {
      if (w.signal.aborted) finish({ kind: "aborted" });
      else if (!res.complete) lost("the stream was cut");
    });
  });
}
