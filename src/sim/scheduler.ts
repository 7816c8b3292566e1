// One step of continuous batching, as vLLM V1's scheduler decides it: running requests first (decodes
// and unfinished prefill chunks), then waiting requests in order while the token budget, the sequence
// cap, the KV cache and the LoRA slots allow; preemption by recompute when blocks run out.

import type { EngineConfig } from "./engine-config.js";
import type { EngineRequest } from "./engine-request.js";
import type { KvCache } from "./kv-cache.js";
import type { LoraSlots } from "./lora-slots.js";

export interface SchedulerConfig {
  maxNumSeqs: number;
  maxNumBatchedTokens: number;
  enableChunkedPrefill: boolean;
  /** Caps how many prompt tokens one request may prefill in a step (vLLM --long-prefill-token-threshold; 0 = off). */
  longPrefillTokenThreshold: number;
  blockSize: number;
}

/** The scheduler's settings for an engine config. */
export function schedulerConfig(cfg: EngineConfig): SchedulerConfig {
  return {
    maxNumSeqs: cfg.maxNumSeqs,
    // Without chunked prefill a prompt must fit one step whole, so vLLM raises the budget to max_model_len.
    maxNumBatchedTokens: cfg.enableChunkedPrefill
      ? cfg.maxNumBatchedTokens
      : Math.max(cfg.maxNumBatchedTokens, cfg.maxModelLen),
    enableChunkedPrefill: cfg.enableChunkedPrefill,
    longPrefillTokenThreshold: cfg.longPrefillTokenThreshold,
    blockSize: cfg.blockSize,
  };
}

export interface ScheduledItem {
  req: EngineRequest;
  numNewTokens: number;
  isDecode: boolean;
}

export interface StepBatch {
  items: ScheduledItem[];
  prefillTokens: number;
  decodeTokens: number;
  /** Context tokens attended by the decoding sequences (for the KV-bandwidth term). */
  decodeContextTokens: number;
  loraLoads: number;
  preempted: EngineRequest[];
  /** Requests admitted from the waiting queue in this step for the first time. */
  firstScheduled: EngineRequest[];
}

export interface SchedulerState {
  waiting: EngineRequest[];
  running: EngineRequest[];
  kv: KvCache;
  lora: LoraSlots;
}

/** The step law: β0 + β1·prefill tokens + β2·decode tokens + β3·attended context, plus adapter loads. */
export function stepDurationUs(cfg: EngineConfig, b: StepBatch): number {
  return (
    cfg.beta0Us +
    cfg.beta1Us * b.prefillTokens +
    cfg.beta2Us * b.decodeTokens +
    cfg.beta3Us * b.decodeContextTokens +
    b.loraLoads * cfg.loraLoadMs * 1000
  );
}

export function scheduleStep(cfg: SchedulerConfig, st: SchedulerState): StepBatch {
  const batch: StepBatch = {
    items: [],
    prefillTokens: 0,
    decodeTokens: 0,
    decodeContextTokens: 0,
    loraLoads: 0,
    preempted: [],
    firstScheduled: [],
  };
  let budget = cfg.maxNumBatchedTokens;

  for (let idx = 0; idx < st.running.length && budget > 0; idx++) {
    const req = st.running[idx]!;
    let numNew = req.numTokens - req.numComputed;
    if (cfg.longPrefillTokenThreshold > 0) numNew = Math.min(numNew, cfg.longPrefillTokenThreshold);
    numNew = Math.min(numNew, budget);
    if (numNew <= 0) continue;
    let scheduled = false;
    for (;;) {
      if (st.kv.allocate(req, req.numComputed + numNew)) {
        scheduled = true;
        break;
      }
      const victim = st.running.pop()!;
      preempt(victim, st);
      batch.preempted.push(victim);
      if (victim === req) break;
    }
    if (!scheduled) break;
    addItem(batch, req, numNew);
    budget -= numNew;
  }

  if (batch.preempted.length > 0) return batch;

  let admitted = 0;
  for (let i = 0; i < st.waiting.length; i++) {
    if (st.running.length >= cfg.maxNumSeqs || budget <= 0) break;
    const req = st.waiting[i]!;
    if (req.lora && st.lora.check(req.lora) === "blocked") continue;
    const maxHitBlocks = Math.floor((req.numTokens - 1) / cfg.blockSize);
    const hits = req.numComputed === 0 ? st.kv.findCachedPrefix(req.blockHashes, maxHitBlocks) : [];
    const computed = req.numComputed + hits.length * cfg.blockSize;
    let numNew = req.numTokens - computed;
    if (cfg.longPrefillTokenThreshold > 0) numNew = Math.min(numNew, cfg.longPrefillTokenThreshold);
    if (!cfg.enableChunkedPrefill && numNew > budget) break;
    numNew = Math.min(numNew, budget);
    if (!st.kv.allocate(req, computed + numNew, hits)) break;
    req.numComputed = computed;
    if (req.cachedTokens < 0) {
      req.cachedTokens = Math.min(computed, req.promptLen);
      batch.firstScheduled.push(req);
    }
    if (req.lora && st.lora.start(req.lora)) batch.loraLoads++;
    req.status = "running";
    st.running.push(req);
    addItem(batch, req, numNew);
    budget -= numNew;
    admitted++;
  }
  if (admitted > 0) {
    const still = st.waiting.filter((r) => r.status === "waiting");
    st.waiting.length = 0;
    for (const r of still) st.waiting.push(r);
  }
  return batch;
}

function addItem(batch: StepBatch, req: EngineRequest, numNew: number): void {
  const isDecode = numNew === 1 && req.numComputed >= req.promptLen;
  batch.items.push({ req, numNewTokens: numNew, isDecode });
  if (isDecode) {
    batch.decodeTokens++;
    batch.decodeContextTokens += req.numComputed + 1;
  } else {
    batch.prefillTokens += numNew;
  }
}

/** Recompute preemption: drop the request's blocks and put it back at the head of the queue. */
function preempt(req: EngineRequest, st: SchedulerState): void {
  st.kv.release(req);
  req.numComputed = 0;
  req.preemptions++;
  req.status = "waiting";
  if (req.lora) st.lora.stop(req.lora);
  st.waiting.unshift(req);
}
