// EndpointPicker documents: which filters, scorers and picker a pool's endpoint picker composes. The
// plugin configuration itself is validated by src/picker/config; this file places it on pools.

import {
  type EndpointPickerConfig,
  parseEndpointPickerConfig,
} from "../picker/config/endpoint-picker-config.js";
import type { Envelope } from "./envelope.js";
import type { IssueList, PathSegment } from "./errors.js";
import { didYouMean } from "./errors.js";

export interface PlacedPickerConfig {
  readonly name: string;
  /** Pools it applies to; empty = every pool that names no picker of its own. */
  readonly pools: readonly string[];
  readonly config: EndpointPickerConfig;
}

/** The picker of a pool no EndpointPicker document names: every plugin at its default. */
export const DEFAULT_PICKER_CONFIG: EndpointPickerConfig = (() => {
  const parsed = parseEndpointPickerConfig({});
  if (!parsed.ok) throw new Error(`default picker config is invalid: ${parsed.errors[0]?.message}`);
  return parsed.config;
})();

/** "spec.scorers[1].weight" → ["spec", "scorers", 1, "weight"], to locate a picker problem in the YAML. */
function segments(path: string): PathSegment[] {
  const out: PathSegment[] = [];
  for (const part of path.split(".")) {
    const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) {
      out.push(part);
      continue;
    }
    if (m[1]) out.push(m[1]);
    for (const idx of m[2]!.matchAll(/\[(\d+)\]/g)) out.push(Number(idx[1]));
  }
  return out;
}

export function parseEndpointPickerDoc(
  env: Envelope,
  poolNames: ReadonlySet<string>,
  issues: IssueList,
): PlacedPickerConfig | undefined {
  const spec = (env.specValue ?? {}) as Record<string, unknown>;
  const { pools: poolsValue, ...rest } = typeof spec === "object" && spec !== null ? spec : {};
  const pools: string[] = [];
  if (poolsValue !== undefined) {
    if (!Array.isArray(poolsValue)) {
      issues.error(["spec", "pools"], "must be a list of InferencePool names");
    } else {
      poolsValue.forEach((p, i) => {
        if (typeof p !== "string") issues.error(["spec", "pools", i], "must be a pool name");
        else if (!poolNames.has(p)) {
          issues.error(["spec", "pools", i], `pool "${p}" is not declared${didYouMean(p, poolNames)}`);
        } else pools.push(p);
      });
    }
  }
  const parsed = parseEndpointPickerConfig(rest, ["spec"]);
  if (!parsed.ok) {
    for (const e of parsed.errors) issues.error(segments(e.path), e.message);
    return undefined;
  }
  for (const w of parsed.warnings) issues.warn(segments(w.path), w.message);
  return { name: env.name, pools, config: parsed.config };
}

/** Each pool's picker: its own EndpointPicker, else the one that names no pools, else the defaults. */
export function pickersByPool(
  placed: readonly PlacedPickerConfig[],
  poolNames: Iterable<string>,
): Map<string, EndpointPickerConfig> {
  const fallback = placed.find((p) => p.pools.length === 0)?.config ?? DEFAULT_PICKER_CONFIG;
  const out = new Map<string, EndpointPickerConfig>();
  for (const pool of poolNames) out.set(pool, placed.find((p) => p.pools.includes(pool))?.config ?? fallback);
  return out;
}
