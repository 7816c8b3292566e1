// Builds a ScoringContext directly, for scorer tests and `route explain`-style what-ifs.

import { DEFAULT_COST_MODEL } from "./cost-model.js";
import { pickRequest } from "./fake-endpoint.js";
import type { PickRequest, ScoringContext, Signals } from "./types.js";

export function scoringContext(
  over: { request?: Partial<PickRequest>; signals?: Signals; matchedBlocks?: number[] } = {},
): ScoringContext {
  return {
    request: pickRequest(over.request),
    now: 0,
    signals: over.signals ?? "metrics",
    matchedBlocks: over.matchedBlocks ?? [],
    delayMs: [],
    cost: DEFAULT_COST_MODEL,
  };
}
