// LoRA adapter loads as the engines count them: each simulated replica's `loraLoads` (GET /admin/state)
// and its `tokengate_sim_lora_loads_total` counter (/metrics), read before and after a router's run.
// The harness only subtracts: it never infers a load from where it sent a request.

import { parsePrometheusText } from "../../telemetry/prom-parse.js";
import type { LoraLoadResult } from "../results.js";
import type { EngineTarget } from "../traffic/engine-sampler.js";

export const LORA_LOADS_METRIC = "tokengate_sim_lora_loads_total";

/** One engine's two counts of its adapter loads so far; `counter` null when its /metrics has none. */
export interface EngineLoraLoads {
  state: number;
  counter: number | null;
}

/** Every engine's adapter loads so far, by endpoint name. */
export async function readLoraLoads(
  targets: readonly EngineTarget[],
): Promise<Record<string, EngineLoraLoads>> {
  const out: Record<string, EngineLoraLoads> = {};
  await Promise.all(
    targets.map(async (t) => {
      const state = (await (await fetch(`${t.url}/admin/state`)).json()) as { loraLoads?: unknown };
      const text = await (await fetch(`${t.url}/metrics`)).text();
      const samples = parsePrometheusText(text, { only: new Set([LORA_LOADS_METRIC]) }).get(
        LORA_LOADS_METRIC,
      );
      out[t.name] = {
        state: typeof state.loraLoads === "number" ? state.loraLoads : 0,
        counter: samples && samples.length > 0 ? samples.reduce((a, s) => a + s.value, 0) : null,
      };
    }),
  );
  return out;
}

/**
 * Loads during a run: after minus before, per endpoint and in all. A count that went down (the engine
 * was reset or restarted during the run) counts from zero, as a Prometheus `increase()` would.
 */
export function loraLoadsDuring(
  targets: readonly EngineTarget[],
  before: Record<string, EngineLoraLoads>,
  after: Record<string, EngineLoraLoads>,
): LoraLoadResult {
  const increase = (b: number, a: number) => (a >= b ? a - b : a);
  const byEndpoint: Record<string, number> = {};
  let total = 0;
  let counterTotal: number | null = 0;
  for (const t of targets) {
    const b = before[t.name] ?? { state: 0, counter: 0 };
    const a = after[t.name] ?? { state: 0, counter: null };
    const n = increase(b.state, a.state);
    byEndpoint[t.name] = n;
    total += n;
    if (counterTotal !== null && a.counter !== null) counterTotal += increase(b.counter ?? 0, a.counter);
    else counterTotal = null;
  }
  return { total, by_endpoint: byEndpoint, counter_total: counterTotal };
}
