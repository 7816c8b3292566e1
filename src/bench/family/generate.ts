// A family of generated workloads, deterministic per seed: tokengate judged on traffic it was never
// tuned on rather than on the seven shipped scenarios. Each workload is a fleet (2–8 engines of one
// profile) and a trace drawn within the ranges documented at the top of params.ts: load, prompt-length
// mix, output lengths, tenants, prefix sharing, bursts and duration.
//
// Arrivals are a Poisson process conditioned on its count in each stretch of constant rate (the steady
// traffic over the whole run, each burst over its own window): the count is the rate × the time, the
// times uniform (arrivalsWithCount). Lengths are stratified (lengths.ts) and tenants and prefix groups
// allotted by quota; so even a 20-s `quick` run offers the load its params say, within a few percent,
// where independent draws of a heavy tail could miss it by a third.

import type { FleetSpec } from "../../sim/fleet.js";
import { getProfile } from "../../sim/profiles.js";
import type { TraceRequest } from "../trace-formats/trace.js";
import {
  arrivalsWithCount,
  lognormalInt,
  type Random,
  randomStream,
  uniformInt,
} from "../workload/distributions.js";
import { fleetContextWindow, fleetPrefillTokensPerS } from "./capacity.js";
import { familyFleet } from "./fleet.js";
import { allocate, type PromptMix, promptMean, quotaLabels, stratifiedLengths } from "./lengths.js";
import {
  drawShape,
  type OutputSpec,
  type PrefixGroup,
  type PrefixSharing,
  RANGES,
  type TenantShare,
  type WorkloadShape,
} from "./params.js";

/** Seed 004's boundary between online and long requests: a prompt above it is class `long`. */
const LONG_PROMPT_TOKENS = 8192;
const STEADY_TASK = "steady";
const BURST_TASK = "burst";

export interface FamilyOptions {
  /** How many workloads: workloads 0 … n − 1, each the same whatever n. */
  n: number;
  seed: number;
  /** Every workload scaled to 20 s of arrivals, its rates, mixes and bursts in proportion. */
  quick?: boolean;
  /** Every workload scaled to this many seconds instead (overrides `quick`). */
  durationS?: number;
}

export interface WorkloadOptions {
  seed: number;
  index: number;
  quick?: boolean;
  durationS?: number;
}

/** A burst as generated: its window in this run, its rate, and its mix's mean prompt. */
export interface BurstParams {
  tenant: string;
  startS: number;
  lengthS: number;
  /** Extra prompt tokens per second while it lasts, as a multiple of the steady load's. */
  size: number;
  documents: boolean;
  prompt: PromptMix;
  meanPromptTokens: number;
  /** Requests per second while it lasts. */
  rate: number;
  requests: number;
}

/** What the trace actually offers, counted from it. */
export interface OfferedLoad {
  requests: number;
  requestsPerS: number;
  promptTokensPerS: number;
  outputTokensPerS: number;
  /** The steady requests' prompt tokens per second over the fleet's prefill capacity. */
  steadyLoad: number;
  /** All requests' prompt tokens per second over the fleet's prefill capacity (bursts included). */
  totalLoad: number;
  /**
   * Requests per second per engine × the API server's serialized cost per request: past ~1 the engines'
   * API-server stage, not prefill, is what queues (short prompts at high load).
   */
  apiServerLoad: number;
  /**
   * Output tokens per second per engine × β2: the decode time per second on top of the prefill, to first
   * order (it leaves out the step overhead β0 that steps with no prefill pay).
   */
  decodeLoad: number;
}

/** A workload's drawn parameters and what they come to: plain JSON, for reports and family.json. */
export interface WorkloadParams {
  seed: number;
  index: number;
  quick: boolean;
  /** Seconds of arrivals in this trace. */
  durationS: number;
  /** Seconds of arrivals at full length (what `quick` scales down from). */
  fullDurationS: number;
  profile: string;
  engines: number;
  /** The fleet's prefill capacity, prompt tokens per second (capacity.ts). */
  capacityTokensPerS: number;
  contextWindow: number;
  /**
   * The run's mean load, steady traffic and bursts together, over the fleet's capacity (prefill, or the
   * API-server stage where that binds first); shared prefixes count in full.
   */
  load: number;
  /** The steady traffic's part of it: what the bursts leave of the mean; a burst adds `size` × this. */
  steadyLoad: number;
  prompt: PromptMix;
  /** Mean prompt of the steady traffic, tokens: the mix's mean plus the grouped share of prefixes. */
  meanPromptTokens: number;
  /** Steady requests per second. */
  rate: number;
  output: OutputSpec;
  tenants: TenantShare[];
  prefix: PrefixSharing | null;
  bursts: BurstParams[];
  /** Planned load averaged over the run, bursts included. */
  meanLoad: number;
  /** Planned load at the run's busiest moment (the steady load plus the bursts overlapping then). */
  peakLoad: number;
  /**
   * The engines' API-server stage at the busiest moment in requests (OfferedLoad.apiServerLoad's
   * measure): past 1, requests queue there whatever their length, and `load` understates the pressure.
   */
  peakApiServerLoad: number;
  offered: OfferedLoad;
}

export interface FamilyWorkload {
  /** Says its shape: `f03-load0.85-heavy-2bursts-4tenants-prefix40-4xh100-outmedium`. */
  name: string;
  params: WorkloadParams;
  fleet: FleetSpec;
  /** Sorted by t_ms; ids unique. */
  trace: TraceRequest[];
}

/**
 * `n` workloads of the family of `seed`, workload i depending only on (seed, i): a family of 5 is the
 * first 5 of a family of 30.
 * @example generateFamily({ n: 30, seed: 1 }).map((w) => w.name)
 */
export function generateFamily(opts: FamilyOptions): FamilyWorkload[] {
  if (!Number.isInteger(opts.n) || opts.n < 0)
    throw new Error(`family: n must be a whole number, got ${opts.n}`);
  return Array.from({ length: opts.n }, (_, index) =>
    generateWorkload({
      seed: opts.seed,
      index,
      ...(opts.quick !== undefined ? { quick: opts.quick } : {}),
      ...(opts.durationS !== undefined ? { durationS: opts.durationS } : {}),
    }),
  );
}

const round = (x: number, digits: number) => Number(x.toFixed(digits));

function drawOutputTokens(r: Random, o: OutputSpec): number {
  return o.kind === "short" ? uniformInt(r, o.min, o.max) : lognormalInt(r, o);
}

function workloadName(shape: WorkloadShape): string {
  const plural = (k: number, word: string) => `${k}${word}${k === 1 ? "" : "s"}`;
  return [
    shape.tag,
    `load${shape.load.toFixed(2)}`,
    shape.prompt.kind,
    plural(shape.bursts.length, "burst"),
    plural(shape.tenants.length, "tenant"),
    shape.prefix ? `prefix${Math.round(shape.prefix.fraction * 100)}` : "noprefix",
    `${shape.engines}x${shape.profile.split("-")[0]}`,
    `out${shape.output.kind.replace("-", "")}`,
  ].join("-");
}

/** Workload `index` of the family of `seed`. */
export function generateWorkload(opts: WorkloadOptions): FamilyWorkload {
  const shape = drawShape(opts.seed, opts.index);
  const fleet = familyFleet(shape.tag, shape.profile, shape.engines);
  const profile = getProfile(shape.profile);
  const durationS = opts.durationS ?? (opts.quick ? RANGES.quickDurationS : shape.durationS);
  const scale = durationS / shape.durationS;
  const capacity = fleetPrefillTokensPerS(fleet);
  // Requests per second the engines' API-server stage takes (one at a time, apiServerUs each): with short
  // prompts it binds before prefill does, so a load is of the tighter of the two.
  const apiServerRequestsPerS = (shape.engines * 1e6) / profile.apiServerUs;
  const requestsAtLoad = (load: number, meanPrompt: number) =>
    load * Math.min(capacity / meanPrompt, apiServerRequestsPerS);
  const rs = (purpose: string) => randomStream(opts.seed, `family:${opts.index}:trace:${purpose}`);
  const trace: TraceRequest[] = [];

  const request = (
    id: string,
    t: number,
    tenant: string,
    task: string,
    input: number,
    output: number,
    group: PrefixGroup | null,
  ): TraceRequest => ({
    t_ms: Math.floor(t),
    id,
    tenant,
    task,
    request_class: input + (group?.tokens ?? 0) > LONG_PROMPT_TOKENS ? "long" : "interactive",
    input_tokens: input,
    ...(group ? { prefix_group: group.id, prefix_tokens: group.tokens } : {}),
    lang: "en",
    max_tokens: output,
    stream: true,
  });

  // The bursts' windows come first (in `quick`, starts and lengths in proportion, each at least 2 s): the
  // drawn load is the run's mean, steady traffic and bursts together, so the steady part is what the
  // bursts leave of it, and a burst of size b runs at b × the steady load on top of it.
  const windows = shape.bursts.map((b) => {
    const lengthS = round(Math.min(durationS, Math.max(RANGES.quickMinBurstS, b.lengthS * scale)), 2);
    const startS = round(Math.min(b.startS * scale, durationS - lengthS), 2);
    return { startS, lengthS };
  });
  const steadyLoad =
    shape.load / (1 + shape.bursts.reduce((a, b, j) => a + (b.size * windows[j]!.lengthS) / durationS, 0));

  // The steady traffic: at the steady load, the whole run.
  const prefixMean = shape.prefix
    ? shape.prefix.fraction * shape.prefix.groups.reduce((a, g) => a + g.share * g.tokens, 0)
    : 0;
  const meanPromptTokens = promptMean(shape.prompt) + prefixMean;
  const rate = requestsAtLoad(steadyLoad, meanPromptTokens);
  const n = Math.round(rate * durationS);
  const times = arrivalsWithCount(n, 0, durationS * 1000, rs("steady:arrivals"));
  const lengths = stratifiedLengths(shape.prompt, n, rs("steady:lengths"));
  const tenants = quotaLabels(
    shape.tenants.map((t) => t.name),
    allocate(
      n,
      shape.tenants.map((t) => t.share),
    ),
    rs("steady:tenants"),
  );
  const groups: (PrefixGroup | null)[] = shape.prefix
    ? quotaLabels<PrefixGroup | null>(
        [...shape.prefix.groups, null],
        allocate(n, [
          ...shape.prefix.groups.map((g) => g.share * shape.prefix!.fraction),
          1 - shape.prefix.fraction,
        ]),
        rs("steady:prefix"),
      )
    : [];
  const outputs = rs("steady:outputs");
  for (let i = 0; i < n; i++) {
    const id = `${shape.tag}-s-${String(i + 1).padStart(6, "0")}`;
    const output = drawOutputTokens(outputs, shape.output);
    trace.push(request(id, times[i]!, tenants[i]!, STEADY_TASK, lengths[i]!, output, groups[i] ?? null));
  }

  // The bursts.
  const bursts: BurstParams[] = shape.bursts.map((b, j) => {
    const { startS, lengthS } = windows[j]!;
    const meanPrompt = promptMean(b.prompt);
    const burstRate = requestsAtLoad(b.size * steadyLoad, meanPrompt);
    const count = Math.round(burstRate * lengthS);
    const at = arrivalsWithCount(
      count,
      startS * 1000,
      Math.min(startS + lengthS, durationS) * 1000,
      rs(`burst${j + 1}:arrivals`),
    );
    const sizes = stratifiedLengths(b.prompt, count, rs(`burst${j + 1}:lengths`));
    const outs = rs(`burst${j + 1}:outputs`);
    for (let i = 0; i < count; i++) {
      const id = `${shape.tag}-b${j + 1}-${String(i + 1).padStart(6, "0")}`;
      trace.push(
        request(id, at[i]!, b.tenant, BURST_TASK, sizes[i]!, drawOutputTokens(outs, shape.output), null),
      );
    }
    return {
      tenant: b.tenant,
      startS,
      lengthS,
      size: b.size,
      documents: b.documents,
      prompt: b.prompt,
      meanPromptTokens: round(meanPrompt, 1),
      rate: round(burstRate, 3),
      requests: count,
    };
  });
  trace.sort((x, y) => x.t_ms - y.t_ms || (x.id < y.id ? -1 : 1));

  const burstLoad = (b: BurstParams) => b.size * steadyLoad;
  const meanLoad = steadyLoad + bursts.reduce((a, b) => a + (burstLoad(b) * b.lengthS) / durationS, 0);
  // The busiest moment starts with some burst: the steady value plus the bursts running at each start.
  const peak = (steadyValue: number, burstValue: (b: BurstParams) => number) =>
    Math.max(
      steadyValue,
      ...bursts.map((b) =>
        bursts
          .filter((o) => o.startS <= b.startS && b.startS < o.startS + o.lengthS)
          .reduce((a, o) => a + burstValue(o), steadyValue),
      ),
    );
  const apiServerLoad = (requestsPerS: number) =>
    (requestsPerS / shape.engines) * (profile.apiServerUs / 1e6);

  const promptOf = (r: TraceRequest) => (r.input_tokens ?? 0) + (r.prefix_tokens ?? 0);
  const sum = (reqs: TraceRequest[], f: (r: TraceRequest) => number) => reqs.reduce((a, r) => a + f(r), 0);
  const steady = trace.filter((r) => r.task === STEADY_TASK);
  const perS = (x: number) => x / durationS;
  const offered: OfferedLoad = {
    requests: trace.length,
    requestsPerS: round(perS(trace.length), 3),
    promptTokensPerS: Math.round(perS(sum(trace, promptOf))),
    outputTokensPerS: Math.round(perS(sum(trace, (r) => r.max_tokens))),
    steadyLoad: round(perS(sum(steady, promptOf)) / capacity, 3),
    totalLoad: round(perS(sum(trace, promptOf)) / capacity, 3),
    apiServerLoad: round(apiServerLoad(perS(trace.length)), 3),
    decodeLoad: round((perS(sum(trace, (r) => r.max_tokens)) / shape.engines) * (profile.beta2Us / 1e6), 3),
  };

  const params: WorkloadParams = {
    seed: opts.seed,
    index: opts.index,
    quick: opts.durationS === undefined && opts.quick === true,
    durationS,
    fullDurationS: shape.durationS,
    profile: shape.profile,
    engines: shape.engines,
    capacityTokensPerS: Math.round(capacity),
    contextWindow: fleetContextWindow(fleet),
    load: shape.load,
    steadyLoad: round(steadyLoad, 3),
    prompt: shape.prompt,
    meanPromptTokens: round(meanPromptTokens, 1),
    rate: round(rate, 3),
    output: shape.output,
    tenants: shape.tenants,
    prefix: shape.prefix,
    bursts,
    meanLoad: round(meanLoad, 3),
    peakLoad: round(
      peak(steadyLoad, (b) => burstLoad(b)),
      3,
    ),
    peakApiServerLoad: round(apiServerLoad(peak(rate, (b) => b.rate)), 3),
    offered,
  };
  return { name: workloadName(shape), params, fleet, trace };
}
