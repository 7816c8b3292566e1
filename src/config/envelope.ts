// The Kubernetes-style frame every config document shares: apiVersion, kind, metadata, spec.
import { didYouMean, type IssueList } from "./errors.js";
import { describe, FieldReader, isPlainMap } from "./fields.js";

/** API groups accepted in `apiVersion`: seed 004's, and this project's own. */
export const API_VERSIONS = ["ai.example.com/v1alpha1", "tokengate.dev/v1alpha1"] as const;

/** Kinds validated here. */
export const VALIDATED_KINDS = [
  "InferencePool",
  "InferenceRoute",
  "GatewayConfig",
  "EndpointPicker",
  "InferenceBudget",
] as const;
/** Kinds recognised and skipped: the simulator's fleet, and the region director's document (read by `tokengate director`). */
export const SKIPPED_KINDS = ["SimFleet", "RegionDirector"] as const;
export const KNOWN_KINDS = [...VALIDATED_KINDS, ...SKIPPED_KINDS] as const;
export type ConfigKind = (typeof KNOWN_KINDS)[number];

/** Kubernetes object names (RFC 1123 subdomain), which also keeps them safe as metric label values. */
export const NAME_PATTERN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
export const NAME_HINT =
  "use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit";

export interface Envelope {
  readonly kind: ConfigKind;
  readonly name: string;
  readonly annotations: Readonly<Record<string, string>>;
  /** Reader over `spec`; null when spec is missing or not a map (already reported). */
  readonly spec: FieldReader | null;
  /** `spec` as plain data, for kinds stored without validation. */
  readonly specValue: unknown;
}

/** The document's kind if it is a skipped kind (checked before anything else about it). */
export function skippedKind(value: unknown): string | null {
  if (!isPlainMap(value)) return null;
  const kind = value.kind;
  return typeof kind === "string" && (SKIPPED_KINDS as readonly string[]).includes(kind) ? kind : null;
}

/** Validates the frame; returns null when the document cannot be interpreted at all. */
export function readEnvelope(value: unknown, issues: IssueList): Envelope | null {
  const doc = FieldReader.of(value, [], issues);
  if (!doc) return null;
  doc.string("apiVersion", { required: true, oneOf: API_VERSIONS });
  const kind = doc.raw("kind", true);
  let known: ConfigKind | null = null;
  if (kind !== undefined) {
    if (typeof kind === "string" && (KNOWN_KINDS as readonly string[]).includes(kind)) {
      known = kind as ConfigKind;
    } else {
      const list = KNOWN_KINDS.join(", ");
      const what = typeof kind === "string" ? JSON.stringify(kind) : describe(kind);
      const hint = typeof kind === "string" ? didYouMean(kind, KNOWN_KINDS) : "";
      issues.error(["kind"], `unknown kind ${what}; expected one of ${list}${hint}`);
    }
  }
  const meta = doc.map("metadata", true);
  const name = meta?.string("name", { required: true, pattern: NAME_PATTERN, patternHint: NAME_HINT });
  meta?.string("namespace", { pattern: NAME_PATTERN, patternHint: NAME_HINT });
  readStringMap(meta, "labels", issues);
  const annotations = readStringMap(meta, "annotations", issues);
  meta?.done();
  const specValue = doc.raw("spec", true);
  const spec = specValue === undefined ? null : FieldReader.of(specValue, ["spec"], issues);
  doc.done();
  if (known === null || name === undefined) return null;
  return { kind: known, name, annotations, spec, specValue };
}

function readStringMap(meta: FieldReader | null, key: string, issues: IssueList): Record<string, string> {
  const out: Record<string, string> = {};
  const map = meta?.map(key);
  if (!map) return out;
  for (const [k, v] of Object.entries(map.value)) {
    // Kubernetes keeps annotation values as strings; an unquoted number would silently change its text.
    if (typeof v !== "string") issues.error(map.at(k), `must be a string (quote it), got ${describe(v)}`);
    else out[k] = v;
  }
  return out;
}
