// Checks a picker's route against the protocol before it reaches Envoy: one well-formed primary inside the
// subset hint, fallbacks after it without repeats, and extra headers that leave the protocol's own alone.

import type { EppDecision } from "./decision.js";
import { DESTINATION_HEADER } from "./metadata.js";

type Route = Extract<EppDecision, { kind: "route" }>;

/** The destination list (primary first) and the extra headers to set, or why the route cannot be sent. */
export type CheckedRoute = { endpoints: string[]; headers: Record<string, string> } | { error: string };

/** Headers the protocol layer sets itself; a picker's extra headers cannot override them. */
const OWN_HEADERS = new Set([DESTINATION_HEADER, "content-length", "x-request-id"]);

const wellFormed = (e: unknown): e is string => typeof e === "string" && e !== "" && !/[\s,]/.test(e);

/**
 * The route as sent: the primary must be well formed and, when the proxy sent a subset hint, in it;
 * fallbacks that are malformed, repeat an earlier endpoint or fall outside the subset are dropped.
 */
export function checkRoute(route: Route, subset: readonly string[] | null): CheckedRoute {
  if (!wellFormed(route.endpoint))
    return { error: `the picker chose a malformed endpoint ${JSON.stringify(route.endpoint)}` };
  const allowed = subset === null ? null : new Set(subset);
  if (allowed && !allowed.has(route.endpoint)) {
    return { error: `the picker chose ${route.endpoint}, outside the proxy's subset hint` };
  }
  const endpoints = [route.endpoint];
  for (const f of route.fallbacks ?? []) {
    if (wellFormed(f) && !endpoints.includes(f) && (!allowed || allowed.has(f))) endpoints.push(f);
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(route.headers ?? {})) {
    const lower = name.toLowerCase();
    if (!OWN_HEADERS.has(lower) && typeof value === "string") headers[lower] = value;
  }
  return { endpoints, headers };
}
