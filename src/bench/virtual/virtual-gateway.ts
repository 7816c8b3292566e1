// A router's real endpoint picker in virtual time: the gateway's own EndpointState per engine (its
// in-flight accounting, its prefill view and learned TTFT fit) and pickEndpoint with a real picker
// profile — tokengate's, or a peer's algorithm (picker/peers/) — fed by the virtual fleet's events
// (sent, first token, finished) and by scrapes of the virtual engines every 100 ms, as the gateway is
// fed over HTTP. So a routing change is measured on a whole family of workloads in seconds, with the
// same code the gateway runs, with its queue when asked (`queue`: the saturation bounds and the fair
// queue's order; not the queue deadline nor the long-prefill guard); what it leaves out is the HTTP hop
// and the gateway's own CPU, which the runs over HTTP (`--real`) keep.

import type { SaturationBounds } from "../../config/saturation-bounds.js";
import { EndpointState } from "../../endpoints/endpoint-state.js";
import type { Lease } from "../../endpoints/lease.js";
import { FairQueue, type QueueEntry } from "../../flow/fair-queue.js";
import { placeable } from "../../flow/saturation.js";
import type { EndpointPickerConfig } from "../../picker/config/endpoint-picker-config.js";
import { pickEndpoint } from "../../picker/framework/pick-endpoint.js";
import type { PickRequest } from "../../picker/framework/types.js";
import { PEERS_READING_TEXT } from "../../picker/peers/peer-algorithm.js";
import { buildPickerProfile, createPrefixIndex } from "../../picker/picker-profile.js";
import { chainSalt, hashBlock } from "../../sim/block-hash.js";
import type { EngineConfig } from "../../sim/engine-config.js";
import { randomStream } from "../workload/distributions.js";
import type { VirtualEngineView, VirtualPolicy, VirtualRequest } from "./virtual-fleet.js";

export interface VirtualGatewayOptions {
  /** How often the engines are scraped, ms (the bench's pools scrape every 100 ms). */
  readonly scrapeMs?: number;
  /** Seeds the picker's random choices (ties, power of two). */
  readonly seed?: number;
  /** Filled with each request's predicted TTFT at its pick (ms from dispatch), for the prediction error. */
  readonly predictions?: Map<VirtualRequest, number>;
  /**
   * The gateway queue, as the pool's flow control runs it: requests wait while every engine is over
   * the saturation bounds (flow/saturation.ts, these bounds) and leave in the fair queue's order
   * (flow/fair-queue.ts: tenants' fair share, shortest prompt first within it). Absent: none, every
   * request placed on arrival (the peers run without one, as in the bench over HTTP).
   */
  readonly queue?: SaturationBounds;
}

/** Chained hashes of the prompt's full blocks of `blockTokens` token ids, at most `maxBlocks`. */
function tokenBlockHashes(tokens: Uint32Array, blockTokens: number, maxBlocks: number): Float64Array {
  const n = Math.min(Math.floor(tokens.length / blockTokens), maxBlocks);
  const out = new Float64Array(n);
  let parent = chainSalt("virtual", null);
  for (let b = 0; b < n; b++) {
    parent = hashBlock(parent, tokens, b * blockTokens, blockTokens);
    out[b] = parent;
  }
  return out;
}

/** Token ids as characters of the Basic Multilingual Plane, never a surrogate: one character a token. */
function tokensAsText(tokens: Uint32Array): string {
  let s = "";
  for (let i = 0; i < tokens.length; i += 4096) {
    s += String.fromCharCode(...Array.from(tokens.subarray(i, i + 4096), (t) => 0x100 + (t % 0xd000)));
  }
  return s;
}

/**
 * The policy named `name` that picks as a gateway with picker `config` would, over `replicas` engines
 * of `cfg`. No gateway queue: every request is placed when it arrives.
 */
export function virtualGateway(
  name: string,
  config: EndpointPickerConfig,
  cfg: EngineConfig,
  replicas: number,
  opts: VirtualGatewayOptions = {},
): VirtualPolicy {
  const scrapeMs = opts.scrapeMs ?? 100;
  const states = Array.from(
    { length: replicas },
    (_, i) =>
      new EndpointState({
        pool: "virtual",
        name: `e${i}`,
        url: `http://virtual-${i}.invalid`,
        dialect: "vllm",
        metrics: { path: "/metrics", intervalMs: scrapeMs },
        health: { path: "/health", intervalMs: 1000 },
      }),
  );
  for (const s of states) {
    s.health.recordHealth(true, 0, null, 1, 1);
    s.prefill.peers = states.map((x) => x.prefill);
  }
  const profile = buildPickerProfile(config);
  const index = createPrefixIndex(config);
  const tokensPerBlock = config.costModel.tokensPerBlock;
  const random = randomStream(opts.seed ?? 1, `virtual-gateway:${name}`);
  const hashes = new Map<VirtualRequest, Float64Array>();
  // A peer that reads the prompt as characters (SGLang's tree) reads its token ids as characters here:
  // one per token, so shared prefixes are shared strings and the match rate is the same share.
  const readsText = PEERS_READING_TEXT.has(config.algorithm);
  const texts = new Map<VirtualRequest, string>();
  const leases = new Map<VirtualRequest, Lease>();
  let now = 0;
  const bounds = opts.queue;
  const fair = new FairQueue<VirtualRequest>();
  const entries = new Map<VirtualRequest, QueueEntry<VirtualRequest>>();

  return {
    name,
    admit: bounds ? (_engines, nowMs) => placeable(states, bounds, 0, nowMs) !== null : null,
    queued(v) {
      const cost = v.promptTokens + v.trace.max_tokens;
      const init = { priority: 0, tenant: v.trace.tenant, cost, work: v.promptTokens };
      entries.set(v, fair.push(v, init, v.trace.t_ms));
    },
    next(held, nowMs) {
      const head = fair.peek(undefined, nowMs);
      const i = head === null ? -1 : held.indexOf(head.value);
      return Math.max(i, 0);
    },
    released(v) {
      const e = entries.get(v);
      if (e) fair.take(e);
      entries.delete(v);
    },
    scrapeMs,
    prompt(v, tokens) {
      hashes.set(v, tokenBlockHashes(tokens, tokensPerBlock, config.prefixIndex.maxPrefixBlocks));
      if (readsText) texts.set(v, tokensAsText(tokens));
    },
    pick(v: VirtualRequest, _engines: readonly VirtualEngineView[], nowMs?: number): number {
      now = nowMs ?? now;
      const blockHashes = hashes.get(v) ?? new Float64Array(0);
      hashes.delete(v);
      const request: PickRequest = {
        model: "virtual",
        modelVersion: null,
        lora: null,
        inputTokens: v.promptTokens,
        maxTokens: v.trace.max_tokens,
        blockHashes,
        sessionKey: null,
        ...(readsText ? { promptText: texts.get(v) ?? "" } : {}),
      };
      texts.delete(v);
      const r = pickEndpoint(profile, { request, now, prefixIndex: index, random }, states);
      let ep = r.endpoint;
      if (ep === null) {
        // Nothing left after the filters: the least busy engine, as a fail-open gateway would.
        ep = states.reduce((a, b) => (b.inflightTokens < a.inflightTokens ? b : a));
      }
      const lease = ep.acquire(
        v.promptTokens + v.trace.max_tokens,
        { uncached: r.uncachedTokens ?? v.promptTokens, stream: true, prompt: v.promptTokens },
        now,
      );
      leases.set(v, lease);
      // What the gateway records (pipeline/attempt-start.ts), from dispatch.
      const predicted = lease.prefill?.estimatedMs ?? r.predictedTtftMs;
      if (predicted !== null) opts.predictions?.set(v, predicted);
      index.record(ep.name, blockHashes);
      return states.indexOf(ep);
    },
    firstToken(v, nowMs) {
      leases.get(v)?.firstToken(nowMs);
    },
    finished(v, nowMs) {
      const lease = leases.get(v);
      lease?.release(nowMs);
      lease?.prefill?.reportOutput(v.trace.max_tokens);
      leases.delete(v);
    },
    scrape(engines, nowMs) {
      for (const e of engines) {
        states[e.index]!.recordScrape(
          {
            waiting: e.waitingRequests,
            running: e.runningRequests,
            kvUsage: e.kvUsage,
            blockSize: cfg.blockSize,
            numGpuBlocks: cfg.numGpuBlocks,
            loras: null,
            prefixHits: null,
            prefixQueries: null,
            prefixHitRateGauge: null,
            ttftBuckets: null,
          },
          nowMs,
          0,
        );
      }
    },
  };
}
