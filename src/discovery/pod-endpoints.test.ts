// Pins the pod-to-endpoint rules: only Running pods with an IP and Ready=True enter, one endpoint per
// target port; an endpoint drains when its pod turns not-ready or terminating and leaves when the pod is
// gone, deselected, stopped or has lost the port; and the InferencePool spec is read as v1 defines it.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  decodePod,
  decodePoolSelection,
  labelSelector,
  type PodFacts,
  type PoolSelection,
} from "./kube-objects.js";
import { type DiscoveredEndpoint, endpointChanges, selectEndpoints } from "./pod-endpoints.js";

const selection: PoolSelection = { matchLabels: { app: "vllm" }, targetPorts: [8000], appProtocol: "http" };

function pod(name: string, over: Partial<PodFacts> = {}): PodFacts {
  return {
    name,
    resourceVersion: "1",
    labels: { app: "vllm" },
    phase: "Running",
    podIP: `10.0.0.${name.charCodeAt(0) - 96}`,
    ready: true,
    deleting: false,
    ...over,
  };
}

function brief(eps: readonly DiscoveredEndpoint[]): string[] {
  return eps.map((e) => `${e.pod} ${e.url} ${e.state}`);
}

describe("selectEndpoints", () => {
  it("admits only Running pods with an IP and Ready=True, one endpoint per target port, sorted by pod then port", () => {
    const pods = [
      pod("b"),
      pod("a"),
      pod("c", { podIP: null }),
      pod("d", { phase: "Pending" }),
      pod("e", { ready: false }),
      pod("f", { deleting: true }),
      pod("g", { labels: { app: "other" } }),
    ];
    const eps = selectEndpoints(pods, { ...selection, targetPorts: [8001, 8000] }, []);
    assert.deepEqual(brief(eps), [
      "a http://10.0.0.1:8000 ready",
      "a http://10.0.0.1:8001 ready",
      "b http://10.0.0.2:8000 ready",
      "b http://10.0.0.2:8001 ready",
    ]);
    assert.deepEqual(
      { address: eps[0]?.address, port: eps[0]?.port, appProtocol: eps[0]?.appProtocol },
      { address: "10.0.0.1:8000", port: 8000, appProtocol: "http" },
    );
  });

  it("keeps an h2c pool's URLs http:// and brackets IPv6 addresses", () => {
    const eps = selectEndpoints(
      [pod("a", { podIP: "fd00::7" })],
      { ...selection, appProtocol: "kubernetes.io/h2c" },
      [],
    );
    assert.deepEqual(eps, [
      {
        url: "http://[fd00::7]:8000",
        address: "[fd00::7]:8000",
        pod: "a",
        port: 8000,
        appProtocol: "kubernetes.io/h2c",
        state: "ready",
      },
    ]);
  });

  it("drains an endpoint whose pod turns not-ready or terminating, but never admits a not-ready pod as draining", () => {
    const before = selectEndpoints([pod("a"), pod("b")], selection, []);
    const pods = new Map([
      ["a", pod("a", { ready: false })],
      ["b", pod("b", { deleting: true })],
      ["c", pod("c", { ready: false })],
    ]);
    const after = selectEndpoints(pods.values(), selection, before);
    assert.deepEqual(brief(after), ["a http://10.0.0.1:8000 draining", "b http://10.0.0.2:8000 draining"]);
    assert.deepEqual(
      endpointChanges(before, after, pods, selection).map((c) => `${c.kind} ${c.endpoint.pod} ${c.reason}`),
      ["draining a not-ready", "draining b deleting"],
    );
    const again = selectEndpoints([pod("a"), pod("b", { deleting: true })], selection, after);
    assert.deepEqual(brief(again), ["a http://10.0.0.1:8000 ready", "b http://10.0.0.2:8000 draining"]);
    assert.deepEqual(
      endpointChanges(after, again, new Map([["a", pod("a")]]), selection).map(
        (c) => `${c.kind} ${c.reason}`,
      ),
      ["added ready-again"],
    );
  });

  it("removes endpoints with the reason: pod gone, deselected, stopped, port removed, address changed", () => {
    const all = [pod("a"), pod("b"), pod("c"), pod("d"), pod("e")];
    const before = selectEndpoints(all, { ...selection, targetPorts: [8000, 9000] }, []);
    const pods = new Map([
      ["b", pod("b", { labels: { app: "other" } })],
      ["c", pod("c", { phase: "Failed" })],
      ["d", pod("d")],
      ["e", pod("e", { podIP: "10.0.9.9" })],
    ]);
    const after = selectEndpoints(pods.values(), selection, before);
    const removed = endpointChanges(before, after, pods, selection)
      .filter((c) => c.kind === "removed")
      .map((c) => `${c.endpoint.pod}:${c.endpoint.port} ${c.reason}`);
    assert.deepEqual(removed, [
      "a:8000 pod-gone",
      "a:9000 pod-gone",
      "b:8000 deselected",
      "b:9000 deselected",
      "c:8000 pod-failed",
      "c:9000 pod-failed",
      "d:9000 port-removed",
      "e:8000 address-changed",
      "e:9000 port-removed",
    ]);
    assert.deepEqual(brief(after), ["d http://10.0.0.4:8000 ready", "e http://10.0.9.9:8000 ready"]);
  });
});

describe("kube-objects", () => {
  it("reads a pod's phase, IP, Ready condition and deletionTimestamp", () => {
    const facts = decodePod({
      metadata: {
        name: "p",
        resourceVersion: "7",
        labels: { app: "vllm" },
        deletionTimestamp: "2026-01-01T00:00:00Z",
      },
      status: { phase: "Running", podIP: "10.1.2.3", conditions: [{ type: "Ready", status: "True" }] },
    });
    assert.deepEqual(facts, {
      name: "p",
      resourceVersion: "7",
      labels: { app: "vllm" },
      phase: "Running",
      podIP: "10.1.2.3",
      ready: true,
      deleting: true,
    });
    assert.equal(decodePod({ metadata: {} }), null);
    assert.equal(
      decodePod({ metadata: { name: "q" }, status: { conditions: [{ type: "Ready", status: "False" }] } })
        ?.ready,
      false,
    );
  });

  it("reads a v1 InferencePool spec: matchLabels, 1-8 distinct target ports, appProtocol http by default", () => {
    const spec = (over: object) => ({
      selector: { matchLabels: { app: "vllm" } },
      targetPorts: [{ number: 8000 }],
      ...over,
    });
    assert.deepEqual(decodePoolSelection(spec({})), {
      matchLabels: { app: "vllm" },
      targetPorts: [8000],
      appProtocol: "http",
    });
    assert.equal(
      (decodePoolSelection(spec({ appProtocol: "kubernetes.io/h2c" })) as PoolSelection).appProtocol,
      "kubernetes.io/h2c",
    );
    assert.match(String(decodePoolSelection(spec({ selector: { matchLabels: {} } }))), /matchLabels/);
    assert.match(String(decodePoolSelection(spec({ targetPorts: [] }))), /1 to 8/);
    const nine = Array.from({ length: 9 }, (_, i) => ({ number: 8000 + i }));
    assert.match(String(decodePoolSelection(spec({ targetPorts: nine }))), /1 to 8/);
    assert.match(String(decodePoolSelection(spec({ targetPorts: [{ number: 1 }, { number: 1 }] }))), /twice/);
    assert.match(String(decodePoolSelection(spec({ targetPorts: [{ number: 70000 }] }))), /65535/);
    assert.match(String(decodePoolSelection(spec({ appProtocol: "grpc" }))), /appProtocol/);
    assert.equal(labelSelector({ b: "2", a: "1" }), "a=1,b=2");
  });
});
