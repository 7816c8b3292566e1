// A hand-written check of the Gateway API Inference Extension's v1 InferencePool, whose schema
// kubernetes-models does not ship: the fields and limits of GIE's api/v1/inferencepool_types.go
// (/work/shared/reference/routing.md §1.9), as far as a manifest can break them.

import type { KubeObject } from "./render.js";

export const GIE_API_VERSION = "inference.networking.k8s.io/v1";

/** What `endpointPickerRef.failureMode` may say; GIE's default is FailClose. */
export const FAILURE_MODES = ["FailOpen", "FailClose"] as const;
export type FailureMode = (typeof FAILURE_MODES)[number];

const APP_PROTOCOLS = ["http", "kubernetes.io/h2c"];
const SPEC_FIELDS = ["selector", "targetPorts", "appProtocol", "endpointPickerRef"];
const PICKER_FIELDS = ["group", "kind", "name", "port", "failureMode"];
/** RFC 1123 subdomain (object names) and label (Service names). */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** A label key: optional DNS prefix, then a name of at most 63 characters. */
const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** The picker a pool names, with GIE's defaults filled in; null when the pool names none. */
export interface EndpointPickerRef {
  readonly kind: string;
  readonly name: string;
  readonly port: number | null;
  readonly failureMode: FailureMode;
}

/**
 * Every way `obj` falls short of a v1 InferencePool, as "path: problem" lines; empty when it is one.
 * @example
 * inferencePoolProblems(pool) // ["spec.targetPorts[0].number: 70000 is outside 1..65535"]
 */
export function inferencePoolProblems(obj: KubeObject): string[] {
  const problems: string[] = [];
  if (obj.apiVersion !== GIE_API_VERSION)
    problems.push(`apiVersion: ${obj.apiVersion}, not ${GIE_API_VERSION}`);
  if (obj.kind !== "InferencePool") problems.push(`kind: ${obj.kind}, not InferencePool`);
  if (!SUBDOMAIN.test(obj.metadata.name))
    problems.push(`metadata.name: "${obj.metadata.name}" is not a DNS subdomain`);
  const spec = obj.spec;
  if (!isMap(spec)) return [...problems, "spec: required"];
  for (const key of Object.keys(spec))
    if (!SPEC_FIELDS.includes(key)) problems.push(`spec.${key}: unknown field`);
  checkSelector(spec.selector, problems);
  checkTargetPorts(spec.targetPorts, problems);
  if (spec.appProtocol !== undefined && !APP_PROTOCOLS.includes(spec.appProtocol as string)) {
    problems.push(`spec.appProtocol: ${String(spec.appProtocol)}, not one of ${APP_PROTOCOLS.join(", ")}`);
  }
  if (spec.endpointPickerRef !== undefined) checkPickerRef(spec.endpointPickerRef, problems);
  return problems;
}

/** The pool's endpointPickerRef with defaults (kind Service, failureMode FailClose), or null. */
export function endpointPickerRefOf(obj: KubeObject): EndpointPickerRef | null {
  const ref = (obj.spec as { endpointPickerRef?: Record<string, unknown> } | undefined)?.endpointPickerRef;
  if (!isMap(ref)) return null;
  const port = (ref.port as { number?: unknown } | undefined)?.number;
  return {
    kind: typeof ref.kind === "string" ? ref.kind : "Service",
    name: String(ref.name),
    port: typeof port === "number" ? port : null,
    failureMode: ref.failureMode === "FailOpen" ? "FailOpen" : "FailClose",
  };
}

function checkSelector(selector: unknown, problems: string[]): void {
  if (!isMap(selector)) {
    problems.push("spec.selector: required");
    return;
  }
  for (const key of Object.keys(selector)) {
    // v1 selects by labels only: no matchExpressions.
    if (key !== "matchLabels") problems.push(`spec.selector.${key}: unknown field`);
  }
  const labels = selector.matchLabels;
  if (!isMap(labels) || Object.keys(labels).length === 0) {
    problems.push("spec.selector.matchLabels: at least one label is required");
    return;
  }
  for (const [key, value] of Object.entries(labels)) {
    if (!LABEL_KEY.test(key)) problems.push(`spec.selector.matchLabels: "${key}" is not a label key`);
    if (typeof value !== "string" || !LABEL_VALUE.test(value)) {
      problems.push(`spec.selector.matchLabels.${key}: ${JSON.stringify(value)} is not a label value`);
    }
  }
}

function checkTargetPorts(ports: unknown, problems: string[]): void {
  if (!Array.isArray(ports) || ports.length < 1 || ports.length > 8) {
    problems.push("spec.targetPorts: 1 to 8 entries are required");
    return;
  }
  const seen = new Set<number>();
  ports.forEach((p, i) => {
    const at = `spec.targetPorts[${i}]`;
    if (!isMap(p)) {
      problems.push(`${at}: must be {number: <port>}`);
      return;
    }
    for (const key of Object.keys(p)) if (key !== "number") problems.push(`${at}.${key}: unknown field`);
    const n = p.number;
    if (!isPort(n)) {
      problems.push(`${at}.number: ${JSON.stringify(n)} is outside 1..65535`);
      return;
    }
    if (seen.has(n)) problems.push(`${at}.number: ${n} is listed twice`);
    seen.add(n);
  });
}

function checkPickerRef(ref: unknown, problems: string[]): void {
  const at = "spec.endpointPickerRef";
  if (!isMap(ref)) {
    problems.push(`${at}: must be a map`);
    return;
  }
  for (const key of Object.keys(ref))
    if (!PICKER_FIELDS.includes(key)) problems.push(`${at}.${key}: unknown field`);
  if (typeof ref.name !== "string" || !DNS_LABEL.test(ref.name)) {
    problems.push(`${at}.name: required, a DNS label (the picker's Service)`);
  }
  const kind = ref.kind ?? "Service";
  if (kind === "Service" && (ref.group ?? "") !== "")
    problems.push(`${at}.group: a Service is in the core group ""`);
  const port = ref.port;
  if (port === undefined) {
    if (kind === "Service") problems.push(`${at}.port: required when kind is Service`);
  } else if (!isMap(port) || !isPort(port.number)) {
    problems.push(
      `${at}.port.number: ${JSON.stringify(isMap(port) ? port.number : port)} is outside 1..65535`,
    );
  }
  if (ref.failureMode !== undefined && !FAILURE_MODES.includes(ref.failureMode as FailureMode)) {
    problems.push(`${at}.failureMode: ${String(ref.failureMode)}, not one of ${FAILURE_MODES.join(", ")}`);
  }
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isPort(v: unknown): v is number {
  return Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535;
}
