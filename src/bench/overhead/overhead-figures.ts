// What one overhead run measured, per path, and the report it writes: the types the run, its targets
// and its Markdown share.

import type { Attempts } from "./overhead-cpu.js";
import type {
  LatencyFigures as LatencyRun,
  StreamingFigures as StreamingRun,
} from "./overhead-fixed-rate.js";
import type { PacedRelayFigures } from "./overhead-paced.js";
import type { relayRun, throughputRun } from "./overhead-saturated.js";
import type { PathName } from "./overhead-settings.js";

export type ByPath<T> = Partial<Record<PathName, T>>;
type Repeated<T> = T & Attempts;
export type LatencyFigures = Repeated<LatencyRun>;
export type StreamingFigures = Repeated<StreamingRun>;
export type ThroughputFigures = Repeated<Awaited<ReturnType<typeof throughputRun>>>;
export type RelayFigures = Repeated<Awaited<ReturnType<typeof relayRun>>>;

export interface OverheadReport {
  benchmark: "overhead";
  quick: boolean;
  machine: Record<string, string | number>;
  setup: Record<string, string | number>;
  latency: ByPath<LatencyFigures>;
  streaming: ByPath<StreamingFigures>;
  throughput: ByPath<ThroughputFigures>;
  relay: ByPath<RelayFigures>;
  /** The relay with paced engines: one frame per read (overhead-paced.ts). */
  paced_relay: ByPath<PacedRelayFigures>;
  targets: Target[];
}

export interface Target {
  name: string;
  target: string;
  measured: number | null;
  unit: string;
  /** null when it could not be measured (nginx missing). */
  met: boolean | null;
}
