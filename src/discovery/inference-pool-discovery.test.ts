// Pins what the gateway gets from InferencePoolDiscovery against the fake API server: Ready pods enter,
// one endpoint per target port; not-ready and terminating pods drain, deleted ones leave; a cut watch or a
// 410 loses no change; an unreachable API server keeps the last endpoints and says so; a changed pool
// re-selects; a missing pool makes start() fail clearly while discovery goes on trying.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it, type TestContext } from "node:test";
import { until } from "../testing/batch-jobs.js";
import { FakeKubeApi, type FakeKubeApiOptions } from "../testing/fake-kube-api.js";
import { writeKubeconfig } from "../testing/fake-kube-api-objects.js";
import { DiscoveryError } from "./discovery-error.js";
import { InferencePoolDiscovery, type InferencePoolDiscoveryOptions } from "./inference-pool-discovery.js";
import type { DiscoveredEndpoint } from "./pod-endpoints.js";

interface Seen {
  api: FakeKubeApi;
  d: InferencePoolDiscovery;
  changes: (readonly DiscoveredEndpoint[])[];
  events: { event: string; fields: Record<string, unknown> }[];
  /** `pod address state` of the current endpoints. */
  now: () => string[];
  /** Waits until the current endpoints are `want`. */
  settle: (want: string[]) => Promise<void>;
}

async function setup(
  t: TestContext,
  opts: {
    pool?: boolean;
    ports?: number[];
    api?: FakeKubeApiOptions;
    discovery?: Partial<InferencePoolDiscoveryOptions>;
  } = {},
): Promise<Seen> {
  const api = await FakeKubeApi.start(opts.api);
  const dir = mkdtempSync(join(tmpdir(), "tokengate-kube-"));
  if (opts.pool !== false) {
    api.setInferencePool({
      name: "vllm-7b",
      matchLabels: { app: "vllm" },
      targetPorts: opts.ports ?? [8000],
    });
  }
  const changes: (readonly DiscoveredEndpoint[])[] = [];
  const events: Seen["events"] = [];
  const d = new InferencePoolDiscovery({
    namespace: "default",
    inferencePool: "vllm-7b",
    kubeconfig: writeKubeconfig(dir, api.url, api.token),
    onChange: (eps) => changes.push(eps),
    onEvent: (event, fields) => events.push({ event, fields }),
    retry: { initialMs: 20, maxMs: 200 },
    startTimeoutMs: 5000,
    ...opts.discovery,
  });
  t.after(async () => {
    await d.stop();
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const now = () => d.current().map((e) => `${e.pod} ${e.address} ${e.state}`);
  const settle = async (want: string[]) => {
    try {
      await until(
        want.join(", ") || "no endpoints",
        () => (now().join() === want.join() ? true : null),
        10_000,
      );
    } catch (err) {
      assert.deepEqual(now(), want, (err as Error).message);
    }
  };
  return { api, d, changes, events, now, settle };
}

const vllm = { labels: { app: "vllm" } };

/** Both watches (pool and pods) are open at the fake. */
function watching(s: Seen): Promise<true> {
  return until("both watches", () => (s.api.openWatches() === 2 ? true : null));
}

function eventsNamed(s: Seen, name: string): Record<string, unknown>[] {
  return s.events.filter((e) => e.event === name).map((e) => e.fields);
}

describe("InferencePoolDiscovery", () => {
  it("admits Running pods with an IP and Ready=True, one endpoint per target port, only from the pool's namespace", async (t) => {
    const s = await setup(t, { ports: [8000, 8001] });
    s.api.addPod({ name: "a", ip: "10.0.0.1", ...vllm });
    s.api.addPod({ name: "b", ip: null, phase: "Pending", ...vllm });
    s.api.addPod({ name: "c", ip: "10.0.0.3", ready: false, ...vllm });
    s.api.addPod({ name: "d", ip: "10.0.0.4", phase: "Succeeded", ready: false, ...vllm });
    s.api.addPod({ name: "e", ip: "10.0.0.5", labels: { app: "sglang" } });
    s.api.addPod({ name: "f", ip: "10.0.0.6", namespace: "other", ...vllm });
    await s.d.start();
    assert.deepEqual(s.now(), ["a 10.0.0.1:8000 ready", "a 10.0.0.1:8001 ready"]);
    assert.equal(s.changes.length, 1, "onChange once with the first set");
    assert.equal(s.d.current()[0]?.url, "http://10.0.0.1:8000");
    assert.deepEqual(s.d.status(), {
      synced: true,
      connected: true,
      lastSyncAt: s.d.status().lastSyncAt,
      error: null,
      endpoints: 2,
    });
    assert.equal(typeof s.d.status().lastSyncAt, "number");
    assert.equal(eventsNamed(s, "discovery.synced").length, 1);
    s.api.updatePod("b", { ip: "10.0.0.2", phase: "Running" });
    s.api.updatePod("c", { ready: true });
    await s.settle([
      "a 10.0.0.1:8000 ready",
      "a 10.0.0.1:8001 ready",
      "b 10.0.0.2:8000 ready",
      "b 10.0.0.2:8001 ready",
      "c 10.0.0.3:8000 ready",
      "c 10.0.0.3:8001 ready",
    ]);
    assert.deepEqual(s.changes.at(-1), s.d.current(), "onChange has the full, sorted set");
  });

  it("drains a pod that turns not-ready and serves it again when it is Ready", async (t) => {
    const s = await setup(t);
    s.api.addPod({ name: "a", ip: "10.0.0.1", ...vllm });
    await s.d.start();
    s.api.updatePod("a", { ready: false });
    await s.settle(["a 10.0.0.1:8000 draining"]);
    s.api.updatePod("a", { ready: true });
    await s.settle(["a 10.0.0.1:8000 ready"]);
    assert.deepEqual(
      s.events
        .filter((e) => e.event.startsWith("discovery.endpoint-"))
        .map((e) => `${e.event} ${e.fields.reason}`),
      [
        "discovery.endpoint-added ready",
        "discovery.endpoint-draining not-ready",
        "discovery.endpoint-added ready-again",
      ],
    );
  });

  it("drains a pod deleted mid-stream while it terminates, and removes it when it is gone", async (t) => {
    const s = await setup(t);
    s.api.addPod({ name: "a", ip: "10.0.0.1", ...vllm });
    s.api.addPod({ name: "b", ip: "10.0.0.2", ...vllm });
    await s.d.start();
    s.api.deletePod("a");
    await s.settle(["a 10.0.0.1:8000 draining", "b 10.0.0.2:8000 ready"]);
    assert.deepEqual(eventsNamed(s, "discovery.endpoint-draining"), [
      { pool: "default/vllm-7b", pod: "a", address: "10.0.0.1:8000", reason: "deleting" },
    ]);
    s.api.removePod("a");
    await s.settle(["b 10.0.0.2:8000 ready"]);
    assert.deepEqual(eventsNamed(s, "discovery.endpoint-removed"), [
      { pool: "default/vllm-7b", pod: "a", address: "10.0.0.1:8000", reason: "pod-gone" },
    ]);
  });

  it("sees every change made while its watch was cut once the watch resumes, without a relist", async (t) => {
    const s = await setup(t);
    s.api.addPod({ name: "a", ip: "10.0.0.1", ...vllm });
    s.api.addPod({ name: "b", ip: "10.0.0.2", ...vllm });
    await s.d.start();
    await watching(s);
    const rv = s.api.resourceVersion();
    s.api.dropWatches();
    s.api.removePod("a");
    s.api.updatePod("b", { ready: false });
    s.api.addPod({ name: "c", ip: "10.0.0.3", ...vllm });
    await s.settle(["b 10.0.0.2:8000 draining", "c 10.0.0.3:8000 ready"]);
    assert.ok(
      s.api.requestsOf("pods", true).some((r) => r.query.resourceVersion === rv),
      "rewatched from its version",
    );
    assert.equal(s.api.requestsOf("pods", false).length, 1, "no relist");
    assert.ok(eventsNamed(s, "discovery.watch-lost").length >= 1);
  });

  it("relists after 410 Gone and ends with the right set, a delete it never saw included", async (t) => {
    const s = await setup(t, { api: { historyLimit: 3 } });
    s.api.addPod({ name: "a", ip: "10.0.0.1", ...vllm });
    s.api.addPod({ name: "b", ip: "10.0.0.2", ...vllm });
    await s.d.start();
    await watching(s);
    s.api.dropWatches();
    s.api.removePod("a");
    for (const name of ["c", "d", "e"])
      s.api.addPod({ name, ip: `10.0.0.${name.charCodeAt(0) - 96}`, ...vllm });
    await s.settle([
      "b 10.0.0.2:8000 ready",
      "c 10.0.0.3:8000 ready",
      "d 10.0.0.4:8000 ready",
      "e 10.0.0.5:8000 ready",
    ]);
    assert.ok(
      eventsNamed(s, "discovery.relist").some((f) => f.resource === "pods" && f.reason === "expired"),
    );
    assert.equal(s.api.requestsOf("pods", false).length, 2);
    await until("synced again", () => (s.d.status().synced ? true : null));
  });

  it("keeps the last endpoints while the API server is down, says so, and catches up when it is back", async (t) => {
    const s = await setup(t);
    s.api.addPod({ name: "a", ip: "10.0.0.1", ...vllm });
    s.api.addPod({ name: "b", ip: "10.0.0.2", ...vllm });
    await s.d.start();
    await watching(s);
    await s.api.stop();
    await until("unreachable", () => (s.d.status().connected ? null : true));
    const down = s.d.status();
    assert.equal(down.synced, false);
    assert.match(down.error ?? "", /^kube_api_unreachable: .*keeping the last 2 known endpoints$/);
    assert.deepEqual(s.now(), ["a 10.0.0.1:8000 ready", "b 10.0.0.2:8000 ready"]);
    assert.equal(eventsNamed(s, "discovery.api-unreachable").length, 1);
    s.api.removePod("a");
    s.api.addPod({ name: "c", ip: "10.0.0.3", ...vllm });
    await s.api.start();
    await s.settle(["b 10.0.0.2:8000 ready", "c 10.0.0.3:8000 ready"]);
    await until("synced again", () => (s.d.status().synced ? true : null));
    assert.equal(s.d.status().error, null);
    assert.equal(eventsNamed(s, "discovery.api-back").length, 1);
    assert.equal(eventsNamed(s, "discovery.synced").length, 2);
  });

  it("re-selects when the InferencePool's selector or target ports change", async (t) => {
    const s = await setup(t);
    s.api.addPod({ name: "a", ip: "10.0.0.1", ...vllm });
    s.api.addPod({ name: "b", ip: "10.0.0.2", labels: { app: "sglang" } });
    await s.d.start();
    assert.deepEqual(s.now(), ["a 10.0.0.1:8000 ready"]);
    s.api.setInferencePool({ name: "vllm-7b", matchLabels: { app: "sglang" }, targetPorts: [8000] });
    await s.settle(["b 10.0.0.2:8000 ready"]);
    assert.deepEqual(
      eventsNamed(s, "discovery.endpoint-removed").map((f) => f.reason),
      ["deselected"],
    );
    assert.ok(eventsNamed(s, "discovery.relist").some((f) => f.reason === "selector-changed"));
    s.api.setInferencePool({
      name: "vllm-7b",
      matchLabels: { app: "sglang" },
      targetPorts: [9000, 9001],
      appProtocol: "kubernetes.io/h2c",
    });
    await s.settle(["b 10.0.0.2:9000 ready", "b 10.0.0.2:9001 ready"]);
    assert.deepEqual(
      s.d.current().map((e) => `${e.url} ${e.appProtocol}`),
      ["http://10.0.0.2:9000 kubernetes.io/h2c", "http://10.0.0.2:9001 kubernetes.io/h2c"],
    );
    assert.equal(eventsNamed(s, "discovery.endpoint-removed").at(-1)?.reason, "port-removed");
  });

  it("rejects start() clearly when the pool does not exist, keeps trying, and serves it once it is created", async (t) => {
    const s = await setup(t, { pool: false, discovery: { startTimeoutMs: 300 } });
    s.api.addPod({ name: "a", ip: "10.0.0.1", ...vllm });
    await assert.rejects(
      s.d.start(),
      (e) =>
        e instanceof DiscoveryError &&
        e.code === "discovery_start_timeout" &&
        /inference_pool_not_found/.test(e.message),
    );
    assert.match(s.d.status().error ?? "", /^inference_pool_not_found/);
    s.api.setInferencePool({ name: "vllm-7b", matchLabels: { app: "vllm" }, targetPorts: [8000] });
    await s.settle(["a 10.0.0.1:8000 ready"]);
    await until("synced", () => (s.d.status().synced ? true : null));
    s.api.deleteInferencePool("vllm-7b");
    await s.settle([]);
    assert.equal(eventsNamed(s, "discovery.endpoint-removed").at(-1)?.reason, "pool-deleted");
    assert.equal(s.d.status().synced, false);
  });
});
