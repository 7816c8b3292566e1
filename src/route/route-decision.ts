// What routing reads (RouteProfile) and what it returns: a RouteDecision naming the pool and why, or a
// RouteRejection in seed 004's extended OpenAI error shape.
import type { QueuePolicy, RoutePool, StickyBy } from "../config/route-types.js";

/** The part of a request's profile that routing reads (the full RequestProfile satisfies it). */
export interface RouteProfile {
  /** The `model` the caller sent. */
  readonly modelAlias: string;
  /** `X-AI-Task` (or body metadata); null when absent. */
  readonly task: string | null;
  /** `X-AI-Request-Class`; null when absent. */
  readonly requestClass: string | null;
  /** Estimated input tokens (chat template included). */
  readonly inputTokens: number;
  /** `max_tokens` / `max_completion_tokens` as sent; null when absent. */
  readonly maxTokens: number | null;
  /**
   * The estimate for the model a pool serves (each model's tokenizer counts differently, and the
   * correction is learned per served model); absent: `inputTokens` for every pool.
   */
  readonly tokensFor?: (servedModel: string) => number;
  /** The key a weighted target split sticks by (`stickyBy`): the tenant, or a header's value. */
  readonly stickyKey?: (by: StickyBy) => string | null;
}

/** The served target: a LoRA adapter or the base model, and the version endpoints must run. */
export interface RouteTarget {
  readonly name: string;
  readonly adapter: string | null;
  /** Endpoints running another version are never picked; null: any. */
  readonly modelVersion: string | null;
  /** `weighted` (the alias's targets), `adapter` (the request named the adapter), `base`. */
  readonly how: "weighted" | "adapter" | "base";
  /** Share of the alias's traffic, with `weighted`. */
  readonly percent: number | null;
  /** Model-alias rollback: the version the alias (or this target) served before `modelVersion`. */
  readonly rolledBackFrom?: string | null;
}

/** Where the upstream `max_tokens` came from. */
export type MaxTokensSource = "request" | "pool_default" | "pool_clamp";

export interface RouteDecision {
  readonly ok: true;
  readonly modelAlias: string;
  readonly pool: string;
  /** The alias's limits for this pool. */
  readonly poolConfig: RoutePool;
  /** Served model name to write into the upstream body: the adapter, or the pool's model. */
  readonly upstreamModel: string;
  /** The pool's base model (the picker matches endpoints by it; adapters share its tokenizer). */
  readonly baseModel: string;
  /** The version expected: the target's, else the pool's; the log shows what the endpoint ran. */
  readonly modelVersion: string;
  readonly target: RouteTarget;
  /** Where the chosen pool loads the target's adapter from (`loraAdapters[].path`); null: not loadable. */
  readonly adapterPath: string | null;
  /** Estimated input tokens for the chosen pool's model. */
  readonly inputTokens: number;
  /** The route config version the decision was made with. */
  readonly configVersion: string;
  /** The matching rule, or null for the default pool. */
  readonly rule: string | null;
  /** `route_reason` for logs and headers, e.g. `rule=live-summary-short,max_tokens_clamped=900->600`. */
  readonly reason: string;
  /** Low-cardinality label for metrics: the rule name, `default`, or `legacy_passthrough`. */
  readonly reasonLabel: string;
  /** The `max_tokens` to send upstream (always set, so an engine never generates without bound). */
  readonly maxTokens: number;
  readonly maxTokensRequested: number | null;
  readonly maxTokensClamped: boolean;
  readonly maxTokensSource: MaxTokensSource;
  /** False when the task is absent or named by no rule and not in `knownTasks`. */
  readonly taskKnown: boolean;
  readonly priority: number;
  readonly maxQueueMs: number;
  /** The matching rule's queue policy (batch pause), if any. */
  readonly queuePolicy: QueuePolicy | null;
  /** Every rule checked and why it matched or not, for `tokengate route explain`. */
  readonly explain: readonly string[];
}

/**
 * Stable codes: `model_not_found` (404, param `model`), `context_length_exceeded` (400, `messages`),
 * `no_eligible_pool` (400, `messages`: the alias's pools leave a gap at this size),
 * `max_tokens_exceeded` (400, `max_tokens`: the pool refuses rather than clamps).
 */
export type RouteRejectionCode =
  | "model_not_found"
  | "context_length_exceeded"
  | "no_eligible_pool"
  | "max_tokens_exceeded";

export interface RouteRejection {
  readonly ok: false;
  readonly code: RouteRejectionCode;
  readonly message: string;
  /** The request field at fault, as OpenAI's `param`. */
  readonly param: string;
  readonly status: 400 | 404;
  /** The pool concerned, when there is one. */
  readonly route: string | null;
  /** What the caller can do instead (for `model_not_found`: the known aliases). */
  readonly fallbackOptions: readonly string[];
  readonly explain: readonly string[];
}
