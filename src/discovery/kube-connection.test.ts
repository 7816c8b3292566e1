// Pins how discovery reaches the API: a kubeconfig file works (server, token, namespace), the in-cluster
// service account is chosen when KUBERNETES_SERVICE_HOST is set, and failures carry stable codes:
// a missing file, refused credentials, an API server that is not there.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { FakeKubeApi } from "../testing/fake-kube-api.js";
import { writeKubeconfig } from "../testing/fake-kube-api-objects.js";
import { DiscoveryError } from "./discovery-error.js";
import { KubeConnection, kubeNamespace, loadKubeConfig } from "./kube-connection.js";

describe("kube-connection", () => {
  let api: FakeKubeApi;
  let dir: string;
  before(async () => {
    api = await FakeKubeApi.start();
    dir = mkdtempSync(join(tmpdir(), "tokengate-kube-"));
  });
  after(async () => {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("lists through a kubeconfig file with its server, bearer token and namespace", async () => {
    api.addPod({ name: "p1", ip: "10.0.0.1", labels: { app: "vllm" } });
    const kc = loadKubeConfig({ kubeconfig: writeKubeconfig(dir, api.url, api.token, "llm") });
    assert.equal(kubeNamespace(kc), "llm");
    const conn = new KubeConnection(kc);
    assert.equal(conn.server, api.url);
    const list = (await conn.getJson(
      "/api/v1/namespaces/default/pods",
      { labelSelector: "app=vllm" },
      { idleMs: 5000 },
    )) as {
      items: { metadata: { name: string } }[];
      metadata: { resourceVersion: string };
    };
    assert.deepEqual(
      list.items.map((p) => p.metadata.name),
      ["p1"],
    );
    assert.equal(list.metadata.resourceVersion, api.resourceVersion());
  });

  it("chooses the in-cluster service account when KUBERNETES_SERVICE_HOST is set", () => {
    const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
    process.env.KUBERNETES_SERVICE_HOST = "10.96.0.1";
    process.env.KUBERNETES_SERVICE_PORT = "443";
    try {
      assert.equal(new KubeConnection(loadKubeConfig({})).server, "https://10.96.0.1:443");
    } finally {
      for (const [k, v] of [
        ["KUBERNETES_SERVICE_HOST", saved.host],
        ["KUBERNETES_SERVICE_PORT", saved.port],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it("fails with kubeconfig_invalid for a missing file, kube_api_status for a refused token or a missing object", async () => {
    assert.throws(
      () => loadKubeConfig({ kubeconfig: join(dir, "missing") }),
      (e) => e instanceof DiscoveryError && e.code === "kubeconfig_invalid",
    );
    const conn = KubeConnection.load({ kubeconfig: writeKubeconfig(dir, api.url, "wrong-token") });
    await assert.rejects(
      conn.getJson("/api/v1/namespaces/default/pods", {}, { idleMs: 5000 }),
      (e) =>
        e instanceof DiscoveryError &&
        e.code === "kube_api_status" &&
        e.status === 401 &&
        /refused/.test(e.message),
    );
    const good = KubeConnection.load({ kubeconfig: writeKubeconfig(dir, api.url, api.token) });
    await assert.rejects(
      good.getJson("/api/v1/namespaces/default/pods/nobody", {}, { idleMs: 5000 }),
      (e) => e instanceof DiscoveryError && e.code === "kube_api_status" && e.status === 404,
    );
  });

  it("fails with kube_api_unreachable when nothing listens", async () => {
    const gone = await FakeKubeApi.start();
    await gone.stop();
    const conn = KubeConnection.load({ kubeconfig: writeKubeconfig(dir, gone.url, gone.token) });
    await assert.rejects(
      conn.getJson("/api/v1/namespaces/default/pods", {}, { idleMs: 5000 }),
      (e) => e instanceof DiscoveryError && e.code === "kube_api_unreachable" && e.message.includes(gone.url),
    );
  });
});
