// Test fixture: the objects the fake Kubernetes API serves (pods and v1 InferencePools as the API server
// writes them), their label and field selectors, and a kubeconfig file that points at the fake.

import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** A Kubernetes object as JSON (only the fields the fake touches are typed). */
export interface FakeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    resourceVersion?: string;
    uid?: string;
    labels?: Record<string, string>;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** What a test says about a pod. */
export interface FakePodSpec {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  /** null: no IP yet. */
  ip?: string | null;
  /** Default `Running`. */
  phase?: string;
  /** The Ready condition; default true. */
  ready?: boolean;
}

/** A pod as the API server returns it; default namespace `default`, Running and Ready. */
export function fakePod(p: FakePodSpec): FakeObject {
  const pod: FakeObject = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: p.name, namespace: p.namespace ?? "default", labels: { ...(p.labels ?? {}) } },
    spec: { containers: [{ name: "engine", image: "vllm/vllm-openai" }] },
    status: {},
  };
  return applyPodPatch(pod, { ip: p.ip ?? null, phase: p.phase ?? "Running", ready: p.ready ?? true });
}

/** A change to a pod: the fields given replace the pod's. */
export type FakePodPatch = Omit<Partial<FakePodSpec>, "name" | "namespace">;

/** `pod` with `patch` applied (a new object). */
export function applyPodPatch(pod: FakeObject, patch: FakePodPatch): FakeObject {
  const next = structuredClone(pod);
  const status = next.status ?? {};
  if (patch.labels) next.metadata.labels = { ...patch.labels };
  if (patch.ip !== undefined) {
    if (patch.ip === null) delete status.podIP;
    else status.podIP = patch.ip;
  }
  if (patch.phase !== undefined) status.phase = patch.phase;
  if (patch.ready !== undefined) {
    status.conditions = [
      { type: "PodScheduled", status: "True" },
      { type: "Ready", status: patch.ready ? "True" : "False" },
    ];
  }
  next.status = status;
  return next;
}

/** What a test says about an InferencePool. */
export interface FakePoolSpec {
  name: string;
  namespace?: string;
  matchLabels: Record<string, string>;
  targetPorts: number[];
  appProtocol?: string;
}

/** A v1 InferencePool as the API server returns it. */
export function fakeInferencePool(p: FakePoolSpec): FakeObject {
  return {
    apiVersion: "inference.networking.k8s.io/v1",
    kind: "InferencePool",
    metadata: { name: p.name, namespace: p.namespace ?? "default" },
    spec: {
      selector: { matchLabels: { ...p.matchLabels } },
      targetPorts: p.targetPorts.map((number) => ({ number })),
      ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
      endpointPickerRef: { name: "epp", port: { number: 9002 } },
    },
  };
}

/** Whether `obj` passes a `labelSelector` of equality terms (`a=b,c==d,e!=f`); empty passes all. */
export function matchesLabelSelector(obj: FakeObject, selector: string | null): boolean {
  if (!selector) return true;
  const labels = obj.metadata.labels ?? {};
  return selector.split(",").every((term) => {
    const neq = term.indexOf("!=");
    if (neq >= 0) return labels[term.slice(0, neq).trim()] !== term.slice(neq + 2).trim();
    const [k = "", v = ""] = term.split(/==?/);
    return labels[k.trim()] === v.trim();
  });
}

/** Whether `obj` passes a `fieldSelector` on metadata.name / metadata.namespace. */
export function matchesFieldSelector(obj: FakeObject, selector: string | null): boolean {
  if (!selector) return true;
  return selector.split(",").every((term) => {
    const [k = "", v = ""] = term.split(/==?/);
    if (k === "metadata.name") return obj.metadata.name === v;
    if (k === "metadata.namespace") return obj.metadata.namespace === v;
    return false;
  });
}

/** Writes `dir/kubeconfig` for `server` (plain HTTP, so insecure-skip-tls-verify) and returns its path. */
export function writeKubeconfig(dir: string, server: string, token: string, namespace = "default"): string {
  const path = join(dir, "kubeconfig");
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "fake", cluster: { server, "insecure-skip-tls-verify": true } }],
    users: [{ name: "fake", user: { token } }],
    contexts: [{ name: "fake", context: { cluster: "fake", user: "fake", namespace } }],
    "current-context": "fake",
  };
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}
