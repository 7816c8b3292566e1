// POST /admin/explain: what the gateway would do with a request, against the live pool, without sending
// it — the route decision and the endpoint picker's filters, scores and mode (`tokengate route explain
// --gateway`). Nothing is counted or recorded: no lease, no prefix-index entry, no log line.

import type { IncomingHttpHeaders } from "node:http";
import { pickEndpoint } from "../picker/framework/pick-endpoint.js";
import { promptHashesFor } from "../picker/picker-profile.js";
import { type ApiKind, profileRequest } from "../profile/request-profile.js";
import { routeRequest } from "../route/route-request.js";
import { promptTextOf } from "./completion-handler.js";
import type { GatewayRuntime } from "./gateway-runtime.js";

export function explainRequest(
  gw: GatewayRuntime,
  kind: ApiKind,
  body: unknown,
  headers: IncomingHttpHeaders,
): Record<string, unknown> {
  const profile = profileRequest(kind, body, headers);
  const alias = gw.config.route.aliases.get(profile.modelAlias);
  const model = (alias && gw.config.pools.get(alias.defaultPool)?.model) ?? profile.modelAlias;
  const inputTokens = gw.correction.apply(model, profile.inputTokensRaw);
  const decision = routeRequest(gw.config, {
    modelAlias: profile.modelAlias,
    task: profile.task,
    requestClass: profile.requestClass,
    inputTokens,
    maxTokens: profile.maxTokens,
  });
  const out: Record<string, unknown> = {
    input_tokens_estimated: inputTokens,
    route: decision.ok
      ? {
          pool: decision.pool,
          reason: decision.reason,
          upstream_model: decision.upstreamModel,
          max_tokens: decision.maxTokens,
        }
      : { error: { code: decision.code, message: decision.message, param: decision.param } },
    route_trace: decision.explain,
  };
  if (!decision.ok) return out;
  const pool = gw.pools.get(decision.pool);
  if (!pool) return out;
  const picker = pool.picker;
  const blockHashes = promptHashesFor(
    picker.config,
    promptTextOf(kind, profile.body),
    decision.upstreamModel,
    null,
  );
  const session = picker.sessionHeader ? headers[picker.sessionHeader] : undefined;
  const r = pickEndpoint(
    picker.profile,
    {
      request: {
        model: decision.upstreamModel,
        modelVersion: null,
        lora: null,
        inputTokens,
        maxTokens: decision.maxTokens,
        blockHashes,
        sessionKey: typeof session === "string" ? session : null,
      },
      now: Date.now(),
      prefixIndex: picker.index,
    },
    pool.endpoints,
  );
  out.pick = {
    endpoint: r.endpoint?.name ?? null,
    mode: r.mode,
    reason: r.reason,
    top_scores: r.topScores,
    filtered: r.filtered,
    notes: r.notes,
    backup_pool: r.backupPool,
    prompt_blocks: blockHashes.length,
  };
  return out;
}
