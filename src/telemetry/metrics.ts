// A small Prometheus metrics registry (counter, gauge, histogram) with text exposition format 0.0.4.
// Used by the simulated engines (vLLM/SGLang names, Python-style output) and by the gateway itself.

import { type MetricChild, MetricFamily, MetricsError } from "./family.js";
import { type ExpositionStyle, PLAIN_STYLE, PYTHON_STYLE, renderSeries } from "./format.js";
import { DEFAULT_BUCKETS, Histogram } from "./histogram.js";

export { MetricsError, type MetricsErrorCode, type MetricType } from "./family.js";
export { PROMETHEUS_CONTENT_TYPE } from "./format.js";
export { DEFAULT_BUCKETS, Histogram, HistogramChild } from "./histogram.js";

export interface RegistryOptions {
  /**
   * Write exactly as prometheus_client (Python) does, as vLLM and SGLang do: `3.0`, `1.7e+09`, labels
   * sorted by name, `_count` before `_sum`. Default: JS numbers (`3`), labels in declared order.
   */
  pythonStyle?: boolean;
}

export class CounterChild implements MetricChild {
  value = 0;
  constructor(readonly series: string) {}

  inc(n = 1): void {
    if (!(n >= 0)) throw new MetricsError("TG_METRICS_NEGATIVE_INC", `counter ${this.series} inc(${n})`);
    this.value += n;
  }

  /** Mirrors a total kept elsewhere (the process's CPU time, read at scrape): it never moves back. */
  setTotal(total: number): void {
    if (total > this.value) this.value = total;
  }

  zero(): void {
    this.value = 0;
  }
}

export class GaugeChild implements MetricChild {
  value = 0;
  constructor(readonly series: string) {}

  set(v: number): void {
    this.value = v;
  }

  inc(n = 1): void {
    this.value += n;
  }

  dec(n = 1): void {
    this.value -= n;
  }

  /** Unix time in seconds, as vLLM's `lora_requests_info` reports. */
  setToCurrentTime(): void {
    this.value = Date.now() / 1000;
  }

  zero(): void {
    this.value = 0;
  }
}

/** Counter; the caller names it in full, `_total` included, and TYPE uses that name (as vLLM prints). */
export class Counter extends MetricFamily<CounterChild> {
  readonly type = "counter";

  constructor(name: string, help: string, labelNames: readonly string[], style: ExpositionStyle) {
    super(name, help, labelNames, style);
    this.init();
  }

  inc(n = 1): void {
    this.soloChild.inc(n);
  }

  protected createChild(labelValues: readonly string[]): CounterChild {
    return new CounterChild(renderSeries(this.name, this.labelNames, labelValues, this.style));
  }

  protected renderChildren(): string {
    return renderValues(this.children.values(), this.style);
  }
}

export class Gauge extends MetricFamily<GaugeChild> {
  readonly type = "gauge";

  constructor(name: string, help: string, labelNames: readonly string[], style: ExpositionStyle) {
    super(name, help, labelNames, style);
    this.init();
  }

  set(v: number): void {
    this.soloChild.set(v);
  }

  inc(n = 1): void {
    this.soloChild.inc(n);
  }

  dec(n = 1): void {
    this.soloChild.dec(n);
  }

  setToCurrentTime(): void {
    this.soloChild.setToCurrentTime();
  }

  protected createChild(labelValues: readonly string[]): GaugeChild {
    return new GaugeChild(renderSeries(this.name, this.labelNames, labelValues, this.style));
  }

  protected renderChildren(): string {
    return renderValues(this.children.values(), this.style);
  }
}

function renderValues(children: Iterable<{ series: string; value: number }>, style: ExpositionStyle): string {
  let out = "";
  for (const c of children) out += `${c.series} ${style.formatValue(c.value)}\n`;
  return out;
}

type AnyFamily = Counter | Gauge | Histogram;

/**
 * Families in registration order, exposed together.
 * @example
 * const reg = new MetricsRegistry({ pythonStyle: true });
 * const running = reg.gauge("vllm:num_requests_running", "Number of requests in model execution batches.", ["model_name", "engine"]);
 * running.collect((g) => g.labels(model, "0").set(engine.runningCount));
 * const ttft = reg.histogram("vllm:time_to_first_token_seconds", "…", ["model_name", "engine"], [0.001, 0.005]).labels(model, "0");
 * ttft.observe(0.042);
 * res.setHeader("content-type", PROMETHEUS_CONTENT_TYPE).end(reg.expose());
 */
export class MetricsRegistry {
  private readonly families = new Map<string, AnyFamily>();
  private readonly hooks = new Set<() => void>();
  private readonly style: ExpositionStyle;

  constructor(opts: RegistryOptions = {}) {
    this.style = opts.pythonStyle ? PYTHON_STYLE : PLAIN_STYLE;
  }

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.add(new Counter(name, help, labelNames, this.style));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.add(new Gauge(name, help, labelNames, this.style));
  }

  histogram(
    name: string,
    help: string,
    labelNames: readonly string[] = [],
    buckets: readonly number[] = DEFAULT_BUCKETS,
  ): Histogram {
    return this.add(new Histogram(name, help, labelNames, buckets, this.style));
  }

  get(name: string): AnyFamily | undefined {
    return this.families.get(name);
  }

  /** Runs `fn` before every exposition (to copy engine state into gauges); returns an unsubscribe. */
  onCollect(fn: () => void): () => void {
    this.hooks.add(fn);
    return () => this.hooks.delete(fn);
  }

  /** The whole registry in text format 0.0.4; serve it with `PROMETHEUS_CONTENT_TYPE`. */
  expose(): string {
    for (const hook of this.hooks) hook();
    let out = "";
    for (const f of this.families.values()) out += f.render();
    return out;
  }

  /**
   * Zeroes every family and drops labelled children (between benchmark runs). Children that callers
   * kept from `labels(...)` are detached by this: fetch them again after a reset.
   */
  reset(): void {
    for (const f of this.families.values()) f.reset();
  }

  private add<F extends AnyFamily>(family: F): F {
    if (this.families.has(family.name)) {
      throw new MetricsError("TG_METRICS_DUPLICATE", `metric ${family.name} is already registered`);
    }
    this.families.set(family.name, family);
    return family;
  }
}
