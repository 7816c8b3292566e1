// Typed InferenceRoute (seed 004's shape): model aliases with their pools and limits, and ordered rules.

/** What the gateway does with `max_tokens` above the pool's `maxOutputTokens`. */
export type OutputTokensPolicy = "clamp" | "reject";

/**
 * `rules`: evaluate rules. `legacy_passthrough`: route rollback — every request goes to `spec.legacy`
 * unchanged; without a legacy service, rules are skipped and each alias's default pool is used.
 */
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
  /** Model-alias rollback: the version this target named, now served at the alias's `defaultVersion`. */
  readonly rolledBackFrom?: string | null;
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
  /** `spec.legacy`: where `legacy_passthrough` and the rollout's legacy side send requests. */
  readonly legacy: LegacyService | null;
  /** `spec.rollout`; null: every request is routed (the `full` stage). */
  readonly rollout: Rollout | null;
}

export const ROUTE_VERSION_ANNOTATION = "ai.example.com/route-config-version";

/**
 * Seed 004's rollout stages. `shadow-label`: requests are profiled and routed on paper, traffic goes to
 * the legacy service. `canary`: a sticky share of one pool's matching requests is served by tokengate,
 * the rest by the legacy service. `full`: tokengate serves everything.
 */
export type RolloutStage = "shadow-label" | "canary" | "full";

export const ROLLOUT_STAGES: readonly RolloutStage[] = ["shadow-label", "canary", "full"];

/** The service traffic went to before tokengate (seed 004's old path): a route rollback sends it there. */
export interface LegacyService {
  /** `http://host:port`; requests keep their path and body. */
  readonly url: string;
}

/** `spec.rollout.canary`: which requests of `routeTo` tokengate serves while the stage is `canary`. */
export interface Canary {
  readonly match: RuleConditions;
  /** 0–100; raising it only moves more sticky keys in. */
  readonly percent: number;
  /** The pool whose requests (as the rules route them) the canary takes a share of. */
  readonly routeTo: string;
  readonly stickyBy: StickyBy;
}

/** What `tokengate rollout report` checks before a promotion (defaults from seed 004). */
export interface RolloutGates {
  /** Fewer requests than this in the stage: not enough to judge, the gates fail. Default 100. */
  readonly minRequests: number;
  /** Share of requests with a task label; default 0.95. */
  readonly labelledRatioMin: number;
  /** P90 of |estimated − actual| / actual input tokens; default 0.18. */
  readonly tokenErrorP90Max: number;
  /** Share of labelled requests whose task the config does not know; default 0.01. */
  readonly unknownTaskRatioMax: number;
  /** Canary: share of tokengate-served requests that failed; default 0.01. */
  readonly canaryErrorRatioMax: number;
  /** Canary: TTFT P95 of tokengate-served requests; default 1800 (seed 004's acceptance line). */
  readonly canaryTtftP95MsMax: number;
}

export interface Rollout {
  readonly stage: RolloutStage;
  /** Per-pool stages, for requests the rules send to that pool (long-context and batch follow later). */
  readonly pools: ReadonlyMap<string, RolloutStage>;
  readonly canary: Canary | null;
  /** Labels written on every forwarded request (seed 004's `write_headers`), lowercase. */
  readonly writeHeaders: readonly string[];
  readonly gates: RolloutGates;
}
