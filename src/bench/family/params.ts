// The shape of each workload of a generated family (generate.ts): the ranges it is drawn from, and why.
// Every workload draws from its own random streams, one per purpose, keyed by (seed, workload index,
// purpose): workload i is the same in a family of 5 and of 30, and widening one range leaves the other
// draws as they were. Uniform unless said otherwise; log-uniform where a range spans a factor of ten or
// more, so its small end is not starved.
//
// - fleet: 2–8 engines of one profile, h100-llama8b in 3 workloads of 4, else a100-llama8b. Two is the
//   least a router can choose between, eight twice the shipped scenarios' pools. The A100 is the slow
//   profile (about 18k prefill tokens/s in 2,048-token chunks against the H100's 56k in 8,192-token
//   chunks), so a long prompt holds an engine three times as long.
// - load: 0.30–1.20 of the fleet's prefill capacity (capacity.ts: each engine's full-chunk prefill rate
//   times the engine count), averaged over the run, bursts included (a burst overloads its moments; the
//   steady traffic is what the bursts leave of the mean), counted as prompt tokens per second as sent, shared
//   prefixes included (a prefix-cache hit makes the real prefill smaller). Below ~0.6 routers barely
//   differ; around 0.8–1.0 is where they do; past 1.0 a backlog grows under any router, and the family
//   must show a router does not make overload worse. With short prompts the engines' one-at-a-time
//   API-server stage binds before prefill does (9.5 ms a request on these profiles: ~105 requests/s an
//   engine), so the load is of whichever binds first (generate.ts); decode comes on top, and
//   `params.offered` reports each.
// - duration: 60–180 s of arrivals. A minute holds enough requests for a P99 at the lowest rates; three
//   is what a family of 30 can afford. `quick` scales a workload to 20 s keeping its shape: the same
//   rates and mixes, bursts' starts and lengths in proportion (each at least 2 s).
// - prompt mix (the user message; lengths.ts), one of three, equal odds:
//   light:   triangular around a mean of 200–4,000 tokens (log-uniform), half-width 20–80% of the mean:
//            one kind of chat or summarising, nothing far from its size;
//   heavy:   bounded Pareto from 100–600 tokens (log-uniform), tail index 1.1–1.7, the longest
//            10,000–30,000: ShareGPT-like, means of ~250–2,200 tokens, up to 3% of prompts past 10k;
//   bimodal: short prompts around 100–600 tokens (half-width 30–70%) and a 5–40% share of documents
//            around 4,000–16,000 (half-width 20–50%): a chat product and a document product on one pool.
// - output (max_tokens; the simulated engines emit all of them), one of three, equal odds: short 8–64
//   (uniform: classification, extraction); medium, a lognormal of median 120–250 and sigma 0.5 within
//   64–512 (chat replies); long-tailed, a lognormal of median 100–300 and sigma 1 within 16–2,048
//   (open-ended generation, where decode dominates).
// - tenants: 1–6, sharing the steady traffic Dirichlet(1, …, 1) (uniform over the simplex: one tenant
//   sometimes dominates, sometimes they are even).
// - prefix sharing: none in half the workloads; in the other half 10–90% of the steady requests fall in
//   1–20 prefix groups, each a system prompt of 200–4,000 tokens (log-uniform; a long RAG or agent
//   prompt at the top), group popularity Zipf with exponent 0–1.2 (from even to one group taking most).
// - bursts: 0–3, each from one of the tenants (uniform), starting where its 5–30 s fit in the run, adding
//   0.5–3× the steady load in prompt tokens (a size in load, not in requests, so a burst of documents is
//   not twenty times the pool). 3 bursts in 5 send long documents (triangular around 3,000–12,000 tokens,
//   half-width 20–50%), the others a mix drawn as the steady one is; a burst's prompts share no prefix.
//   noisy-neighbor's burst is one such: 20 s, about 1× its steady load, 5,000–7,000-token prompts.
// - context: every request's prefix + prompt + max_tokens fits the engines' window less what the replay
//   adds (capacity.ts usableContext), so the heavy tail and the documents are capped to what is left.

import { type Random, randomStream, zipf } from "../workload/distributions.js";
import { fleetContextWindow, usableContext } from "./capacity.js";
import { familyFleet } from "./fleet.js";
import type { PromptMix, Triangular } from "./lengths.js";
import { promptMax } from "./lengths.js";

export const RANGES = {
  engines: [2, 8],
  profiles: { "h100-llama8b": 0.75, "a100-llama8b": 0.25 },
  load: [0.3, 1.2],
  durationS: [60, 180],
  quickDurationS: 20,
  quickMinBurstS: 2,
  light: { mean: [200, 4000], spread: [0.2, 0.8] },
  heavy: { min: [100, 600], alpha: [1.1, 1.7], max: [10_000, 30_000] },
  bimodal: {
    shortMean: [100, 600],
    shortSpread: [0.3, 0.7],
    longMean: [4000, 16_000],
    longSpread: [0.2, 0.5],
    longShare: [0.05, 0.4],
  },
  output: {
    short: [8, 64],
    medium: { median: [120, 250], sigma: 0.5, min: 64, max: 512 },
    longTailed: { median: [100, 300], sigma: 1, min: 16, max: 2048 },
  },
  tenants: [1, 6],
  prefix: { chance: 0.5, fraction: [0.1, 0.9], groups: [1, 20], tokens: [200, 4000], zipf: [0, 1.2] },
  bursts: {
    count: [0, 3],
    lengthS: [5, 30],
    size: [0.5, 3],
    longChance: 0.6,
    longMean: [3000, 12_000],
    longSpread: [0.2, 0.5],
  },
} as const;

export type OutputSpec =
  | { kind: "short"; min: number; max: number }
  | { kind: "medium" | "long-tailed"; median: number; sigma: number; min: number; max: number };

export interface TenantShare {
  name: string;
  /** Share of the steady traffic's requests. */
  share: number;
}

export interface PrefixGroup {
  id: string;
  /** System-prompt length, tokens. */
  tokens: number;
  /** Share of the grouped requests. */
  share: number;
}

export interface PrefixSharing {
  /** Share of the steady requests in a prefix group. */
  fraction: number;
  groups: PrefixGroup[];
}

/** A burst as drawn, at the workload's full duration. */
export interface BurstShape {
  tenant: string;
  startS: number;
  lengthS: number;
  /** Extra prompt tokens per second while it lasts, as a multiple of the steady load's. */
  size: number;
  /** Whether its prompts are long documents rather than a mix drawn like the steady one. */
  documents: boolean;
  prompt: PromptMix;
}

/** Everything drawn for one workload, before arrivals: independent of the family's size and of `quick`. */
export interface WorkloadShape {
  seed: number;
  index: number;
  /** "f03": the workload's tag in names, ids, prefix groups and fleet. */
  tag: string;
  profile: string;
  engines: number;
  /** The run's mean load over the fleet's capacity (prefill, or the API-server stage where that binds first). */
  load: number;
  durationS: number;
  prompt: PromptMix;
  output: OutputSpec;
  tenants: TenantShare[];
  prefix: PrefixSharing | null;
  bursts: BurstShape[];
}

const between = (r: Random, [lo, hi]: readonly [number, number]) => lo + r() * (hi - lo);
const logBetween = (r: Random, [lo, hi]: readonly [number, number]) =>
  Math.exp(Math.log(lo) + r() * (Math.log(hi) - Math.log(lo)));
const intBetween = (r: Random, [lo, hi]: readonly [number, number]) => lo + Math.floor(r() * (hi - lo + 1));
const round = (x: number, digits: number) => Number(x.toFixed(digits));

function triangular(
  r: Random,
  mean: readonly [number, number],
  spread: readonly [number, number],
): Triangular {
  return { mean: Math.round(logBetween(r, mean)), spread: round(between(r, spread), 2) };
}

function drawPromptMix(r: Random): PromptMix {
  const u = r();
  if (u < 1 / 3) return { kind: "light", ...triangular(r, RANGES.light.mean, RANGES.light.spread) };
  if (u < 2 / 3) {
    const h = RANGES.heavy;
    return {
      kind: "heavy",
      min: Math.round(logBetween(r, h.min)),
      alpha: round(between(r, h.alpha), 2),
      max: Math.round(between(r, h.max)),
    };
  }
  const b = RANGES.bimodal;
  return {
    kind: "bimodal",
    short: triangular(r, b.shortMean, b.shortSpread),
    long: triangular(r, b.longMean, b.longSpread),
    longShare: round(between(r, b.longShare), 2),
  };
}

function drawOutput(r: Random): OutputSpec {
  const u = r();
  const o = RANGES.output;
  if (u < 1 / 3) return { kind: "short", min: o.short[0], max: o.short[1] };
  const spec =
    u < 2 / 3 ? { kind: "medium" as const, ...o.medium } : { kind: "long-tailed" as const, ...o.longTailed };
  return { ...spec, median: Math.round(between(r, spec.median)) };
}

/** Shrinks a triangular law until its top fits `limit` tokens. */
function capTriangular(t: Triangular, limit: number): Triangular {
  return t.mean * (1 + t.spread) <= limit ? t : { ...t, mean: Math.floor(limit / (1 + t.spread)) };
}

/** The mix with its longest prompts cut to `limit` tokens (the context window's room). */
export function capPromptMix(mix: PromptMix, limit: number): PromptMix {
  if (promptMax(mix) <= limit) return mix;
  switch (mix.kind) {
    case "light":
      return { ...mix, ...capTriangular(mix, limit) };
    case "heavy":
      return { ...mix, max: limit };
    case "bimodal":
      return { ...mix, short: capTriangular(mix.short, limit), long: capTriangular(mix.long, limit) };
  }
}

/** Dirichlet(1, …, 1) shares: normalised exponential draws. */
function dirichletShares(r: Random, n: number): number[] {
  const x = Array.from({ length: n }, () => -Math.log(1 - r()));
  const total = x.reduce((a, v) => a + v, 0);
  return x.map((v) => round(v / total, 3));
}

/** The two-digit tag of workload `index` ("f03"; three digits from 100 on). */
export function workloadTag(index: number): string {
  return `f${String(index).padStart(2, "0")}`;
}

/** Draws workload `index` of the family of `seed`. */
export function drawShape(seed: number, index: number): WorkloadShape {
  const rs = (purpose: string) => randomStream(seed, `family:${index}:${purpose}`);
  const tag = workloadTag(index);

  const fleetR = rs("fleet");
  const profile = fleetR() < RANGES.profiles["h100-llama8b"] ? "h100-llama8b" : "a100-llama8b";
  const engines = intBetween(fleetR, RANGES.engines);
  const load = round(between(rs("load"), RANGES.load), 2);
  const durationS = Math.round(between(rs("duration"), RANGES.durationS));
  const output = drawOutput(rs("output"));

  const tenantR = rs("tenants");
  const tenantCount = intBetween(tenantR, RANGES.tenants);
  const tenants = dirichletShares(tenantR, tenantCount).map((share, i) => ({ name: `t${i + 1}`, share }));

  const prefixR = rs("prefix");
  let prefix: PrefixSharing | null = null;
  if (prefixR() < RANGES.prefix.chance) {
    const fraction = round(between(prefixR, RANGES.prefix.fraction), 2);
    const count = intBetween(prefixR, RANGES.prefix.groups);
    const popularity = zipf(count, round(between(prefixR, RANGES.prefix.zipf), 2)).probabilities;
    const groups = popularity.map((p, g) => ({
      id: `${tag}-g${String(g + 1).padStart(2, "0")}`,
      tokens: Math.round(logBetween(prefixR, RANGES.prefix.tokens)),
      share: round(p, 4),
    }));
    prefix = { fraction, groups };
  }

  // What a prompt may take of the window: the window less the replay's overhead, the longest reply and,
  // for the steady traffic, the longest system prompt.
  const room = usableContext(fleetContextWindow(familyFleet(tag, profile, engines))) - output.max;
  const longestPrefix = Math.max(0, ...(prefix?.groups.map((g) => g.tokens) ?? []));
  const prompt = capPromptMix(drawPromptMix(rs("prompt")), room - longestPrefix);

  const burstR = rs("bursts");
  const bursts: BurstShape[] = [];
  const burstCount = intBetween(burstR, RANGES.bursts.count);
  for (let b = 0; b < burstCount; b++) {
    const tenant = tenants[Math.floor(burstR() * tenants.length)]!.name;
    const lengthS = round(between(burstR, RANGES.bursts.lengthS), 1);
    const startS = round(burstR() * (durationS - lengthS), 1);
    const size = round(between(burstR, RANGES.bursts.size), 2);
    const documents = burstR() < RANGES.bursts.longChance;
    const mix: PromptMix = documents
      ? { kind: "light", ...triangular(burstR, RANGES.bursts.longMean, RANGES.bursts.longSpread) }
      : drawPromptMix(burstR);
    bursts.push({ tenant, startS, lengthS, size, documents, prompt: capPromptMix(mix, room) });
  }

  return { seed, index, tag, profile, engines, load, durationS, prompt, output, tenants, prefix, bursts };
}
