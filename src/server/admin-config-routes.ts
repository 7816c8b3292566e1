// The admin API's config routes, over the config history (control/config-control.ts):
//   GET  /admin/config/history[?limit=N]        the acts, newest first
//   GET  /admin/config/versions/<version>       a stored version's files
//   GET  /admin/config/diff?from=<a>&to=<b>     a unified diff of two stored versions (text/plain)
//   POST /admin/config        {files, replaces, note?}   apply a new version
//   POST /admin/config/rollback {to, replaces?, note?}   put a stored version back
//   POST /admin/config/reload                  read the gateway's config files again
// A refused change answers with the error's code — config_invalid (422, with every error's file, line
// and YAML path), config_conflict (409, with the version running), version_exists, version_not_found —
// and changes nothing. Who acted is the `X-AI-Actor` header (default `admin`).

import type http from "node:http";
import type { ChangeResult, ConfigControl } from "../control/config-control.js";
import type { ConfigFiles } from "../control/config-history.js";
import { diffConfigs } from "../control/text-diff.js";
import { GatewayError, sendBody } from "../errors/gateway-error.js";
import { readAdminJson as readJson, sendJson } from "../http/admin-body.js";

/** Handles a config route; false when the path is not one. */
export function routeConfigAdmin(
  control: ConfigControl | null,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  path: string,
  query: URLSearchParams,
): boolean {
  if (!path.startsWith("/admin/config/") && !(path === "/admin/config" && req.method === "POST"))
    return false;
  if (control === null) {
    req.resume();
    new GatewayError("not_found", "this gateway keeps no config history (started without one)").send(
      res,
      "none",
    );
    return true;
  }
  const h = control.history;
  if (req.method === "GET" && path === "/admin/config/history") {
    const limit = Math.min(1000, Math.max(1, Number.parseInt(query.get("limit") ?? "50", 10) || 50));
    sendJson(res, 200, { current: h.current(), acts: h.acts(limit) });
    return true;
  }
  if (req.method === "GET" && path.startsWith("/admin/config/versions/")) {
    const v = decodeURIComponent(path.slice("/admin/config/versions/".length));
    const stored = h.version(v);
    if (!stored)
      new GatewayError("version_not_found", `version ${v} is not in the config history`).send(res, "none");
    else
      sendJson(res, 200, {
        version: stored.version,
        digest: stored.digest,
        created_at: stored.createdAt,
        files: stored.files,
      });
    return true;
  }
  if (req.method === "GET" && path === "/admin/config/diff") {
    const from = query.get("from") ?? "";
    const to = query.get("to") ?? h.current()?.version ?? "";
    const a = h.version(from);
    const b = h.version(to);
    const missing = !a ? from : !b ? to : null;
    if (missing !== null) {
      new GatewayError(
        "version_not_found",
        `version ${missing || "(none given)"} is not in the config history`,
        {
          param: !a ? "from" : "to",
        },
      ).send(res, "none");
    } else {
      sendBody(res, 200, { "content-type": "text/plain; charset=utf-8" }, diffConfigs(a!.files, b!.files));
    }
    return true;
  }
  if (
    req.method === "POST" &&
    (path === "/admin/config" || path === "/admin/config/rollback" || path === "/admin/config/reload")
  ) {
    const actor = actorOf(req);
    readJson(req, res, async (body) => {
      let result: Promise<ChangeResult>;
      if (path === "/admin/config/reload") result = control.reloadFromSource(actor);
      else if (path === "/admin/config/rollback") {
        const to = body.to;
        if (typeof to !== "string" || to === "") throw badField("to", "the version to roll back to");
        result = control.rollback(to, actor, optionalString(body, "replaces"), optionalString(body, "note"));
      } else {
        result = control.apply({
          files: filesOf(body.files),
          replaces: requiredReplaces(body),
          actor,
          action: "apply",
          note: optionalString(body, "note"),
        });
      }
      answerChange(res, await result);
    });
    return true;
  }
  return false;
}

export function answerChange(res: http.ServerResponse, r: ChangeResult): void {
  if (r.ok) {
    sendJson(res, 200, { version: r.config.version, unchanged: r.unchanged, act: r.act });
    return;
  }
  const details: Record<string, unknown> = {};
  if (r.errors) details.errors = r.errors;
  if (r.current !== undefined) details.current_version = r.current;
  if (r.details) Object.assign(details, r.details);
  new GatewayError(r.code, r.message, { details }).send(res, "none");
}

export function badField(param: string, what: string): GatewayError {
  return new GatewayError("invalid_request", `${param}: expected ${what}`, { param });
}

export function optionalString(body: Record<string, unknown>, key: string): string | null {
  const v = body[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== "string") throw badField(key, "a string");
  return v;
}

/** An apply names the version it replaces (null: the first config of an empty history). */
export function requiredReplaces(body: Record<string, unknown>): string | null {
  if (!("replaces" in body)) {
    throw badField("replaces", "the version this config replaces (GET /admin/config shows the one running)");
  }
  return optionalString(body, "replaces");
}

export function filesOf(v: unknown): ConfigFiles {
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw badField("files", "an object of file name → YAML text");
  const out: Record<string, string> = {};
  for (const [name, text] of Object.entries(v)) {
    if (typeof text !== "string") throw badField(`files.${name}`, "the file's YAML text");
    out[name] = text;
  }
  if (Object.keys(out).length === 0) throw badField("files", "at least one file");
  return out;
}

/** Who acted: the `X-AI-Actor` header (default `admin`). */
export function actorOf(req: http.IncomingMessage): string {
  return String(req.headers["x-ai-actor"] ?? "admin").slice(0, 128) || "admin";
}
