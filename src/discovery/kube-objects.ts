// The few fields of Kubernetes objects that discovery reads, decoded from the API server's JSON at the
// edge: a pod's labels, phase, IP, Ready condition and deletionTimestamp; a Gateway API Inference Extension
// v1 InferencePool's selector, target ports and app protocol; the Status of a failed call.

/** The HTTP/1.1 default or cleartext HTTP/2 with prior knowledge, as `spec.appProtocol` says. */
export type AppProtocol = "http" | "kubernetes.io/h2c";

/** What discovery knows of one pod. */
export interface PodFacts {
  readonly name: string;
  readonly resourceVersion: string;
  readonly labels: Readonly<Record<string, string>>;
  /** `status.phase`; "" when the kubelet has not reported one. */
  readonly phase: string;
  /** `status.podIP`; null before the pod has one. */
  readonly podIP: string | null;
  /** `status.conditions[type=Ready].status === "True"`. */
  readonly ready: boolean;
  /** Has a `metadata.deletionTimestamp`: it is terminating. */
  readonly deleting: boolean;
}

/** Which pods an InferencePool selects and which of their ports serve. */
export interface PoolSelection {
  /** `spec.selector.matchLabels`, never empty. */
  readonly matchLabels: Readonly<Record<string, string>>;
  /** `spec.targetPorts[].number`: 1–8 distinct ports, each one endpoint per pod. */
  readonly targetPorts: readonly number[];
  readonly appProtocol: AppProtocol;
}

/** One InferencePool object: its selection, or why its spec cannot be used. */
export interface PoolObject {
  readonly name: string;
  readonly resourceVersion: string;
  readonly selection: PoolSelection | null;
  /** Why `selection` is null. */
  readonly invalid: string | null;
}

/** A `kind: Status` answer (a failed call, or the object of an ERROR watch event). */
export interface KubeStatus {
  readonly code: number;
  readonly reason: string;
  readonly message: string;
}

type Json = Record<string, unknown>;

function record(v: unknown): Json | null {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : null;
}

function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

function stringMap(v: unknown): Record<string, string> | null {
  const r = record(v);
  if (!r) return null;
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(r)) {
    if (typeof val !== "string") return null;
    out[k] = val;
  }
  return out;
}

/** `metadata.name` and `metadata.resourceVersion` of any object; nulls when absent. */
export function objectMeta(obj: unknown): { name: string | null; resourceVersion: string | null } {
  const meta = record(record(obj)?.metadata);
  return { name: str(meta?.name), resourceVersion: str(meta?.resourceVersion) };
}

/** A pod's facts, or null when the object has no name (not a pod the API server would send). */
export function decodePod(obj: unknown): PodFacts | null {
  const o = record(obj);
  const meta = record(o?.metadata);
  const name = str(meta?.name);
  if (!o || !meta || !name) return null;
  const status = record(o.status);
  const conditions = Array.isArray(status?.conditions) ? status.conditions : [];
  const ready = conditions.some((c) => {
    const r = record(c);
    return r?.type === "Ready" && r.status === "True";
  });
  const podIP = str(status?.podIP);
  return {
    name,
    resourceVersion: str(meta.resourceVersion) ?? "",
    labels: stringMap(meta.labels) ?? {},
    phase: str(status?.phase) ?? "",
    podIP: podIP === "" ? null : podIP,
    ready,
    deleting: meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null,
  };
}

/** The selection of an InferencePool's spec, or the reason it is not a valid v1 spec. */
export function decodePoolSelection(spec: unknown): PoolSelection | string {
  const s = record(spec);
  if (!s) return "spec is missing";
  const matchLabels = stringMap(record(s.selector)?.matchLabels);
  if (!matchLabels || Object.keys(matchLabels).length === 0) {
    return "spec.selector.matchLabels must be a non-empty map of strings";
  }
  if (!Array.isArray(s.targetPorts) || s.targetPorts.length < 1 || s.targetPorts.length > 8) {
    return "spec.targetPorts must have 1 to 8 entries";
  }
  const targetPorts: number[] = [];
  for (const p of s.targetPorts) {
    const n = record(p)?.number;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > 65535) {
      return "spec.targetPorts[].number must be an integer from 1 to 65535";
    }
    if (targetPorts.includes(n)) return `spec.targetPorts has port ${n} twice`;
    targetPorts.push(n);
  }
  const protocol = s.appProtocol ?? "http";
  if (protocol !== "http" && protocol !== "kubernetes.io/h2c") {
    return `spec.appProtocol ${JSON.stringify(protocol)} is neither "http" nor "kubernetes.io/h2c"`;
  }
  return { matchLabels, targetPorts, appProtocol: protocol };
}

/** An InferencePool object, or null when it has no name. */
export function decodePool(obj: unknown): PoolObject | null {
  const { name, resourceVersion } = objectMeta(obj);
  if (!name) return null;
  const selection = decodePoolSelection(record(obj)?.spec);
  return typeof selection === "string"
    ? { name, resourceVersion: resourceVersion ?? "", selection: null, invalid: selection }
    : { name, resourceVersion: resourceVersion ?? "", selection, invalid: null };
}

/** A Status object's code, reason and message, or null when `obj` is not one. */
export function decodeStatus(obj: unknown): KubeStatus | null {
  const o = record(obj);
  if (!o || typeof o.code !== "number") return null;
  return { code: o.code, reason: str(o.reason) ?? "", message: str(o.message) ?? "" };
}

/** The `labelSelector` query value for equality on every label, keys sorted (`a=b,c=d`). */
export function labelSelector(matchLabels: Readonly<Record<string, string>>): string {
  return Object.keys(matchLabels)
    .sort()
    .map((k) => `${k}=${matchLabels[k]}`)
    .join(",");
}

/** Whether `labels` carry every `matchLabels` pair. */
export function matchesLabels(
  labels: Readonly<Record<string, string>>,
  matchLabels: Readonly<Record<string, string>>,
): boolean {
  return Object.entries(matchLabels).every(([k, v]) => labels[k] === v);
}
