// Who is asking, for which model, from where: the DirectorQuery of an API request (its headers and body)
// and of the answer API (its query string), built the same way so both front doors ask the core the
// same question for the same caller.

import type { IncomingHttpHeaders } from "node:http";
import { GatewayError } from "../errors/gateway-error.js";
import type { DirectorConfig, DirectorQuery } from "./director-types.js";

/** The tenant of a request that names none. */
export const ANONYMOUS = "anonymous";

/** The caller's region, as the global entry in front (or the client) names it. */
export const CALLER_REGION_HEADER = "x-ai-caller-region";

/** The tenant header; the entry in front of the director is trusted to have set it. */
export const TENANT_HEADER = "x-ai-tenant";

function header(headers: IncomingHttpHeaders, name: string): string | null {
  const v = headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s.trim() === "" ? null : s.trim();
}

/** The request's tenant (the trusted `x-ai-tenant` header), or `anonymous`. */
export function tenantOf(headers: IncomingHttpHeaders): string {
  return header(headers, TENANT_HEADER) ?? ANONYMOUS;
}

/** The query of an API request whose body named `model`. */
export function queryOfRequest(
  config: DirectorConfig,
  headers: IncomingHttpHeaders,
  model: string,
): DirectorQuery {
  const tenant = tenantOf(headers);
  const given = config.affinity.header === null ? null : header(headers, config.affinity.header);
  return {
    tenant,
    model,
    version: null,
    callerRegion: header(headers, CALLER_REGION_HEADER),
    session: sessionOf(config, given, tenant),
  };
}

/**
 * A request's session for affinity: the configured header's value (none when the request has no such
 * header: it follows the stream's home, spillover included), or the tenant when `affinity.header` is
 * null (affinity by tenant).
 */
function sessionOf(config: DirectorConfig, given: string | null, tenant: string): string | null {
  return config.affinity.header === null ? tenant : given;
}

/**
 * The query of `/director/answer` and `/director/explain`: `tenant` (default anonymous), `model`
 * (required), `caller_region`, `session` (as the affinity header's value would be). Throws
 * invalid_request naming the param.
 */
export function queryOfParams(params: URLSearchParams, config: DirectorConfig): DirectorQuery {
  const get = (name: string) => {
    const v = params.get(name);
    return v === null || v.trim() === "" ? null : v.trim();
  };
  const model = get("model");
  if (model === null)
    throw new GatewayError("invalid_request", "the query needs model=<alias>", { param: "model" });
  const tenant = get("tenant") ?? ANONYMOUS;
  return {
    tenant,
    model,
    version: null,
    callerRegion: get("caller_region"),
    session: sessionOf(config, get("session"), tenant),
  };
}

/**
 * The `model` of a JSON request body. invalid_json when it is not JSON; invalid_request (param `model`)
 * when it names none: the director cannot choose a region without it.
 */
export function modelOfBody(body: Buffer): string {
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch (err) {
    throw new GatewayError("invalid_json", `the body is not JSON: ${(err as Error).message}`);
  }
  const model =
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>).model
      : undefined;
  if (typeof model !== "string" || model.trim() === "")
    throw new GatewayError(
      "invalid_request",
      "the request needs a model: the director picks a region by it",
      {
        param: "model",
      },
    );
  return model;
}
