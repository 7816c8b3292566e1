// `vllm:lora_requests_info` as vLLM V1 writes it: a gauge set to the current Unix time (prometheus
// set_to_current_time) under labels max_lora, waiting_lora_adapters and running_lora_adapters (names
// comma-joined). vLLM never removes a series, so when the adapter sets change the old series stays with
// the time it was last current, and a reader must take the series with the largest value. The simulator
// keeps a few old series (not all, so a long run's page stays small) for the gateway's reader to meet.

import type { Gauge } from "../telemetry/metrics.js";

/** Label names in vLLM's declaration order (prometheus_client sorts them when writing). */
export const LORA_INFO_LABELS = ["max_lora", "waiting_lora_adapters", "running_lora_adapters"] as const;

/** Old label sets kept beside the current one. */
export const KEPT_OLD_LORA_SERIES = 4;

/** Unix time in seconds, from the wall clock (as Python's time.time(), to the millisecond). */
function unixSeconds(): number {
  return Date.now() / 1000;
}

export class LoraInfoSeries {
  /** Label values of the series on the page, oldest first; the last is the current one. */
  private readonly shown: string[][] = [];
  private lastStamp = 0;

  constructor(
    private readonly gauge: Gauge,
    private readonly keepOld = KEPT_OLD_LORA_SERIES,
    private readonly now: () => number = unixSeconds,
  ) {}

  /** Marks this state current: its series gets the time now, older ones keep theirs. */
  update(maxLora: number, running: readonly string[], waiting: readonly string[]): void {
    const values = [String(maxLora), waiting.join(","), running.join(",")];
    const i = this.shown.findIndex((v) => v[0] === values[0] && v[1] === values[1] && v[2] === values[2]);
    if (i >= 0) this.shown.splice(i, 1);
    this.shown.push(values);
    while (this.shown.length > this.keepOld + 1) this.gauge.remove(...this.shown.shift()!);
    // Strictly later than any value shown, so the current series is the largest even when two scrapes
    // read the same clock tick.
    const stamp = Math.max(this.now(), this.lastStamp + 1e-6);
    this.lastStamp = stamp;
    this.gauge.labels(...values).set(stamp);
  }

  /** Forgets the series (the registry was reset and dropped them). */
  clear(): void {
    this.shown.length = 0;
  }
}
