// The simulated inference engine: a continuous-batching step loop on a wall-clock schedule. Each step's
// duration is β0 + β1·prefill tokens + β2·decode tokens + β3·attended context, so queues, head-of-line
// blocking, prefix-cache savings, KV pressure and preemption come out of the model, not out of sleeps.

import { chainSalt } from "./block-hash.js";
import { type EngineConfig, engineConfigProblem } from "./engine-config.js";
import { EngineRequest, type EngineRequestInit, type FinishReason } from "./engine-request.js";
import { KvCache } from "./kv-cache.js";
import { LoraSlots } from "./lora-slots.js";

export type { EngineConfig } from "./engine-config.js";

import {
  type SchedulerConfig,
  type StepBatch,
  schedulerConfig,
  scheduleStep,
  stepDurationUs,
} from "./scheduler.js";

/** Counters a metrics exporter reads; cumulative since start or the last reset. */
export interface EngineStats {
  promptTokens: number;
  generationTokens: number;
  prefixCacheQueries: number;
  prefixCacheHits: number;
  preemptions: number;
  steps: number;
  busyMs: number;
  finished: Record<FinishReason, number>;
}

/** Callbacks for per-request and per-step metrics; all optional. */
export interface EngineObserver {
  onFinished?(req: EngineRequest): void;
  onStep?(batch: StepBatch, durationMs: number): void;
}

/** The engine falls behind the wall clock by at most this much before it resynchronises. */
const MAX_LAG_MS = 25;

export class Engine {
  readonly cfg: EngineConfig;
  readonly kv: KvCache;
  readonly lora: LoraSlots;
  readonly waiting: EngineRequest[] = [];
  readonly running: EngineRequest[] = [];
  stats: EngineStats = emptyStats();
  observer: EngineObserver | null = null;
  /** Multiplies every step's modelled duration (the `slowdown` fault); 1 runs at the profile's speed. */
  slowdown = 1;
  private readonly sched: SchedulerConfig;
  private readonly salts = new Map<string, number>();
  private stepInFlight = false;
  private stepTimer: NodeJS.Timeout | null = null;
  private stepImmediate: NodeJS.Immediate | null = null;
  private apiServerFreeAt = 0;
  private pendingApi = new Set<NodeJS.Timeout>();
  private epoch = 0;

  constructor(cfg: EngineConfig) {
    const problem = engineConfigProblem(cfg);
    if (problem) throw new Error(problem);
    this.cfg = cfg;
    this.kv = new KvCache(cfg.numGpuBlocks, cfg.blockSize, cfg.enablePrefixCaching);
    this.lora = new LoraSlots(cfg.maxLoras);
    this.sched = schedulerConfig(cfg);
  }

  /** Block-hash chain root for the base model or one of its adapters. */
  saltFor(lora: string | null): number {
    const key = lora ?? "";
    let s = this.salts.get(key);
    if (s === undefined) {
      s = chainSalt(this.cfg.modelName, lora);
      this.salts.set(key, s);
    }
    return s;
  }

  /** Submits a request; it passes the API server stage, then waits for the scheduler. */
  add(init: Omit<EngineRequestInit, "salt">): EngineRequest {
    const req = new EngineRequest({ ...init, salt: this.saltFor(init.lora) }, this.cfg.blockSize);
    const now = performance.now();
    req.arrivedAt = now;
    if (this.cfg.apiServerUs > 0) {
      // The API server handles one request at a time: arrivals queue for it before the engine sees them.
      const readyAt = Math.max(now, this.apiServerFreeAt) + this.cfg.apiServerUs / 1000;
      this.apiServerFreeAt = readyAt;
      const t = setTimeout(() => {
        this.pendingApi.delete(t);
        if (req.status === "api") this.enqueue(req, readyAt);
      }, readyAt - now);
      this.pendingApi.add(t);
    } else {
      this.enqueue(req, now);
    }
    return req;
  }

  /** Cancels a request wherever it is; its KV blocks are freed at once. Idempotent. */
  abort(req: EngineRequest): void {
    if (req.status === "finished") return;
    if (req.status === "waiting") {
      const i = this.waiting.indexOf(req);
      if (i >= 0) this.waiting.splice(i, 1);
    } else if (req.status === "running") {
      const i = this.running.indexOf(req);
      if (i >= 0) this.running.splice(i, 1);
      if (req.lora) this.lora.stop(req.lora);
      this.kv.release(req);
    }
    this.finish(req, "abort", performance.now());
  }

  /** Aborts everything, empties the KV cache and zeroes the statistics (between benchmark runs). */
  reset(): void {
    for (const r of [...this.waiting, ...this.running]) this.abort(r);
    for (const t of this.pendingApi) clearTimeout(t);
    this.pendingApi.clear();
    this.kv.reset();
    this.lora.reset();
    this.stats = emptyStats();
    this.apiServerFreeAt = 0;
    // A step in flight belongs to the old epoch: its completion is ignored.
    this.epoch++;
    this.clearTimer();
    this.stepInFlight = false;
  }

  /** Stops the step loop (the replica is shutting down or crashed). */
  stop(): void {
    this.reset();
  }

  get numWaiting(): number {
    return this.waiting.length;
  }

  get numRunning(): number {
    return this.running.length;
  }

  private enqueue(req: EngineRequest, at: number): void {
    req.status = "waiting";
    req.queuedAt = at;
    this.waiting.push(req);
    if (!this.stepInFlight) this.runStep(performance.now());
  }

  private runStep(startAt: number): void {
    const batch = scheduleStep(this.sched, this);
    for (const req of batch.firstScheduled) {
      req.firstScheduledAt = startAt;
      this.stats.prefixCacheQueries += req.promptLen;
      this.stats.prefixCacheHits += req.cachedTokens;
    }
    this.stats.preemptions += batch.preempted.length;
    if (batch.items.length === 0) {
      this.stepInFlight = false;
      return;
    }
    const us = this.slowdown * stepDurationUs(this.cfg, batch);
    const endAt = startAt + us / 1000;
    this.stepInFlight = true;
    const epoch = this.epoch;
    const delay = endAt - performance.now();
    const done = () => {
      this.stepTimer = null;
      this.stepImmediate = null;
      if (epoch === this.epoch) this.completeStep(batch, endAt, us / 1000);
    };
    if (delay < 0.5) this.stepImmediate = setImmediate(done);
    else this.stepTimer = setTimeout(done, delay);
  }

  private completeStep(batch: StepBatch, endAt: number, durationMs: number): void {
    const bs = this.cfg.blockSize;
    this.stats.steps++;
    this.stats.busyMs += durationMs;
    let anyFinished = false;
    for (const { req, numNewTokens } of batch.items) {
      if (req.status !== "running") continue; // aborted while the step ran
      req.numComputed += numNewTokens;
      this.kv.registerFullBlocks(req, req.numComputed);
      if (req.numComputed < req.numTokens) continue; // a prefill chunk with more to come
      req.appendOutputToken(bs);
      this.stats.generationTokens++;
      if (req.outputLen === 1) {
        req.firstTokenAt = endAt;
        this.stats.promptTokens += req.promptLen;
      }
      req.lastTokenAt = endAt;
      let reason: FinishReason | null = null;
      if (req.outputLen >= req.targetOutputTokens) {
        reason = req.targetOutputTokens < req.maxTokens ? "stop" : "length";
      } else if (req.numTokens >= this.cfg.maxModelLen) {
        reason = "length";
      }
      req.sink.onToken(req, req.outputLen - 1, reason);
      if (req.status !== "running") continue; // the sink aborted it
      if (reason) {
        this.kv.registerFullBlocks(req, req.numComputed);
        this.kv.release(req);
        if (req.lora) this.lora.stop(req.lora);
        this.finish(req, reason, endAt);
        anyFinished = true;
      }
    }
    if (anyFinished) {
      let w = 0;
      for (const r of this.running) if (r.status === "running") this.running[w++] = r;
      this.running.length = w;
    }
    this.observer?.onStep?.(batch, durationMs);
    this.stepInFlight = false;
    if (this.waiting.length === 0 && this.running.length === 0) return;
    const now = performance.now();
    // Keep the ideal schedule while the event loop keeps up, so timer granularity does not slow the GPU.
    this.runStep(now - endAt < MAX_LAG_MS ? endAt : now);
  }

  private finish(req: EngineRequest, reason: FinishReason, at: number): void {
    req.status = "finished";
    req.finishReason = reason;
    req.finishedAt = at;
    this.stats.finished[reason]++;
    this.observer?.onFinished?.(req);
    req.sink.onFinish(req, reason);
  }

  private clearTimer(): void {
    if (this.stepTimer) clearTimeout(this.stepTimer);
    if (this.stepImmediate) clearImmediate(this.stepImmediate);
    this.stepTimer = null;
    this.stepImmediate = null;
  }
}

function emptyStats(): EngineStats {
  return {
    promptTokens: 0,
    generationTokens: 0,
    prefixCacheQueries: 0,
    prefixCacheHits: 0,
    preemptions: 0,
    steps: 0,
    busyMs: 0,
    finished: { stop: 0, length: 0, abort: 0 },
  };
}
