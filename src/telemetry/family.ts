// What counters, gauges and histograms share: names, label children cached by value, exposition header.
// The hot path is `labels(...)` (one Map lookup) followed by a child's inc/set/observe.

import { type ExpositionStyle, escapeHelp } from "./format.js";

export type MetricsErrorCode =
  | "TG_METRICS_INVALID_NAME"
  | "TG_METRICS_INVALID_LABEL_NAME"
  | "TG_METRICS_DUPLICATE"
  | "TG_METRICS_LABEL_COUNT"
  | "TG_METRICS_NEEDS_LABELS"
  | "TG_METRICS_NEGATIVE_INC"
  | "TG_METRICS_INVALID_BUCKETS";

/** A misuse of the metrics API; these are programming errors, so they throw instead of being counted. */
export class MetricsError extends Error {
  constructor(
    readonly code: MetricsErrorCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = "MetricsError";
  }
}

export type MetricType = "counter" | "gauge" | "histogram";

/** One labelled series of a family; `zero` is what `reset` does to a child it keeps. */
export interface MetricChild {
  zero(): void;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
type LabelIndex = Map<string, unknown>;

export abstract class MetricFamily<C extends MetricChild> {
  abstract readonly type: MetricType;
  /** Children in creation order, which is exposition order. */
  protected readonly children = new Set<C>();
  /** Children by label value, one Map level per label: lookups hash the caller's strings, never a join. */
  private readonly index: LabelIndex = new Map();
  /** The only child of a family declared without labels, so it can be used directly. */
  private solo: C | undefined;
  private collector: ((metric: this) => void) | undefined;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    protected readonly style: ExpositionStyle,
  ) {
    if (!METRIC_NAME.test(name))
      throw new MetricsError("TG_METRICS_INVALID_NAME", `bad metric name "${name}"`);
    const seen = new Set<string>();
    for (const l of labelNames) {
      if (!LABEL_NAME.test(l) || l.startsWith("__") || seen.has(l)) {
        throw new MetricsError("TG_METRICS_INVALID_LABEL_NAME", `bad or repeated label "${l}" on ${name}`);
      }
      seen.add(l);
    }
  }

  /** Subclasses call this last in their constructor, once they can build children. */
  protected init(): void {
    if (this.labelNames.length === 0) {
      this.solo = this.createChild([]);
      this.children.add(this.solo);
    }
  }

  protected abstract createChild(labelValues: readonly string[]): C;

  /** Writes every child's sample lines (no HELP/TYPE). */
  protected abstract renderChildren(): string;

  /**
   * The child for these label values, in `labelNames` order; created on first use and cached.
   * Keep the returned child to skip even the lookup on a hot path (but see `MetricsRegistry.reset`).
   */
  labels(...labelValues: string[]): C {
    const n = this.arity(labelValues);
    if (n === 0) return this.soloChild;
    let level = this.index;
    for (let k = 0; k < n - 1; k++) {
      const v = labelValues[k]!;
      let next = level.get(v) as LabelIndex | undefined;
      if (next === undefined) {
        next = new Map();
        level.set(v, next);
      }
      level = next;
    }
    const last = labelValues[n - 1]!;
    let child = level.get(last) as C | undefined;
    if (child === undefined) {
      child = this.createChild(labelValues);
      level.set(last, child);
      this.children.add(child);
    }
    return child;
  }

  /** Drops one child (e.g. an endpoint that left a pool); returns whether it existed. */
  remove(...labelValues: string[]): boolean {
    const n = this.arity(labelValues);
    if (n === 0) return false;
    const path: LabelIndex[] = [this.index];
    for (let k = 0; k < n - 1; k++) {
      const next = path[k]!.get(labelValues[k]!) as LabelIndex | undefined;
      if (next === undefined) return false;
      path.push(next);
    }
    const child = path[n - 1]!.get(labelValues[n - 1]!) as C | undefined;
    if (child === undefined) return false;
    this.children.delete(child);
    path[n - 1]!.delete(labelValues[n - 1]!);
    // Prune emptied levels so endpoints that come and go do not leave maps behind.
    for (let k = n - 1; k > 0 && path[k]!.size === 0; k--) path[k - 1]!.delete(labelValues[k - 1]!);
    return true;
  }

  /** Registers a function run before each exposition, to set values computed at scrape time. */
  collect(fn: (metric: this) => void): this {
    this.collector = fn;
    return this;
  }

  /** Zeroes the family and drops its labelled children; an unlabelled family keeps its one child. */
  reset(): void {
    this.index.clear();
    this.children.clear();
    if (this.solo !== undefined) {
      this.solo.zero();
      this.children.add(this.solo);
    }
  }

  /** HELP, TYPE and sample lines; a labelled family with no children writes only the header. */
  render(): string {
    this.collector?.(this);
    return `# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} ${this.type}\n${this.renderChildren()}`;
  }

  protected get soloChild(): C {
    if (this.solo === undefined) {
      throw new MetricsError("TG_METRICS_NEEDS_LABELS", `${this.name} has labels; use .labels(...) first`);
    }
    return this.solo;
  }

  private arity(labelValues: readonly string[]): number {
    const n = this.labelNames.length;
    if (labelValues.length !== n) {
      throw new MetricsError(
        "TG_METRICS_LABEL_COUNT",
        `${this.name} takes ${n} label values (${this.labelNames.join(", ")}), got ${labelValues.length}`,
      );
    }
    return n;
  }
}
