// A PickerEndpoint with fixed figures and fresh metrics unless told otherwise: what the picker's
// micro-benchmarks pick among, and what its tests build their endpoints from.

import type { PickerEndpoint, PickRequest } from "./types.js";

export interface StaticEndpoint extends PickerEndpoint {
  name: string;
  healthy: boolean;
  draining: boolean;
  ejectedUntil: number;
  inflightRequests: number;
  inflightTokens: number;
  waiting: number | null;
  running: number | null;
  kvUsage: number | null;
  blockSize: number | null;
  numGpuBlocks: number | null;
  loras: PickerEndpoint["loras"];
  model?: string | null;
  modelVersion?: string | null;
  fresh: boolean;
  scrapedAt?: number | null;
}

export function staticEndpoint(name: string, over: Partial<StaticEndpoint> = {}): StaticEndpoint {
  return {
    name,
    healthy: true,
    draining: false,
    ejectedUntil: 0,
    inflightRequests: 0,
    inflightTokens: 0,
    waiting: 0,
    running: 0,
    kvUsage: 0.1,
    blockSize: 16,
    numGpuBlocks: 10_000,
    loras: null,
    fresh: true,
    metricsFresh(this: StaticEndpoint) {
      return this.fresh;
    },
    ...over,
  };
}

export function staticPickRequest(over: Partial<PickRequest> = {}): PickRequest {
  return {
    model: "m",
    modelVersion: null,
    lora: null,
    inputTokens: 1000,
    maxTokens: 100,
    blockHashes: [],
    sessionKey: null,
    ...over,
  };
}
