// What a benchmark scenario declares: the simulated hardware (one or more fleet topologies), which
// routers run on which topology, tokengate's config for it, and the workload as a trace.

import type { PeerName } from "../../picker/peers/peer-algorithm.js";
import type { FleetSpec } from "../../sim/fleet.js";
import type { TraceRequest } from "../trace-formats/trace.js";

/** Routers the harness knows. nginx-backed ones are skipped (and reported so) when nginx is missing. */
export type RouterName =
  | "tokengate"
  | "least-request" // nginx least_conn
  | "round-robin" // nginx default
  | "random" // nginx random
  | "prefix-sticky" // nginx consistent hash on the X-Prefix-Group header: the prefix-affinity upper bound
  | PeerName; // a peer's default algorithm inside tokengate's gateway (bench/peer-config.ts)

export interface Topology {
  /** e.g. "original-4-pods", "split-pools". */
  name: string;
  description: string;
  /** Simulated engines; ports are 0 (the harness picks free ones). Group names are referenced below. */
  fleet: FleetSpec;
  /** Total simulated GPUs, for the report (the same across topologies of one scenario). */
  gpus: number;
  routers: RouterName[];
  /**
   * tokengate's config for this topology as YAML texts by file name (InferencePool, InferenceRoute,
   * GatewayConfig with `allowAnonymous: true`, listen port 0), given each fleet group's endpoint URLs.
   */
  gatewayConfig(endpoints: Record<string, string[]>): Record<string, string>;
}

export interface GenerateOptions {
  seed: number;
  /** Shorter run for CI smoke tests: the whole scenario under a minute. */
  quick: boolean;
  /** Overrides the scenario's duration, seconds. */
  durationS?: number;
}

export interface Scenario {
  name: string;
  description: string;
  topologies: Topology[];
  /** Deterministic for a seed. Sorted by t_ms. */
  generate(opts: GenerateOptions): TraceRequest[];
  /** Class names of seed 004's acceptance table: which class is "live" and which is "long". */
  liveClass: string;
  longClass: string | null;
  /** The class of batch work, when the scenario has one: reports count it lost or done, per phase. */
  batchClass?: string;
}
