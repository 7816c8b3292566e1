// A pool of simulated engines in virtual time: the simulator's own scheduler (sim/scheduler.ts), step
// law (β0 + β1·prefill + β2·decode + β3·context) and one-at-a-time API-server stage, with no HTTP and
// no wall clock. It replays a trace under a routing policy in about a second, so a routing or
// queue-ordering idea can be measured before it is built, and a target checked against what any
// router could reach on these engines. What it leaves out: the network, the gateway's own CPU, LoRA,
// multi-turn sessions' closed loop (each turn arrives at its t_ms) and the engines' metric scrapes.

import type { EngineConfig } from "../../sim/engine-config.js";
import { EngineRequest, type RequestSink } from "../../sim/engine-request.js";
import { KvCache } from "../../sim/kv-cache.js";
import { LoraSlots } from "../../sim/lora-slots.js";
import { hashString } from "../../sim/rng.js";
import {
  type SchedulerConfig,
  type StepBatch,
  schedulerConfig,
  scheduleStep,
  stepDurationUs,
} from "../../sim/scheduler.js";
import { DEFAULT_HASH_BLOCK_TOKENS, type TraceRequest } from "../trace-formats/trace.js";

/** One request's life in the model, in ms from the run's start. */
export interface VirtualRequest {
  readonly trace: TraceRequest;
  readonly promptTokens: number;
  dispatchedMs: number;
  firstTokenMs: number;
  endMs: number;
  engine: number;
}

/** What a routing policy may read of an engine, as the gateway's own accounting would know it. */
export interface VirtualEngineView {
  readonly index: number;
  readonly cfg: EngineConfig;
  /** Requests sent and not finished. */
  readonly inflight: number;
  /** Prompt tokens sent and not yet first-tokened. */
  readonly pendingPrefillTokens: number;
  /** Sequences past their first token. */
  readonly decoding: number;
  /** Requests still in the API-server stage. */
  readonly inApiServer: number;
  /** What a metrics scrape would read now: requests waiting for the scheduler, running, KV use (0..1). */
  readonly waitingRequests: number;
  readonly runningRequests: number;
  readonly kvUsage: number;
}

/** Where each request goes and when: `pick` at dispatch; `admit` says whether the queue may release now. */
export interface VirtualPolicy {
  readonly name: string;
  pick(req: VirtualRequest, engines: readonly VirtualEngineView[], nowMs?: number): number;
  /** Null: no gateway queue (dispatch on arrival). Else the queue releases while this returns true. */
  admit: ((engines: readonly VirtualEngineView[], nowMs: number) => boolean) | null;
  /** Index of the held request to release next (FIFO when absent). */
  next?(held: readonly VirtualRequest[], nowMs: number): number;
  /** Told of each request the queue holds, with those it held already. */
  queued?(req: VirtualRequest, held: readonly VirtualRequest[]): void;
  /** Told of each release, e.g. to charge a tenant's counter. */
  released?(req: VirtualRequest): void;
  /** The prompt's token ids, before `pick`, for a policy that hashes prompts (virtual-gateway.ts). */
  prompt?(req: VirtualRequest, tokens: Uint32Array): void;
  /** A request's life on its engine: sent, first token, finished (virtual-gateway.ts keeps leases). */
  dispatched?(req: VirtualRequest, nowMs: number): void;
  firstToken?(req: VirtualRequest, nowMs: number): void;
  finished?(req: VirtualRequest, nowMs: number): void;
  /** Every `scrapeMs` of virtual time: the engines as a metrics scrape reads them. */
  scrape?(engines: readonly VirtualEngineView[], nowMs: number): void;
  readonly scrapeMs?: number;
}

class VirtualEngine implements VirtualEngineView {
  readonly waiting: EngineRequest[] = [];
  running: EngineRequest[] = [];
  readonly kv: KvCache;
  readonly lora = new LoraSlots(1);
  readonly api: { readyMs: number; req: EngineRequest }[] = [];
  apiFreeMs = 0;
  batch: StepBatch | null = null;
  stepEndMs = 0;
  inflight = 0;
  pendingPrefillTokens = 0;
  decoding = 0;
  private readonly sched: SchedulerConfig;

  constructor(
    readonly index: number,
    readonly cfg: EngineConfig,
  ) {
    this.kv = new KvCache(cfg.numGpuBlocks, cfg.blockSize, cfg.enablePrefixCaching);
    this.sched = schedulerConfig(cfg);
  }

  get inApiServer(): number {
    return this.api.length;
  }

  get waitingRequests(): number {
    return this.waiting.length + this.api.length;
  }

  get runningRequests(): number {
    return this.running.length;
  }

  get kvUsage(): number {
    return 1 - this.kv.numFreeBlocks / this.cfg.numGpuBlocks;
  }

  submit(req: EngineRequest, nowMs: number): void {
    const readyMs = Math.max(nowMs, this.apiFreeMs) + this.cfg.apiServerUs / 1000;
    this.apiFreeMs = readyMs;
    this.api.push({ readyMs, req });
    this.inflight++;
    this.pendingPrefillTokens += req.promptLen;
  }

  /** The API server hands its oldest request to the scheduler. */
  leaveApi(nowMs: number): void {
    const { req } = this.api.shift()!;
    req.status = "waiting";
    this.waiting.push(req);
    if (!this.batch) this.startStep(nowMs);
  }

  startStep(nowMs: number): void {
    const b = scheduleStep(this.sched, this);
    if (b.items.length === 0) {
      this.batch = null;
      return;
    }
    this.batch = b;
    this.stepEndMs = nowMs + stepDurationUs(this.cfg, b) / 1000;
  }

  completeStep(): void {
    const b = this.batch!;
    const at = this.stepEndMs;
    let finished = false;
    for (const { req, numNewTokens } of b.items) {
      req.numComputed += numNewTokens;
      this.kv.registerFullBlocks(req, req.numComputed);
      if (req.numComputed < req.numTokens) continue;
      req.appendOutputToken(this.cfg.blockSize);
      if (req.outputLen === 1) {
        req.firstTokenAt = at;
        this.pendingPrefillTokens -= req.promptLen;
        this.decoding++;
      }
      if (req.outputLen >= req.targetOutputTokens) {
        this.kv.release(req);
        req.status = "finished";
        req.finishedAt = at;
        this.inflight--;
        this.decoding--;
        finished = true;
      }
    }
    if (finished) this.running = this.running.filter((r) => r.status === "running");
    this.startStep(at);
  }
}

const NO_SINK: RequestSink = { onToken() {}, onFinish() {} };

/**
 * Token ids for a request: its prefix group's system prompt (shared, so cacheable), then its own: with
 * `hash_ids`, block k's tokens come from id k alone (shared exactly as the ids are, as in
 * workload/block-text.ts), cut to `input_tokens`, and any tokens past the ids' blocks are unique.
 */
function promptOf(t: TraceRequest, unique: () => number): Uint32Array {
  const prefix = t.prefix_group !== undefined ? (t.prefix_tokens ?? 0) : 0;
  const own = t.input_tokens ?? Math.ceil((t.input_text?.length ?? 0) / 4);
  const out = new Uint32Array(prefix + Math.max(1, own));
  let h = 0;
  for (const ch of t.prefix_group ?? "") h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193);
  for (let i = 0; i < prefix; i++) out[i] = (h + i * 7919) >>> 0;
  let at = prefix;
  if (t.hash_ids !== undefined) {
    const size = t.hash_block_tokens ?? DEFAULT_HASH_BLOCK_TOKENS;
    for (const id of t.hash_ids) {
      const b = hashString(`block:${id}`);
      for (let i = 0; i < size && at < out.length; i++) out[at++] = (b + i * 7919) >>> 0;
    }
  }
  for (let i = at; i < out.length; i++) out[i] = unique();
  return out;
}

/** Replays `trace` on `replicas` engines of `cfg` under `policy`; every request finishes. */
export function runVirtual(
  trace: readonly TraceRequest[],
  cfg: EngineConfig,
  replicas: number,
  policy: VirtualPolicy,
): VirtualRequest[] {
  const engines = Array.from({ length: replicas }, (_, i) => new VirtualEngine(i, cfg));
  let next = 1 << 30;
  const unique = () => next++;
  const all: VirtualRequest[] = [];
  const owner = new Map<EngineRequest, VirtualRequest>();
  const held: VirtualRequest[] = [];
  const prompts = new Map<VirtualRequest, Uint32Array>();

  const dispatch = (v: VirtualRequest, nowMs: number) => {
    const tokens = prompts.get(v)!;
    policy.prompt?.(v, tokens);
    const e = engines[policy.pick(v, engines, nowMs)]!;
    prompts.delete(v);
    const req = new EngineRequest(
      {
        id: v.trace.id,
        promptTokens: tokens,
        maxTokens: v.trace.max_tokens,
        targetOutputTokens: v.trace.max_tokens,
        lora: null,
        salt: 1,
        outputTokenId: () => unique(),
        sink: NO_SINK,
      },
      cfg.blockSize,
    );
    v.dispatchedMs = nowMs;
    v.engine = e.index;
    owner.set(req, v);
    e.submit(req, nowMs);
    policy.dispatched?.(v, nowMs);
  };
  const release = (nowMs: number) => {
    while (held.length > 0 && policy.admit!(engines, nowMs)) {
      const [v] = held.splice(policy.next?.(held, nowMs) ?? 0, 1);
      policy.released?.(v!);
      dispatch(v!, nowMs);
    }
  };

  let ai = 0;
  const scrapeMs = policy.scrape ? (policy.scrapeMs ?? 100) : Number.POSITIVE_INFINITY;
  let nextScrape = policy.scrape ? 0 : Number.POSITIVE_INFINITY;
  for (;;) {
    let at = ai < trace.length ? trace[ai]!.t_ms : Number.POSITIVE_INFINITY;
    let step: VirtualEngine | null = null;
    let api: VirtualEngine | null = null;
    for (const e of engines) {
      if (e.batch && e.stepEndMs < at) [at, step, api] = [e.stepEndMs, e, null];
      if (e.api.length > 0 && e.api[0]!.readyMs < at) [at, step, api] = [e.api[0]!.readyMs, null, e];
    }
    if (at === Number.POSITIVE_INFINITY) break;
    // A scrape is due before the next event: the engines as they stand then.
    if (nextScrape <= at) {
      policy.scrape!(engines, nextScrape);
      nextScrape += scrapeMs;
      continue;
    }
    if (step) {
      const finishedBefore = step.running.filter((r) => r.status === "running");
      step.completeStep();
      for (const r of finishedBefore) {
        const v = owner.get(r)!;
        if (Number.isNaN(v.firstTokenMs) && !Number.isNaN(r.firstTokenAt)) {
          v.firstTokenMs = r.firstTokenAt;
          policy.firstToken?.(v, at);
        }
        if (r.status === "finished") {
          v.endMs = r.finishedAt;
          owner.delete(r);
          policy.finished?.(v, at);
        }
      }
      if (policy.admit) release(at);
    } else if (api) {
      api.leaveApi(at);
    } else {
      const t = trace[ai++]!;
      const tokens = promptOf(t, unique);
      const v: VirtualRequest = {
        trace: t,
        promptTokens: tokens.length,
        dispatchedMs: Number.NaN,
        firstTokenMs: Number.NaN,
        endMs: Number.NaN,
        engine: -1,
      };
      prompts.set(v, tokens);
      all.push(v);
      if (policy.admit) {
        policy.queued?.(v, held);
        held.push(v);
        release(at);
      } else {
        dispatch(v, at);
      }
    }
  }
  return all;
}
