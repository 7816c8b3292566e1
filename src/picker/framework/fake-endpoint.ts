// A plain PickerEndpoint for the picker's tests and micro-benchmark: fresh metrics unless told otherwise.

import type { PickerEndpoint, PickRequest } from "./types.js";

export interface FakeEndpoint extends PickerEndpoint {
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

export function fakeEndpoint(name: string, over: Partial<FakeEndpoint> = {}): FakeEndpoint {
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
    metricsFresh(this: FakeEndpoint) {
      return this.fresh;
    },
    ...over,
  };
}

export function pickRequest(over: Partial<PickRequest> = {}): PickRequest {
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

/** A deterministic `random` for tests (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
