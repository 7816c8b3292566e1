// The `EndpointPicker` config kind (per pool): which filters, weighted scorers and picker to compose,
// with their parameters. Validated here from a plain object into typed config with sensible defaults.

import { formatPath, IssueList, type PathSegment } from "../../config/errors.js";
import { FieldReader } from "../../config/fields.js";
import type { PickerPlugins, PluginParams, PluginRegistry } from "../framework/plugin.js";
import { PEER_ALGORITHMS, type PeerName } from "../peers/peer-algorithm.js";
import { PICKER_PLUGINS } from "../picker-plugins.js";

/** The filter and scorer types the config may name: their registries (filters/filters.ts, scorers/scorers.ts). */
export const FILTER_TYPES: readonly string[] = PICKER_PLUGINS.filters.types;
export const SCORER_TYPES: readonly string[] = PICKER_PLUGINS.scorers.types;
export const PICKER_TYPES = ["max-score", "power-of-two"] as const;

export interface FilterRef {
  readonly type: string;
  readonly params: PluginParams;
  /** Overrides the profile's failOpen for this filter; undefined inherits it. */
  readonly failOpen?: boolean;
}

export interface ScorerRef {
  readonly type: string;
  readonly weight: number;
  readonly params: PluginParams;
}

export interface PrefixIndexConfig {
  /** The global budget for the pool's whole index, in blocks (~32 bytes each). */
  readonly maxBlocks: number;
  readonly maxEndpoints: number;
  /** UTF-8 bytes per block (characters, for ASCII); tokensPerBlock × ~4, a multiple of 8. */
  readonly blockBytes: number;
  readonly maxPrefixBlocks: number;
  /** Cap each endpoint at the engine's scraped num_gpu_blocks. */
  readonly capacityFromEngine: boolean;
}

/** `tokengate`: the filters, scorers and picker below; a peer's name: that project's default algorithm. */
export type PickerAlgorithm = "tokengate" | PeerName;
export const PICKER_ALGORITHMS: readonly PickerAlgorithm[] = ["tokengate", ...PEER_ALGORITHMS];

export interface EndpointPickerConfig {
  /**
   * Who chooses among the endpoints the filters keep: tokengate's scorers and picker, or a peer's default
   * algorithm (picker/peers/), for comparing algorithms inside the same gateway.
   */
  readonly algorithm: PickerAlgorithm;
  readonly filters: readonly FilterRef[];
  readonly scorers: readonly ScorerRef[];
  readonly picker: { readonly type: (typeof PICKER_TYPES)[number] };
  readonly failOpen: boolean;
  readonly loadGuard: { readonly marginMs: number } | null;
  readonly costModel: {
    readonly prefillMsPerToken: number;
    readonly waitingRequestMs: number;
    readonly tokensPerBlock: number;
  };
  readonly prefixIndex: PrefixIndexConfig;
  readonly backupPool: string | null;
  readonly topScores: number;
}

export interface ConfigProblem {
  readonly path: string;
  readonly message: string;
}

export type ParsedPickerConfig =
  | { readonly ok: true; readonly config: EndpointPickerConfig; readonly warnings: ConfigProblem[] }
  | { readonly ok: false; readonly errors: ConfigProblem[] };

/**
 * Prefix affinity against predicted delay (queue wait + uncached prefill, in ms) rather than GIE's
 * prefix 3 / queue 2 / KV 2: queue depth min-max normalised turns a one-request difference into the full
 * range and breaks affinity constantly (llm-d moved off that blend for "sticky until saturated").
 * Affinity weighs 6, more than the balance scorers together (4): at weight 3, shared-prefix at 120 req/s
 * kept 69.8% of prompt tokens cached (a prefix-sticky router: 82.8%) and a P90 TTFT of 705 ms; at 6,
 * 82.5% and 85 ms, with load still even (max/mean 1.03). The load guard keeps the hot-spot protection.
 */
export const DEFAULT_SCORERS: readonly ScorerRef[] = [
  { type: "prefix-affinity", weight: 6, params: {} },
  { type: "predicted-delay", weight: 2, params: {} },
  { type: "inflight-tokens", weight: 1, params: { floorTokens: 8192 } },
  { type: "kv-cache", weight: 1, params: {} },
  { type: "lora-affinity", weight: 6, params: {} },
];

/**
 * Health, draining, the served model and adapter slots fail closed: sending to a down pod, to another
 * model version, or into an engine queue an adapter cannot leave is worse than waiting in the gateway's
 * queue or failing fast.
 */
export const DEFAULT_FILTERS: readonly FilterRef[] = [
  { type: "ready", params: {}, failOpen: false },
  { type: "not-draining", params: {}, failOpen: false },
  { type: "serves-model", params: {}, failOpen: false },
  { type: "lora-available", params: {}, failOpen: false },
  { type: "metrics-fresh", params: { mode: "prefer", graceMs: 2000 } },
  { type: "kv-watermark", params: { threshold: 0.95 } },
];

/**
 * Validates an `EndpointPicker` spec; every problem is reported, with its path.
 * @example
 * parseEndpointPickerConfig({ scorers: [{ type: "prefix-affinity", weight: 3 }], loadGuard: { marginMs: 500 } })
 */
export function parseEndpointPickerConfig(
  value: unknown,
  path: readonly PathSegment[] = [],
  plugins: PickerPlugins = PICKER_PLUGINS,
): ParsedPickerConfig {
  const issues = new IssueList();
  const spec = FieldReader.of(value ?? {}, path, issues);
  let config: EndpointPickerConfig | undefined;
  if (spec) {
    const algorithm = (spec.string("algorithm", { oneOf: PICKER_ALGORITHMS }) ??
      "tokengate") as PickerAlgorithm;
    const filters = refs(spec, "filters", plugins.filters, false) as FilterRef[] | undefined;
    const scorers = refs(spec, "scorers", plugins.scorers, true) as ScorerRef[] | undefined;
    const pickerMap = spec.map("picker");
    const pickerType = pickerMap?.string("type", { required: true, oneOf: PICKER_TYPES }) ?? "max-score";
    pickerMap?.done();
    const failOpen = spec.bool("failOpen") ?? true;
    const loadGuard = parseLoadGuard(spec);
    const cost = spec.map("costModel");
    const prefillMsPerToken = num(cost, "prefillMsPerToken", 0.1, 0);
    const waitingRequestMs = num(cost, "waitingRequestMs", 100, 0);
    cost?.done();
    const ix = spec.map("prefixIndex");
    const tokensPerBlock = ix?.int("tokensPerBlock", { min: 1, max: 1024 }) ?? 16;
    const prefixIndex: PrefixIndexConfig = {
      maxBlocks: ix?.int("maxBlocks", { min: 1, max: 100_000_000 }) ?? 1_000_000,
      maxEndpoints: ix?.int("maxEndpoints", { min: 1, max: 1024 }) ?? 64,
      blockBytes: blockBytes(ix, tokensPerBlock),
      maxPrefixBlocks: ix?.int("maxPrefixBlocks", { min: 1 }) ?? 256,
      capacityFromEngine: ix?.bool("capacityFromEngine") ?? true,
    };
    ix?.done();
    const backupPool = spec.string("backupPool") ?? null;
    const topScores = spec.int("topScores", { min: 0, max: 64 }) ?? 3;
    spec.done();
    if (issues.errorCount === 0) {
      config = {
        algorithm,
        filters: filters ?? DEFAULT_FILTERS,
        scorers: scorers ?? DEFAULT_SCORERS,
        picker: { type: pickerType as (typeof PICKER_TYPES)[number] },
        failOpen,
        loadGuard,
        costModel: { prefillMsPerToken, waitingRequestMs, tokensPerBlock },
        prefixIndex,
        backupPool,
        topScores,
      };
    }
  }
  const out = (sev: "error" | "warning") =>
    issues.items
      .filter((i) => i.severity === sev)
      .map((i) => ({ path: formatPath(i.path), message: i.message }));
  return config ? { ok: true, config, warnings: out("warning") } : { ok: false, errors: out("error") };
}

/** Defaults to ~4 bytes per token, rounded up to the hash's 8-byte step. */
function blockBytes(ix: FieldReader | null, tokensPerBlock: number): number {
  const v = ix?.int("blockBytes", { min: 8, max: 65_536 });
  if (v !== undefined && v % 8 !== 0)
    ix!.issues.error(ix!.at("blockBytes"), `must be a multiple of 8, got ${v}`);
  return v ?? Math.ceil((tokensPerBlock * 4) / 8) * 8;
}

/** `loadGuard: false` disables it; absent means the default 500 ms margin. */
function parseLoadGuard(spec: FieldReader): { marginMs: number } | null {
  const raw = spec.raw("loadGuard");
  if (raw === false) return null;
  if (raw === undefined) return { marginMs: 500 };
  const g = spec.map("loadGuard");
  const marginMs = num(g, "marginMs", 500, 0);
  g?.done();
  return { marginMs };
}

function refs(
  spec: FieldReader,
  key: string,
  registry: PluginRegistry<{ readonly type: string; params(entry: FieldReader | null): PluginParams }>,
  weighted: boolean,
): (FilterRef | ScorerRef)[] | undefined {
  const items = spec.list(key);
  if (!items) return undefined;
  const out: (FilterRef | ScorerRef)[] = [];
  const seen = new Set<string>();
  items.forEach((item, i) => {
    const r = FieldReader.of(item, spec.at(key, i), spec.issues);
    if (!r) return;
    const type = r.string("type", { required: true, oneOf: registry.types });
    if (type && seen.has(type)) r.issues.error(r.at("type"), `${key} lists ${JSON.stringify(type)} twice`);
    if (type) seen.add(type);
    // The plugin reads its own parameters (and marks them known); an unknown type has none to read.
    const params = type ? registry.get(type).params(r) : {};
    if (weighted) {
      const weight = num(r, "weight", 1, 0);
      r.done();
      if (type) out.push({ type, weight, params });
    } else {
      const failOpen = r.bool("failOpen");
      r.done();
      if (type) out.push({ type, params, ...(failOpen === undefined ? {} : { failOpen }) });
    }
  });
  return out;
}

/** A finite number in [min, max]; the default when absent, wrong (reported), or the reader itself is absent. */
function num(r: FieldReader | null, key: string, dflt: number, min: number, max?: number): number {
  return r?.number(key, max === undefined ? { min } : { min, max }) ?? dflt;
}
