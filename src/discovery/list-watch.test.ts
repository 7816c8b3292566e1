// Pins the list-then-watch loop against the fake API server: a bookmark advances the resourceVersion (so
// a rewatch after the history is compacted needs no relist), a watch the server ends is resumed from its
// version, a 410 relists, and the periodic relist repairs a lost delete.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it, type TestContext } from "node:test";
import { until } from "../testing/batch-jobs.js";
import { FakeKubeApi, type FakeKubeApiOptions } from "../testing/fake-kube-api.js";
import { writeKubeconfig } from "../testing/fake-kube-api-objects.js";
import { KubeConnection } from "./kube-connection.js";
import { decodePod, type PodFacts } from "./kube-objects.js";
import { ListWatch, type ListWatchNotice, type ListWatchOptions } from "./list-watch.js";

async function setup(
  t: TestContext,
  over: Partial<ListWatchOptions<PodFacts>> = {},
  apiOpts: FakeKubeApiOptions = {},
): Promise<{ api: FakeKubeApi; lw: ListWatch<PodFacts>; notices: ListWatchNotice[]; names: () => string[] }> {
  const api = await FakeKubeApi.start(apiOpts);
  const dir = mkdtempSync(join(tmpdir(), "tokengate-kube-"));
  api.addPod({ name: "a", ip: "10.0.0.1", labels: { app: "vllm" } });
  const notices: ListWatchNotice[] = [];
  const lw = new ListWatch<PodFacts>({
    connection: KubeConnection.load({ kubeconfig: writeKubeconfig(dir, api.url, api.token) }),
    path: "/api/v1/namespaces/default/pods",
    query: { labelSelector: "app=vllm" },
    decode: decodePod,
    onChange: () => {},
    onNotice: (n) => notices.push(n),
    retry: { initialMs: 20, maxMs: 200 },
    ...over,
  });
  t.after(async () => {
    await lw.stop();
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  lw.start();
  await until("the first list", () => (lw.status().synced ? true : null), 5000);
  await until("the watch", () => (api.openWatches() === 1 ? true : null), 5000);
  return { api, lw, notices, names: () => [...lw.items().keys()].sort() };
}

describe("ListWatch", () => {
  it("lists, then applies watch events in order", async (t) => {
    const { api, lw, names } = await setup(t);
    assert.deepEqual(names(), ["a"]);
    api.addPod({ name: "b", ip: "10.0.0.2", labels: { app: "vllm" } });
    api.updatePod("a", { ready: false });
    api.addPod({ name: "other", ip: "10.0.0.3", labels: { app: "sglang" } });
    await until("b and a's change", () =>
      names().join() === "a,b" && lw.items().get("a")?.ready === false ? true : null,
    );
    api.updatePod("b", { labels: { app: "sglang" } });
    await until("b deselected (DELETED by the server)", () => (names().join() === "a" ? true : null));
    assert.equal(lw.status().resourceVersion, api.resourceVersion());
  });

  it("takes a bookmark's resourceVersion, so a rewatch after the history is compacted needs no relist", async (t) => {
    const { api, lw, names } = await setup(t);
    const listed = lw.status().resourceVersion;
    api.addPod({ name: "elsewhere-1", namespace: "other", ip: "10.1.0.1", labels: { app: "vllm" } });
    api.addPod({ name: "unselected", ip: "10.1.0.2", labels: { app: "sglang" } });
    assert.notEqual(api.resourceVersion(), listed);
    api.sendBookmark();
    await until("the bookmark's version", () =>
      lw.status().resourceVersion === api.resourceVersion() ? true : null,
    );
    const bookmarked = api.resourceVersion();
    api.compactHistory();
    api.dropWatches();
    await until("a rewatch from the bookmark", () =>
      api.requestsOf("pods", true).some((r) => r.query.resourceVersion === bookmarked) &&
      api.openWatches() === 1
        ? true
        : null,
    );
    assert.equal(api.requestsOf("pods", false).length, 1, "no relist");
    api.addPod({ name: "c", ip: "10.0.0.3", labels: { app: "vllm" } });
    await until("c", () => (names().join() === "a,c" ? true : null));
    assert.deepEqual(
      api.requestsOf("pods", true).map((r) => r.query.allowWatchBookmarks),
      api.requestsOf("pods", true).map(() => "true"),
    );
  });

  it("resumes a watch the server ended (timeoutSeconds) from its version, without a relist", async (t) => {
    const { api, names } = await setup(t, { watchTimeoutSeconds: 1 });
    await until("a second watch", () =>
      api.requestsOf("pods", true).length >= 2 && api.openWatches() === 1 ? true : null,
    );
    api.addPod({ name: "b", ip: "10.0.0.2", labels: { app: "vllm" } });
    await until("b", () => (names().join() === "a,b" ? true : null));
    assert.equal(api.requestsOf("pods", false).length, 1);
  });

  it("takes a watch silent past its timeout for a half-open connection, and rewatches from its version", async (t) => {
    const { api, notices } = await setup(
      t,
      { watchTimeoutSeconds: 1, requestTimeoutMs: 300 },
      { ignoreWatchTimeout: true },
    );
    const rv = api.resourceVersion();
    await until("a second watch", () => (api.requestsOf("pods", true).length >= 2 ? true : null));
    assert.ok(notices.some((n) => n.kind === "watch-lost" && /silent/.test(n.error)));
    assert.equal(api.requestsOf("pods", true)[1]?.query.resourceVersion, rv);
    assert.equal(api.requestsOf("pods", false).length, 1);
  });

  for (const goneAs of ["event", "status"] as const) {
    it(`relists on 410 Gone sent as ${goneAs === "event" ? "an ERROR event" : "the HTTP status"}`, async (t) => {
      const { api, lw, notices, names } = await setup(t, {}, { goneAs });
      api.dropWatches();
      api.removePod("a");
      api.addPod({ name: "b", ip: "10.0.0.2", labels: { app: "vllm" } });
      api.compactHistory();
      await until("the relisted set", () => (names().join() === "b" && lw.status().synced ? true : null));
      assert.equal(api.requestsOf("pods", false).length, 2);
      assert.ok(notices.some((n) => n.kind === "relist" && n.reason === "expired"));
      assert.equal(lw.status().resourceVersion, api.resourceVersion());
    });
  }

  it("relists every relistMs, which repairs a delete the watch never delivered", async (t) => {
    const { api, lw, notices, names } = await setup(t, { relistMs: 400 });
    api.silently(() => api.removePod("a"));
    await until("the periodic relist", () => (names().length === 0 ? true : null));
    assert.ok(notices.some((n) => n.kind === "relist" && n.reason === "periodic"));
    assert.ok(lw.status().synced);
  });
});
