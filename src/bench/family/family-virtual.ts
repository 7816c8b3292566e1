// Every router on every workload of a generated family, in virtual time (`tokengate bench --family N`):
// nginx's two load-aware balancers, tokengate's picker and the peers' algorithms (each the gateway's own
// EndpointState and pickEndpoint, virtual/virtual-gateway.ts; tokengate with its gateway queue), on the
// workload's engines with the simulator's scheduler and step law. Seconds per workload, so a change is
// judged on dozens of workloads it was never tuned on. Left out: the HTTP hop and the gateway's CPU
// (`--real` keeps them), and prefix-sticky (its consistent hash needs the HTTP path).

import { DEFAULT_SATURATION } from "../../config/saturation-bounds.js";
import { parseEndpointPickerConfig } from "../../picker/config/endpoint-picker-config.js";
import { makeEngineConfig } from "../../sim/engine-config.js";
import { percentile } from "../stats.js";
import { runVirtual, type VirtualPolicy, type VirtualRequest } from "../virtual/virtual-fleet.js";
import { virtualGateway } from "../virtual/virtual-gateway.js";
import { leastRequest, roundRobin } from "../virtual/virtual-policies.js";
import type { FamilyWorkload } from "./generate.js";

/** The routers a family runs in virtual time, tokengate first. */
export const FAMILY_VIRTUAL_ROUTERS = [
  "tokengate",
  "least-request",
  "round-robin",
  "llm-d",
  "sglang-cache-aware",
  "dynamo-kv",
  "aibrix-prefix-cache",
] as const;
export type FamilyRouter = (typeof FAMILY_VIRTUAL_ROUTERS)[number];

export interface FamilyFigures {
  /** TTFT over every request, ms. */
  p50: number;
  p90: number;
  p99: number;
  /** The bursting tenants' requests during their bursts: TTFT P90; null without a burst. */
  burstP90: number | null;
  /** Every other tenant's requests during a burst: TTFT P99; null without a burst or such requests. */
  othersDuringBurstP99: number | null;
  /**
   * The gateway's TTFT estimate at each pick against the TTFT from dispatch: P90 of |error| / actual, %.
   * Only for routers that run in tokengate's gateway (its picker or a peer's); absent for the others.
   */
  predictionP90?: number | null;
}

export interface FamilyWorkloadResult {
  name: string;
  requests: number;
  load: number;
  routers: Record<string, FamilyFigures>;
}

function policyOf(
  router: FamilyRouter,
  w: FamilyWorkload,
  seed: number,
  predictions: Map<VirtualRequest, number>,
): VirtualPolicy {
  if (router === "least-request") return leastRequest();
  if (router === "round-robin") return roundRobin();
  const g = w.fleet.groups[0]!;
  const cfg = makeEngineConfig(g.profile, g.model, g.engine);
  const spec = router === "tokengate" ? {} : { algorithm: router };
  const parsed = parseEndpointPickerConfig(spec);
  if (!parsed.ok) throw new Error(`family: picker config for ${router}: ${JSON.stringify(parsed.errors)}`);
  // tokengate with its gateway queue, under the pool's default bounds; the peers without one, as they
  // run over HTTP (bench/peer-config.ts).
  const queue = router === "tokengate" ? { queue: DEFAULT_SATURATION } : {};
  return virtualGateway(router, parsed.config, cfg, g.replicas, { seed, predictions, ...queue });
}

/** TTFT figures of one run, with the bursts' tenants apart. */
export function familyFigures(
  w: FamilyWorkload,
  reqs: readonly VirtualRequest[],
  predictions?: ReadonlyMap<VirtualRequest, number>,
): FamilyFigures {
  const ttft = (rs: readonly VirtualRequest[]) => rs.map((r) => r.firstTokenMs - r.trace.t_ms);
  const all = ttft(reqs);
  const bursts = w.params.bursts;
  const inBurst = (r: VirtualRequest) =>
    bursts.some((b) => r.trace.t_ms >= b.startS * 1000 && r.trace.t_ms < (b.startS + b.lengthS) * 1000);
  const bursting = new Set(bursts.map((b) => b.tenant));
  const burstReqs = reqs.filter((r) => inBurst(r) && bursting.has(r.trace.tenant));
  const others = reqs.filter((r) => inBurst(r) && !bursting.has(r.trace.tenant));
  return {
    p50: percentile(all, 50),
    p90: percentile(all, 90),
    p99: percentile(all, 99),
    burstP90: burstReqs.length > 0 ? percentile(ttft(burstReqs), 90) : null,
    othersDuringBurstP99: others.length > 0 ? percentile(ttft(others), 99) : null,
    ...(predictions && predictions.size > 0 ? { predictionP90: predictionP90(reqs, predictions) } : {}),
  };
}

/** P90 of |predicted − actual| / actual over the requests with a prediction, %, from dispatch. */
function predictionP90(
  reqs: readonly VirtualRequest[],
  predictions: ReadonlyMap<VirtualRequest, number>,
): number | null {
  const errors: number[] = [];
  for (const r of reqs) {
    const predicted = predictions.get(r);
    const actual = r.firstTokenMs - r.dispatchedMs;
    if (predicted === undefined || !(actual > 0)) continue;
    errors.push((Math.abs(predicted - actual) / actual) * 100);
  }
  return errors.length > 0 ? percentile(errors, 90) : null;
}

/** Runs every router on workload `w` (one group of engines, as the family draws them). */
export function runFamilyWorkload(w: FamilyWorkload, seed: number): FamilyWorkloadResult {
  const g = w.fleet.groups[0];
  if (!g || w.fleet.groups.length !== 1) throw new Error(`family: ${w.name} must have one group of engines`);
  const cfg = makeEngineConfig(g.profile, g.model, g.engine);
  const routers = {} as Record<FamilyRouter, FamilyFigures>;
  for (const router of FAMILY_VIRTUAL_ROUTERS) {
    const predictions = new Map<VirtualRequest, number>();
    const reqs = runVirtual(w.trace, cfg, g.replicas, policyOf(router, w, seed, predictions));
    routers[router] = familyFigures(w, reqs, predictions);
  }
  return { name: w.name, requests: w.trace.length, load: w.params.load, routers };
}
