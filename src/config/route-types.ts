// Typed InferenceRoute (seed 004's shape): model aliases with their pools and limits, and ordered rules.

/** What the gateway does with `max_tokens` above the pool's `maxOutputTokens`. */
export type OutputTokensPolicy = "clamp" | "reject";

/** `rules`: evaluate rules. `legacy_passthrough`: route rollback — skip rules, send to each alias's default pool. */
export type GlobalMode = "rules" | "legacy_passthrough";

/** One entry of `modelAliases.<alias>.pools[]`: a pool and the limits this alias uses it with. */
export interface RoutePool {
  readonly name: string;
  /** Informative only (seed 004 names the Kubernetes Service); endpoints come from the InferencePool. */
  readonly service: string | null;
  /** Smallest input this pool takes; default 0 (no lower bound). */
  readonly minInputTokens: number;
  readonly maxInputTokens: number;
  readonly maxOutputTokens: number;
  /** Longest a request may wait in the gateway's queue for this pool; default 30000. */
  readonly maxQueueMs: number;
  /** Higher is served first from the gateway queue (strict bands); default 0. */
  readonly priority: number;
  /** Per request class (`X-AI-Request-Class`), overriding `priority`. */
  readonly priorityByClass: ReadonlyMap<string, number>;
  /** Default `clamp`: lower `max_tokens` to `maxOutputTokens` and say so; `reject`: 400 `max_tokens_exceeded`. */
  readonly outputTokensPolicy: OutputTokensPolicy;
}

/**
 * One of an alias's weighted targets (GIE InferenceModel `targetModels`): an adapter, a model version, or
 * both; requests split between them by weight.
 */
export interface AliasTarget {
  /** `adapter`, else `modelVersion`: what route_reason and metrics call it. */
  readonly name: string;
  /** The LoRA adapter sent upstream as `model`; null: the pool's base model. */
  readonly adapter: string | null;
  /** Endpoints running another version are never picked; null: any version. */
  readonly modelVersion: string | null;
  readonly weight: number;
}

/** Whose requests stay on one target: the tenant's, those with one value of a header, or nobody's. */
export type StickyBy =
  | { readonly kind: "tenant" }
  | { readonly kind: "header"; readonly header: string }
  | { readonly kind: "none" };

export interface ModelAlias {
  /** The name callers send as `model`. */
  readonly name: string;
  readonly defaultPool: string;
  /** In declared order; the order decides size fallback. */
  readonly pools: readonly RoutePool[];
  /** Model-alias rollback (seed 004): the version this alias should serve, and the one it rolled back from. */
  readonly defaultVersion: string | null;
  readonly rollbackFrom: string | null;
  /** Weighted targets; empty: the pool's base model at `defaultVersion` (any version when that is null). */
  readonly targets: readonly AliasTarget[];
  /** How a weighted choice sticks; default the tenant. */
  readonly stickyBy: StickyBy;
}

export interface RuleConditions {
  /** null: any task (including none). */
  readonly taskIn: readonly string[] | null;
  readonly inputTokensLte: number | null;
  readonly inputTokensGt: number | null;
  /** null: any class (including none). */
  readonly requestClass: readonly string[] | null;
}

/** Pause this rule's traffic while another pool's TTFT P95 is above a threshold (flow control reads it). */
export interface PauseWhen {
  readonly pool: string;
  readonly ttftP95MsGt: number;
  /** Window of the P95; default 60. */
  readonly windowSeconds: number;
  /** Hysteresis: resume only once the P95 is below this; default 80% of `ttftP95MsGt`. */
  readonly resumeBelowMs: number;
  /** ... and has stayed below it this long; default 10. */
  readonly resumeAfterSeconds: number;
  /** Fewer TTFT samples than this in the window never pause; default 20. */
  readonly minSamples: number;
  /** `retry_after_seconds` of a request refused while paused; default the window. */
  readonly retryAfterSeconds: number;
}

export interface QueuePolicy {
  readonly pauseWhen: PauseWhen | null;
  /** `fallback_options` of queue errors for this rule's requests; default `["retry_later"]`. */
  readonly fallbackOptions: readonly string[];
}

export interface RouteRule {
  readonly name: string;
  readonly when: RuleConditions;
  readonly routeTo: string;
  readonly queuePolicy: QueuePolicy | null;
}

/** A validated `InferenceRoute` document. */
export interface RouteConfig {
  /** metadata.name */
  readonly name: string;
  /** The `ai.example.com/route-config-version` annotation. */
  readonly version: string;
  readonly globalMode: GlobalMode;
  readonly aliases: ReadonlyMap<string, ModelAlias>;
  /** In order; the first match wins. */
  readonly rules: readonly RouteRule[];
  /** `spec.knownTasks` plus every task named in a rule's `taskIn`. */
  readonly knownTasks: ReadonlySet<string>;
}

export const ROUTE_VERSION_ANNOTATION = "ai.example.com/route-config-version";
