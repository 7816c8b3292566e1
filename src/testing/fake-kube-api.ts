// Test fixture: a fake Kubernetes API server (node:http, plain HTTP on loopback) that lists and watches
// pods and v1 InferencePools as the real one does: one global resourceVersion, lists carrying it, watch
// streams of newline-delimited events replayed from a kept history (410 Gone for a version older than it
// keeps), bookmarks, label and field selectors, a bearer token; and the controls that break it for tests.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import {
  applyPodPatch,
  type FakeObject,
  type FakePodPatch,
  type FakePodSpec,
  type FakePoolSpec,
  fakeInferencePool,
  fakePod,
  matchesFieldSelector,
  matchesLabelSelector,
} from "./fake-kube-api-objects.js";

export type FakeResource = "pods" | "inferencepools";

export interface FakeKubeApiOptions {
  /** Changes kept for watches from an older version; default 1000 (fewer forces 410 sooner). */
  historyLimit?: number;
  /** The bearer token every request must carry; default `fake-token`. */
  token?: string;
  /** A too-old version refused as an ERROR event in a 200 stream (the API server's way, default) or HTTP 410. */
  goneAs?: "event" | "status";
  /** Never end a watch at its timeoutSeconds: to the client, a silent half-open connection. */
  ignoreWatchTimeout?: boolean;
}

/** One request the fake answered, for assertions (how many lists, from which version a watch went on). */
export interface FakeRequest {
  readonly resource: FakeResource | null;
  readonly watch: boolean;
  readonly query: Readonly<Record<string, string>>;
}

interface Change {
  readonly rv: number;
  readonly resource: FakeResource;
  readonly namespace: string;
  readonly before: FakeObject | null;
  /** null: deleted. */
  readonly after: FakeObject | null;
  /** What an event carries: `after`, or the deleted object at its deletion version. */
  readonly object: FakeObject;
}

interface Watcher {
  readonly resource: FakeResource;
  readonly namespace: string;
  readonly labelSelector: string | null;
  readonly fieldSelector: string | null;
  readonly bookmarks: boolean;
  readonly res: ServerResponse;
}

const ROUTE =
  /^\/(?:api\/v1|apis\/inference\.networking\.k8s\.io\/v1)\/namespaces\/([^/]+)\/(pods|inferencepools)(?:\/([^/]+))?$/;

/** The fake API server; `FakeKubeApi.start()` listens on a free loopback port. */
export class FakeKubeApi {
  readonly requests: FakeRequest[] = [];
  readonly token: string;
  private port = 0;
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly watchers = new Set<Watcher>();
  private readonly objects = new Map<string, FakeObject>();
  private history: Change[] = [];
  private rv = 1;
  private compactedRv = 0;
  private readonly historyLimit: number;
  private readonly goneAs: "event" | "status";
  private readonly ignoreWatchTimeout: boolean;
  private muted = false;

  private constructor(opts: FakeKubeApiOptions) {
    this.token = opts.token ?? "fake-token";
    this.historyLimit = opts.historyLimit ?? 1000;
    this.goneAs = opts.goneAs ?? "event";
    this.ignoreWatchTimeout = opts.ignoreWatchTimeout ?? false;
  }

  static async start(opts: FakeKubeApiOptions = {}): Promise<FakeKubeApi> {
    const api = new FakeKubeApi(opts);
    await api.start();
    return api;
  }

  /** `http://127.0.0.1:port`, the same across stop() and start(). */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Listens (again, on the same port after stop()): the API server back. */
  async start(): Promise<void> {
    const server = createServer((req, res) => this.handle(req, res));
    server.on("connection", (s) => {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Closes the port and cuts every connection: the API server down. Objects and history stay. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.watchers.clear();
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The current global resourceVersion. */
  resourceVersion(): string {
    return String(this.rv);
  }

  addPod(spec: FakePodSpec): void {
    this.put("pods", fakePod(spec));
  }

  updatePod(name: string, patch: FakePodPatch, namespace = "default"): void {
    this.put("pods", applyPodPatch(this.get("pods", namespace, name), patch));
  }

  /** Marks the pod terminating (deletionTimestamp); it is gone after `graceMs`, or at removePod(). */
  deletePod(name: string, opts: { graceMs?: number; namespace?: string } = {}): void {
    const pod = structuredClone(this.get("pods", opts.namespace ?? "default", name));
    pod.metadata.deletionTimestamp = new Date().toISOString();
    pod.metadata.deletionGracePeriodSeconds = Math.ceil((opts.graceMs ?? 30_000) / 1000);
    this.put("pods", pod);
    if (opts.graceMs !== undefined) setTimeout(() => this.removePod(name, opts.namespace), opts.graceMs);
  }

  /** The pod gone (a DELETED event). */
  removePod(name: string, namespace = "default"): void {
    this.remove("pods", namespace, name);
  }

  setInferencePool(spec: FakePoolSpec): void {
    this.put("inferencepools", fakeInferencePool(spec));
  }

  deleteInferencePool(name: string, namespace = "default"): void {
    this.remove("inferencepools", namespace, name);
  }

  /** Cuts every watch connection (no clean end); changes made before the clients rewatch wait in history. */
  dropWatches(): void {
    for (const w of this.watchers) w.res.destroy();
    this.watchers.clear();
  }

  /** Forgets the history: the next watch from any version older than the current one gets 410. */
  compactHistory(): void {
    this.history = [];
    this.compactedRv = this.rv;
  }

  /**
   * Runs `change` with its events lost: the store changes, but open watches are not told and the history
   * does not keep them (a missed delete that only a relist repairs).
   */
  silently(change: () => void): void {
    this.muted = true;
    try {
      change();
    } finally {
      this.muted = false;
    }
  }

  /** A BOOKMARK at the current version to every watch that allowed them. */
  sendBookmark(): void {
    for (const w of this.watchers) {
      if (!w.bookmarks) continue;
      const kind = w.resource === "pods" ? "Pod" : "InferencePool";
      const apiVersion = w.resource === "pods" ? "v1" : "inference.networking.k8s.io/v1";
      w.res.write(
        `${JSON.stringify({ type: "BOOKMARK", object: { kind, apiVersion, metadata: { resourceVersion: this.resourceVersion() } } })}\n`,
      );
    }
  }

  /** How many watches are open now. */
  openWatches(): number {
    return this.watchers.size;
  }

  /** The requests for `resource` that were lists (`watch` false) or watches. */
  requestsOf(resource: FakeResource, watch: boolean): FakeRequest[] {
    return this.requests.filter((r) => r.resource === resource && r.watch === watch);
  }

  private key(resource: FakeResource, namespace: string, name: string): string {
    return `${resource}/${namespace}/${name}`;
  }

  private get(resource: FakeResource, namespace: string, name: string): FakeObject {
    const obj = this.objects.get(this.key(resource, namespace, name));
    if (!obj) throw new Error(`fake-kube-api: no ${resource} ${namespace}/${name}`);
    return obj;
  }

  private put(resource: FakeResource, obj: FakeObject): void {
    const k = this.key(resource, obj.metadata.namespace, obj.metadata.name);
    const before = this.objects.get(k) ?? null;
    const after = structuredClone(obj);
    after.metadata.resourceVersion = String(++this.rv);
    after.metadata.uid = before?.metadata.uid ?? `uid-${this.rv}`;
    after.metadata.creationTimestamp = before?.metadata.creationTimestamp ?? new Date().toISOString();
    this.objects.set(k, after);
    this.record({ rv: this.rv, resource, namespace: obj.metadata.namespace, before, after, object: after });
  }

  private remove(resource: FakeResource, namespace: string, name: string): void {
    const before = this.get(resource, namespace, name);
    this.objects.delete(this.key(resource, namespace, name));
    const object = structuredClone(before);
    object.metadata.resourceVersion = String(++this.rv);
    this.record({ rv: this.rv, resource, namespace, before, after: null, object });
  }

  private record(change: Change): void {
    if (this.muted) return;
    this.history.push(change);
    while (this.history.length > this.historyLimit)
      this.compactedRv = this.history.shift()?.rv ?? this.compactedRv;
    for (const w of this.watchers) this.deliver(w, change);
  }

  /** The objects of `w`'s resource and namespace that pass its selectors, by name. */
  private scoped(w: Watcher): FakeObject[] {
    const prefix = `${w.resource}/${w.namespace}/`;
    return [...this.objects.entries()]
      .filter(([k, o]) => k.startsWith(prefix) && this.matches(w, o))
      .map(([, o]) => o)
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  }

  private matches(w: Watcher, obj: FakeObject | null): boolean {
    return (
      obj !== null && matchesLabelSelector(obj, w.labelSelector) && matchesFieldSelector(obj, w.fieldSelector)
    );
  }

  /** The event `change` is for `w`: as the API server does, an object leaving the selector is DELETED. */
  private deliver(w: Watcher, change: Change): void {
    if (change.resource !== w.resource || change.namespace !== w.namespace) return;
    const was = this.matches(w, change.before);
    const is = this.matches(w, change.after);
    const type = is ? (was ? "MODIFIED" : "ADDED") : was ? "DELETED" : null;
    if (type) w.res.write(`${JSON.stringify({ type, object: change.object })}\n`);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "/", "http://fake");
    const query = Object.fromEntries(url.searchParams);
    const route = ROUTE.exec(url.pathname);
    const resource = (route?.[2] as FakeResource | undefined) ?? null;
    const watch = query.watch === "1" || query.watch === "true";
    this.requests.push({ resource, watch, query });
    if (req.headers.authorization !== `Bearer ${this.token}`)
      return status(res, 401, "Unauthorized", "Unauthorized");
    if (req.method !== "GET")
      return status(res, 405, "MethodNotAllowed", `${req.method} is not served by the fake`);
    if (!route || !resource) return status(res, 404, "NotFound", `the server could not find ${url.pathname}`);
    const namespace = decodeURIComponent(route[1] ?? "");
    const name = route[3] ? decodeURIComponent(route[3]) : null;
    if (name !== null) {
      const obj = this.objects.get(this.key(resource, namespace, name));
      if (!obj) return status(res, 404, "NotFound", `${resource} "${name}" not found`);
      return json(res, 200, obj);
    }
    const w: Watcher = {
      resource,
      namespace,
      labelSelector: query.labelSelector ?? null,
      fieldSelector: query.fieldSelector ?? null,
      bookmarks: query.allowWatchBookmarks === "true",
      res,
    };
    if (watch) return this.watch(w, query.resourceVersion ?? "", Number(query.timeoutSeconds ?? 0));
    const items = this.scoped(w);
    const kind = resource === "pods" ? "PodList" : "InferencePoolList";
    json(res, 200, { kind, apiVersion: "v1", metadata: { resourceVersion: this.resourceVersion() }, items });
  }

  private watch(w: Watcher, fromRv: string, timeoutSeconds: number): void {
    const from = Number(fromRv);
    if (fromRv !== "" && fromRv !== "0" && from < this.compactedRv) {
      const message = `too old resource version: ${fromRv} (${this.compactedRv})`;
      if (this.goneAs === "status") return status(w.res, 410, "Expired", message);
      w.res.writeHead(200, { "Content-Type": "application/json" });
      w.res.end(`${JSON.stringify({ type: "ERROR", object: statusBody(410, "Expired", message) })}\n`);
      return;
    }
    w.res.writeHead(200, { "Content-Type": "application/json" });
    w.res.flushHeaders();
    if (fromRv === "" || fromRv === "0") {
      for (const o of this.scoped(w)) w.res.write(`${JSON.stringify({ type: "ADDED", object: o })}\n`);
    } else {
      for (const c of this.history) if (c.rv > from) this.deliver(w, c);
    }
    this.watchers.add(w);
    const ends = timeoutSeconds > 0 && !this.ignoreWatchTimeout;
    const timer = ends ? setTimeout(() => w.res.end(), timeoutSeconds * 1000) : null;
    w.res.on("close", () => {
      if (timer) clearTimeout(timer);
      this.watchers.delete(w);
    });
  }
}

function statusBody(code: number, reason: string, message: string): object {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code };
}

function status(res: ServerResponse, code: number, reason: string, message: string): void {
  json(res, code, statusBody(code, reason, message));
}

function json(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}
