// The config package's public surface: load a file or folder into a frozen GatewayConfigSet, or into errors.
export type { DocumentSummary, GatewayConfigSet } from "./config-set.js";
export { type ConfigError, formatConfigError } from "./errors.js";
export {
  type AdminListener,
  type ApiKeyEntry,
  type AuthSettings,
  DEFAULT_GATEWAY_SETTINGS,
  type GatewaySettings,
  type ListenAddress,
  type TrustedAddress,
  type TrustedUpstreams,
  trustedAddressList,
} from "./gateway-settings.js";
export type { EngineDialect, InferencePoolConfig, PollSettings, PoolEndpoint } from "./inference-pool.js";
export { type LoadOptions, type LoadResult, loadConfig, loadConfigTexts } from "./loader.js";
export type {
  GlobalMode,
  ModelAlias,
  OutputTokensPolicy,
  PauseWhen,
  QueuePolicy,
  RouteConfig,
  RoutePool,
  RouteRule,
  RuleConditions,
} from "./route-types.js";
export { ROUTE_VERSION_ANNOTATION } from "./route-types.js";
