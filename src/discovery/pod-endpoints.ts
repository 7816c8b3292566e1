// From an InferencePool's pods to the gateway's endpoints, pure: one endpoint per pod and target port; a
// pod serves once it is Running with an IP and Ready=True; an endpoint that was serving drains (its
// streams finish, no new requests) when its pod turns not-ready or gets a deletionTimestamp, and leaves
// when the pod is gone, deselected, stopped, or has lost its IP or the port.

import { isIPv6 } from "node:net";
import { type AppProtocol, matchesLabels, type PodFacts, type PoolSelection } from "./kube-objects.js";

/** One discovered endpoint: a pod's IP and one of the pool's target ports. */
export interface DiscoveredEndpoint {
  /** `http://ip:port` for both app protocols (h2c is cleartext too); IPv6 in brackets. */
  readonly url: string;
  /** `ip:port`. */
  readonly address: string;
  /** The pod's name. */
  readonly pod: string;
  readonly port: number;
  /** `kubernetes.io/h2c`: speak HTTP/2 with prior knowledge. */
  readonly appProtocol: AppProtocol;
  /** `draining`: finish its streams, send it nothing new. */
  readonly state: "ready" | "draining";
}

/** One change between two endpoint sets, with the reason for logs. */
export interface EndpointChange {
  readonly kind: "added" | "draining" | "removed";
  readonly endpoint: DiscoveredEndpoint;
  /**
   * added: `ready` | `ready-again`; draining: `deleting` | `not-ready`; removed: `pod-gone` | `deselected` |
   * `port-removed` | `address-changed` | `pod-<phase>` (stopped: `pod-failed`, `pod-succeeded`).
   */
  readonly reason: string;
}

function hostPort(ip: string, port: number): string {
  return isIPv6(ip) ? `[${ip}]:${port}` : `${ip}:${port}`;
}

function key(e: { pod: string; address: string }): string {
  return `${e.pod} ${e.address}`;
}

/** Whether the pod has an address that takes traffic (it may still be not ready). */
function running(pod: PodFacts): pod is PodFacts & { podIP: string } {
  return pod.phase === "Running" && pod.podIP !== null;
}

/** Whether the pod may get new requests. */
export function podServes(pod: PodFacts): boolean {
  return running(pod) && pod.ready && !pod.deleting;
}

/**
 * The endpoints of `pods` under `selection`, sorted by pod then port. `previous` (the last result) decides
 * which not-serving pods drain: only those that were endpoints already.
 */
export function selectEndpoints(
  pods: Iterable<PodFacts>,
  selection: PoolSelection,
  previous: readonly DiscoveredEndpoint[],
): DiscoveredEndpoint[] {
  const before = new Set(previous.map(key));
  const out: DiscoveredEndpoint[] = [];
  for (const pod of pods) {
    if (!running(pod) || !matchesLabels(pod.labels, selection.matchLabels)) continue;
    const serves = podServes(pod);
    for (const port of selection.targetPorts) {
      const address = hostPort(pod.podIP, port);
      if (!serves && !before.has(key({ pod: pod.name, address }))) continue;
      out.push({
        url: `http://${address}`,
        address,
        pod: pod.name,
        port,
        appProtocol: selection.appProtocol,
        state: serves ? "ready" : "draining",
      });
    }
  }
  return out.sort((a, b) => (a.pod < b.pod ? -1 : a.pod > b.pod ? 1 : a.port - b.port));
}

function removalReason(e: DiscoveredEndpoint, pod: PodFacts | undefined, selection: PoolSelection): string {
  if (!pod) return "pod-gone";
  if (!matchesLabels(pod.labels, selection.matchLabels)) return "deselected";
  if (pod.phase !== "Running") return `pod-${(pod.phase || "unknown").toLowerCase()}`;
  if (!selection.targetPorts.includes(e.port)) return "port-removed";
  return "address-changed";
}

/** What changed from `previous` to `next` (both from selectEndpoints), with reasons from `pods`. */
export function endpointChanges(
  previous: readonly DiscoveredEndpoint[],
  next: readonly DiscoveredEndpoint[],
  pods: ReadonlyMap<string, PodFacts>,
  selection: PoolSelection,
): EndpointChange[] {
  const was = new Map(previous.map((e) => [key(e), e]));
  const now = new Map(next.map((e) => [key(e), e]));
  const changes: EndpointChange[] = [];
  for (const e of previous) {
    if (!now.has(key(e)))
      changes.push({ kind: "removed", endpoint: e, reason: removalReason(e, pods.get(e.pod), selection) });
  }
  for (const e of next) {
    const before = was.get(key(e));
    if (e.state === "ready" && before?.state !== "ready") {
      changes.push({ kind: "added", endpoint: e, reason: before ? "ready-again" : "ready" });
    } else if (e.state === "draining" && before?.state === "ready") {
      changes.push({
        kind: "draining",
        endpoint: e,
        reason: pods.get(e.pod)?.deleting ? "deleting" : "not-ready",
      });
    }
  }
  return changes;
}

/** Whether two results of selectEndpoints are the same set. */
export function sameEndpoints(a: readonly DiscoveredEndpoint[], b: readonly DiscoveredEndpoint[]): boolean {
  return (
    a.length === b.length &&
    a.every((e, i) => {
      const o = b[i];
      return (
        o !== undefined &&
        o.url === e.url &&
        o.pod === e.pod &&
        o.state === e.state &&
        o.appProtocol === e.appProtocol
      );
    })
  );
}
