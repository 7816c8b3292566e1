// One generation of the running gateway: a config and everything built from it — each pool's endpoints,
// picker and retry budget, and the flow control. A reload builds the next generation beside the one in
// force and swaps it in one assignment; a request reads the generation once, when it arrives, and
// finishes under it. What a reload leaves unchanged carries over: an engine's state (its in-flight
// counts, health, learned prefill rate) when its options are the same, a pool's prefix index when its
// picker config is, a pool's queue when the pool is still there.

import { createHash } from "node:crypto";
import type { GatewayConfigSet } from "../config/config-set.js";
import { EndpointState, type EndpointStateOptions } from "../endpoints/endpoint-state.js";
import { FlowControl, type FlowListeners } from "../flow/flow-control.js";
import type { Placement } from "../flow/placement.js";
import { buildPickerProfile, createPrefixIndex, sessionHeader } from "../picker/picker-profile.js";
import type { Generation, PoolRuntime } from "../pipeline/pool-runtime.js";
import { RetryBudget } from "../proxy/retry-budget.js";
import { sendsToLegacy } from "../route/rollout-effect.js";

export type { Generation };

/** What a new generation changed in the set of engines, for the monitor and the drain. */
export interface EngineChanges {
  readonly added: readonly EndpointState[];
  /** In the previous generation and not in this one: drained (no new requests), then dropped. */
  readonly removed: readonly EndpointState[];
}

/** The options an engine's state is built from, as one string (a key is hashed, never kept). */
function optionsKey(o: EndpointStateOptions): string {
  const key = o.upstreamKey ? createHash("sha256").update(o.upstreamKey.reveal()).digest("hex") : null;
  return JSON.stringify({ ...o, upstreamKey: key });
}

/**
 * The engines `config` lists that `previous` does not run, as new states: a reload health-checks them
 * before the swap (buildGeneration's `prepared`), so a rollback to engines a bad version had removed
 * does not meet them unchecked — "not healthy yet" — for a probe interval.
 */
export function newEngines(config: GatewayConfigSet, previous: Generation): EndpointState[] {
  const running = new Set<string>();
  for (const ep of previous.engines.keys()) if (!ep.retired) running.add(optionsKey(ep.options));
  const urls = new Set<string>();
  const out: EndpointState[] = [];
  for (const pool of config.pools.values()) {
    for (const o of EndpointState.optionsForPool(pool)) {
      // The first pool to list a URL owns its state, as in buildGeneration.
      if (urls.has(o.url)) continue;
      urls.add(o.url);
      if (!running.has(optionsKey(o))) out.push(new EndpointState(o));
    }
  }
  return out;
}

/**
 * Builds a generation from `config`, reusing what `previous` had where nothing changed.
 * @example const { generation, changes } = buildGeneration(config, null, listeners);
 */
export function buildGeneration(
  config: GatewayConfigSet,
  previous: Generation | null,
  listeners: FlowListeners,
  prepared: readonly EndpointState[] = [],
): { generation: Generation; changes: EngineChanges } {
  const flow = new FlowControl<Placement>(config, listeners, previous?.flow ?? null);
  const known = new Map<string, EndpointState>();
  for (const ep of previous?.engines.keys() ?? []) known.set(optionsKey(ep.options), ep);
  for (const ep of prepared) known.set(optionsKey(ep.options), ep);
  // One state per engine: a pool that borrows another's endpoints (seed 004's batch pool borrowing the
  // long-context pods) shares its in-flight counts and scrapes.
  const byUrl = new Map<string, EndpointState>();
  const engines = new Map<EndpointState, string[]>();
  const pools = new Map<string, PoolRuntime>();
  for (const pool of config.pools.values()) {
    const endpoints = EndpointState.optionsForPool(pool).map((o) => {
      const shared = byUrl.get(o.url);
      if (shared) return shared;
      const kept = known.get(optionsKey(o));
      const ep = kept && !kept.retired ? kept : new EndpointState(o);
      byUrl.set(o.url, ep);
      return ep;
    });
    for (const e of endpoints) {
      // A pool's engines stand in for each other's cost model until each has learned its own; an
      // engine two pools list keeps the first pool's.
      if (!engines.has(e)) e.prefill.peers = endpoints.map((x) => x.prefill);
      engines.set(e, [...(engines.get(e) ?? []), pool.name]);
    }
    const pickerConfig = config.pickers.get(pool.name)!;
    const before = previous?.pools.get(pool.name);
    const samePicker =
      before !== undefined && JSON.stringify(before.picker.config) === JSON.stringify(pickerConfig);
    const session = sessionHeader(pickerConfig);
    const g = config.gateway;
    pools.set(pool.name, {
      name: pool.name,
      endpoints,
      retryBudget: new RetryBudget(g.retry.budgetPercent, g.retry.minRetryConcurrency),
      picker: samePicker
        ? before.picker
        : {
            config: pickerConfig,
            profile: buildPickerProfile(pickerConfig),
            index: createPrefixIndex(pickerConfig),
            sessionHeader: session ? session.toLowerCase() : null,
          },
    });
  }
  const before = new Set(previous?.engines.keys() ?? []);
  const added = [...engines.keys()].filter((e) => !before.has(e));
  const removed = [...before].filter((e) => !engines.has(e));
  const staged = sendsToLegacy(config.route);
  return { generation: { config, pools, flow, engines, staged }, changes: { added, removed } };
}
