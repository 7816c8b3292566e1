// Builds a ScoringContext directly, for scorer tests and `route explain`-style what-ifs.

import { DEFAULT_COST_MODEL } from "../picker/framework/cost-model.js";
import type { PickRequest, ScoringContext, Signals } from "../picker/framework/types.js";
import { pickRequest } from "./fake-endpoint.js";

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
