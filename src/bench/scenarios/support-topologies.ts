// Seed 004's hardware, 8 simulated GPUs two ways: the original 4 identical pods behind one pool, and the
// split pools (online, long, batch) behind seed 004's InferenceRoute, with tokengate's config for each.

import type { ReplicaGroup } from "../../sim/fleet.js";
import { fleetGpus, fleetOf, replicaGroup } from "./fleet-group.js";
import { gatewayConfigDoc, inferencePoolDoc, inferenceRouteDoc, yamlDocuments } from "./gateway-yaml.js";
import type { Topology } from "./scenario.js";

export const LIVE_TASK = "live_ticket_summary";
export const BATCH_TASK = "batch_recompute_summary";
/** The model name callers send (seed 004's alias); the pools serve the models below. */
export const SUMMARY_ALIAS = "summary-default";
const LONG_MODEL = "summary-14b-long";

const original = fleetOf("support-original", [
  replicaGroup("summary-pods", 4, "h100x2-14b-long", LONG_MODEL, { maxModelLen: 65_536 }),
]);

// Seed 004's pools, the online one with 4 single-GPU pods (seed: 3) so both topologies have 8 GPUs.
const split = fleetOf("support-split", [
  replicaGroup("summary-online", 4, "h100-llama8b", "summary-7b", { maxModelLen: 8192 }),
  replicaGroup("summary-long", 1, "h100x2-14b-long", LONG_MODEL, { maxModelLen: 65_536, maxNumSeqs: 8 }),
  replicaGroup("summary-batch", 1, "h100x2-14b-long", LONG_MODEL, { maxModelLen: 65_536, maxNumSeqs: 16 }),
]);

export const originalTopology: Topology = {
  name: "original-4-pods",
  description: "4 identical pods × 2 GPUs, one 14B long-context model for every request (seed 004 before)",
  fleet: original,
  gpus: fleetGpus(original),
  routers: ["tokengate", "least-request", "round-robin", "random"],
  gatewayConfig: (endpoints) => {
    const group = original.groups[0]!;
    return {
      "pools.yaml": yamlDocuments([
        inferencePoolDoc(SHARED_LIVE_POOL, group, endpoints, { flowControl: { maxWaiting: 8 } }),
        inferencePoolDoc(SHARED_BATCH_POOL, group, endpoints, { flowControl: SHARED_BATCH_FLOW }),
      ]),
      "route.yaml": yamlDocuments([sharedRoute()]),
      "gateway.yaml": yamlDocuments([gatewayConfigDoc("support-summary-bench")]),
    };
  },
};

/** tokengate on the original hardware: a live pool and a batch pool over the same four pods. */
const SHARED_LIVE_POOL = "summary-pods";
const SHARED_BATCH_POOL = "summary-pods-batch";
/**
 * Batch work may hold up to ~2 recomputes' tokens per pod (input + max output, live requests on the pod
 * included), and waits in the gateway otherwise: a live summary then finds at most two 52k prefills ahead
 * of it on a pod, and the picker's predicted-delay scorer steers it to a pod with fewer.
 */
const SHARED_BATCH_FLOW = { maxWaiting: 1, maxInflightTokens: 120_000 };

/**
 * The same pods as the baselines, configured as a tokengate user would for shared hardware: live
 * requests in a pool of their own (priority 100), batch recomputes in a pool over the same engines
 * (priority 10, gated by SHARED_BATCH_FLOW), and the batch pause watching the live pool.
 */
function sharedRoute(): object {
  return inferenceRouteDoc("support-summary-route", "support-summary-original-r2", {
    knownTasks: [BATCH_TASK],
    modelAliases: {
      [SUMMARY_ALIAS]: {
        defaultPool: SHARED_LIVE_POOL,
        pools: [
          {
            name: SHARED_LIVE_POOL,
            maxInputTokens: 65_536,
            maxOutputTokens: 2200,
            maxQueueMs: 12_000,
            priority: 100,
          },
          {
            name: SHARED_BATCH_POOL,
            maxInputTokens: 65_536,
            maxOutputTokens: 2200,
            maxQueueMs: 300_000,
            priority: 10,
          },
        ],
      },
    },
    rules: [
      {
        name: "live-summary",
        when: { taskIn: [LIVE_TASK, "agent_assist_summary"] },
        routeTo: SHARED_LIVE_POOL,
      },
      {
        name: "quality-batch",
        when: { requestClass: "batch" },
        routeTo: SHARED_BATCH_POOL,
        queuePolicy: { pauseWhen: benchPause(SHARED_LIVE_POOL), fallbackOptions: ["retry_later"] },
      },
    ],
  });
}

/**
 * The seed pauses at 2,000 ms, just above its live target (1,800 ms); issue 6's target is 1,000 ms, so
 * the bench pauses there, over a 20 s window, resuming below 800 ms held for 10 s.
 */
function benchPause(pool: string): object {
  return {
    pool,
    ttftP95MsGt: 1000,
    windowSeconds: 20,
    resumeBelowMs: 800,
    resumeAfterSeconds: 10,
    minSamples: 20,
    retryAfterSeconds: 900,
  };
}

export const splitTopology: Topology = {
  name: "split-pools",
  description:
    "seed 004's pools: summary-online 4 × 1 GPU (7B, 8K window), summary-long 1 × 2 GPUs, summary-batch 1 × 2 GPUs",
  fleet: split,
  gpus: fleetGpus(split),
  routers: ["tokengate"],
  gatewayConfig: (endpoints) => ({
    "pools.yaml": yamlDocuments(splitPools(endpoints)),
    "route.yaml": yamlDocuments([splitRoute()]),
    "gateway.yaml": yamlDocuments([gatewayConfigDoc("support-summary-bench")]),
  }),
};

/**
 * Seed 004: "批处理池可以在夜间借用长上下文池，但白天遇到在线压力时会暂停取任务" — the batch pool borrows the
 * long-context pod as well as its own, and the gateway keeps the engines' queues short (one waiting
 * request, KV under 85%) so the long backlog waits where it can still be reordered and paused.
 */
function splitPools(endpoints: Record<string, string[]>): object[] {
  const [online, long, batch] = split.groups as [ReplicaGroup, ReplicaGroup, ReplicaGroup];
  return [
    inferencePoolDoc(online.name, online, endpoints),
    inferencePoolDoc(long.name, long, endpoints),
    inferencePoolDoc(batch.name, batch, endpoints, {
      borrow: [long],
      flowControl: { maxWaiting: 1, maxKvCacheUsage: 0.85, maxInflightTokens: 120_000 },
    }),
  ];
}

/** Seed 004's InferenceRoute as examples/support-summary/route.yaml has it, batch pause included. */
function splitRoute(): object {
  return inferenceRouteDoc("support-summary-route", "support-summary-2026-06-15-r3", {
    knownTasks: [BATCH_TASK],
    modelAliases: {
      [SUMMARY_ALIAS]: {
        defaultPool: "summary-online",
        pools: [
          {
            name: "summary-online",
            maxInputTokens: 8192,
            maxOutputTokens: 600,
            maxQueueMs: 800,
            priority: 100,
          },
          {
            name: "summary-long",
            minInputTokens: 8193,
            maxInputTokens: 65_536,
            maxOutputTokens: 2200,
            maxQueueMs: 12_000,
            priority: 50,
          },
          {
            name: "summary-batch",
            maxInputTokens: 65_536,
            maxOutputTokens: 2200,
            maxQueueMs: 300_000,
            priority: 10,
          },
        ],
      },
    },
    rules: [
      {
        name: "live-summary-short",
        when: { taskIn: [LIVE_TASK, "agent_assist_summary"], inputTokensLte: 8192 },
        routeTo: "summary-online",
      },
      {
        name: "live-summary-long",
        when: { taskIn: [LIVE_TASK], inputTokensGt: 8192 },
        routeTo: "summary-long",
      },
      {
        name: "quality-batch",
        when: { requestClass: "batch" },
        routeTo: "summary-batch",
        queuePolicy: {
          pauseWhen: benchPause("summary-online"),
          fallbackOptions: ["retry_later", "short_summary_only"],
        },
      },
    ],
  });
}
