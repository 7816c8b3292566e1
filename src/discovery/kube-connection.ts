// How discovery reaches the Kubernetes API: a KubeConfig from a kubeconfig file, from the pod's service
// account, or from the default places, and GETs through node:http/https with the KubeConfig's TLS and
// credentials applied to each request (so a rotated service-account token or an exec plugin's fresh token
// is used). The answers are raw: list bodies as JSON, watch bodies as a stream for watch-stream.ts.

import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { KubeConfig } from "@kubernetes/client-node";
import { DiscoveryError } from "./discovery-error.js";
import { decodeStatus } from "./kube-objects.js";

/** Where the Kubernetes credentials come from. */
export interface KubeConnectionOptions {
  /**
   * A kubeconfig file; null or absent: the pod's service account when running in a cluster
   * (KUBERNETES_SERVICE_HOST is set), else $KUBECONFIG or ~/.kube/config.
   */
  readonly kubeconfig?: string | null;
}

/** Larger list answers are refused rather than buffered (a pool's pods are far fewer). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Statuses that a proxy or load balancer in front of a down API server answers with. */
const UNREACHABLE_STATUSES = new Set([502, 503, 504]);

/**
 * The KubeConfig for `opts`: loadFromFile, loadFromCluster or loadFromDefault.
 * @throws DiscoveryError `kubeconfig_invalid` when none can be loaded or it names no cluster.
 */
export function loadKubeConfig(opts: KubeConnectionOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  const inCluster = !opts.kubeconfig && Boolean(process.env.KUBERNETES_SERVICE_HOST);
  const source = opts.kubeconfig
    ? `kubeconfig ${opts.kubeconfig}`
    : inCluster
      ? "the in-cluster service account"
      : "the default kubeconfig ($KUBECONFIG or ~/.kube/config)";
  try {
    if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
    else if (inCluster) kc.loadFromCluster();
    else kc.loadFromDefault();
  } catch (err) {
    throw new DiscoveryError("kubeconfig_invalid", `cannot load ${source}: ${(err as Error).message}`);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) {
    throw new DiscoveryError("kubeconfig_invalid", `${source} has no current context with a cluster server`);
  }
  // loadFromDefault's last resort when it finds nothing at all.
  if (
    !opts.kubeconfig &&
    !inCluster &&
    cluster.name === "cluster" &&
    cluster.server === "http://localhost:8080"
  ) {
    throw new DiscoveryError(
      "kubeconfig_invalid",
      "no Kubernetes credentials: not in a cluster (KUBERNETES_SERVICE_HOST unset), no $KUBECONFIG, no ~/.kube/config",
    );
  }
  return kc;
}

/** The namespace of the KubeConfig's current context (the pod's own in a cluster), else `default`. */
export function kubeNamespace(kc: KubeConfig): string {
  const ns = kc.getContextObject(kc.getCurrentContext())?.namespace?.trim();
  return ns ? ns : "default";
}

/** Query parameters of one GET; undefined values are left out. */
export type KubeQuery = Readonly<Record<string, string | undefined>>;

/** Per-request settings of a GET. */
export interface KubeRequestOptions {
  /** Aborts the request (and a watch's stream). */
  readonly signal?: AbortSignal;
  /** The socket may be idle this long before the request fails as unreachable. */
  readonly idleMs: number;
}

/** GETs against one API server with one KubeConfig's credentials. */
export class KubeConnection {
  /** The API server's base URL, e.g. `https://10.96.0.1:443`. */
  readonly server: string;

  constructor(private readonly kc: KubeConfig) {
    this.server = (kc.getCurrentCluster()?.server ?? "").replace(/\/+$/, "");
  }

  /** A connection with `loadKubeConfig(opts)`. */
  static load(opts: KubeConnectionOptions = {}): KubeConnection {
    return new KubeConnection(loadKubeConfig(opts));
  }

  /**
   * The JSON body of a 200 answer to GET `path`.
   * @throws DiscoveryError for no answer, an error status (410: `kube_resource_expired`) or a body that is not JSON.
   */
  async getJson(path: string, query: KubeQuery, opts: KubeRequestOptions): Promise<unknown> {
    const res = await this.open(path, query, opts);
    const body = await readBody(res, this.server);
    try {
      return JSON.parse(body);
    } catch {
      throw new DiscoveryError("kube_bad_response", `GET ${path}: the answer is not JSON`, 200);
    }
  }

  /**
   * The answer to GET `path` once it is 200, its body unread (a watch's event stream). The socket's
   * idle timeout stays armed: a stream silent for `idleMs` fails with `kube_api_unreachable`.
   * @throws DiscoveryError as getJson does.
   */
  async open(path: string, query: KubeQuery, opts: KubeRequestOptions): Promise<IncomingMessage> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
    const req: https.RequestOptions = { method: "GET", headers: { Accept: "application/json" } };
    try {
      await this.kc.applyToHTTPSOptions(req);
    } catch (err) {
      throw new DiscoveryError(
        "kubeconfig_invalid",
        `cannot apply the credentials: ${(err as Error).message}`,
      );
    }
    const res = await send(url, { ...req, signal: opts.signal }, opts.idleMs, this.server);
    if (res.statusCode === 200) return res;
    throw await statusError(res, `GET ${url.pathname}`, this.server);
  }
}

function unreachable(server: string, err: unknown): DiscoveryError {
  return new DiscoveryError(
    "kube_api_unreachable",
    `Kubernetes API ${server} unreachable: ${err instanceof Error ? err.message : String(err)}`,
  );
}

function send(
  url: URL,
  opts: https.RequestOptions,
  idleMs: number,
  server: string,
): Promise<IncomingMessage> {
  const client = url.protocol === "http:" ? http : https;
  return new Promise((resolve, reject) => {
    let answer: IncomingMessage | null = null;
    const req = client.request(url, opts, (res) => {
      answer = res;
      resolve(res);
    });
    req.on("error", (err) => reject(err.name === "AbortError" ? err : unreachable(server, err)));
    req.setTimeout(idleMs, () => {
      const silent = new Error(`silent for ${idleMs} ms`);
      // Once answered, the reader of the body is the one to tell.
      (answer as IncomingMessage | null)?.destroy(silent);
      req.destroy(silent);
    });
    req.end();
  });
}

function readBody(res: IncomingMessage, server: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        res.destroy();
        reject(new DiscoveryError("kube_bad_response", `an answer of more than ${MAX_BODY_BYTES} bytes`));
      } else chunks.push(c);
    });
    res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    res.on("error", (err) => reject(err.name === "AbortError" ? err : unreachable(server, err)));
    res.on("close", () => {
      if (!res.complete) reject(unreachable(server, new Error("the answer was cut")));
    });
  });
}

async function statusError(res: IncomingMessage, what: string, server: string): Promise<DiscoveryError> {
  const code = res.statusCode ?? 0;
  let detail = "";
  try {
    const status = decodeStatus(JSON.parse(await readBody(res, server)));
    detail = status?.message ?? "";
  } catch (err) {
    if ((err as Error).name === "AbortError") throw err;
    // A body that is not a Status: the code alone says enough.
  }
  const hint =
    code === 401
      ? " (the credentials were refused)"
      : code === 403
        ? " (RBAC: the gateway's service account needs get, list and watch on pods and inferencepools)"
        : code === 404 && what.includes("/inferencepools")
          ? " (is the InferencePool CRD, inference.networking.k8s.io/v1, installed?)"
          : "";
  const message = `${what}: ${code}${detail ? ` ${detail}` : ""}${hint}`;
  if (code === 410) return new DiscoveryError("kube_resource_expired", message, code);
  if (UNREACHABLE_STATUSES.has(code)) {
    return new DiscoveryError("kube_api_unreachable", `Kubernetes API ${server}: ${message}`, code);
  }
  return new DiscoveryError("kube_api_status", message, code);
}
