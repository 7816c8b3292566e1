// The admin API's rollout routes (seed 004's stages):
//   GET  /admin/rollout                        the stage in force, per pool, and its gates' figures
//   POST /admin/rollout/promote {files, replaces, note?, force?}
//        applies the next stage's config only if it moves the rollout forward and the current stage's
//        gates pass; `force` applies it past failed gates and the history says so (`forced`).

import type http from "node:http";
import type { GatewayConfigSet } from "../config/config-set.js";
import type { ChangeRefused, ConfigControl } from "../control/config-control.js";
import { notForward, poolStage } from "../control/rollout-gates.js";
import { GatewayError } from "../errors/gateway-error.js";
import { readAdminJson, sendJson } from "../http/admin-body.js";
import type { GatewayRuntime } from "../pipeline/runtime.js";
import { actorOf, answerChange, filesOf, optionalString, requiredReplaces } from "./admin-config-routes.js";

/** Handles a rollout route; false when the path is not one. */
export function routeRolloutAdmin(
  gw: GatewayRuntime,
  control: ConfigControl | null,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  path: string,
): boolean {
  if (req.method === "GET" && path === "/admin/rollout") {
    sendJson(res, 200, rolloutView(gw));
    return true;
  }
  if (req.method !== "POST" || path !== "/admin/rollout/promote") return false;
  if (control === null) {
    req.resume();
    new GatewayError("not_found", "this gateway keeps no config history (started without one)").send(
      res,
      "none",
    );
    return true;
  }
  readAdminJson(req, res, async (body) => {
    const force = body.force === true;
    const result = await control.apply({
      files: filesOf(body.files),
      replaces: requiredReplaces(body),
      actor: actorOf(req),
      action: "promote",
      note: optionalString(body, "note"),
      guard: (next, running) => promotion(gw, next, running ?? gw.config, force),
    });
    answerChange(res, result);
  });
  return true;
}

/** The stage in force and its report: what `tokengate rollout report` prints. */
export function rolloutView(gw: GatewayRuntime): Record<string, unknown> {
  const route = gw.config.route;
  const r = route.rollout;
  const pools = new Set<string>();
  for (const a of route.aliases.values()) for (const p of a.pools) pools.add(p.name);
  return {
    version: gw.config.version,
    global_mode: route.globalMode,
    legacy: route.legacy?.url ?? null,
    stage: r?.stage ?? null,
    pools: Object.fromEntries([...pools].map((p) => [p, poolStage(r, p)])),
    canary: r?.canary
      ? { route_to: r.canary.routeTo, percent: r.canary.percent, sticky_by: r.canary.stickyBy.kind }
      : null,
    report: gw.rollout.report(gw.config.version, r),
  };
}

function promotion(
  gw: GatewayRuntime,
  next: GatewayConfigSet,
  running: GatewayConfigSet,
  force: boolean,
): ChangeRefused | { forced: boolean } {
  const why = notForward(running.route, next.route);
  if (why !== null) {
    return { ok: false, status: 400, code: "rollout_not_forward", message: `not a promotion: ${why}` };
  }
  const report = gw.rollout.report(running.version, running.route.rollout);
  if (report.pass) return { forced: false };
  if (force) return { forced: true };
  const failing = report.gates
    .filter((g) => !g.pass)
    .map((g) => `${g.name} ${g.value ?? "none"} (needs ${g.threshold})`);
  return {
    ok: false,
    status: 409,
    code: "rollout_gates_failed",
    message: `stage ${report.stage} of ${running.version} has not passed its gates: ${failing.join("; ")}; promote with force to go anyway`,
    details: { report },
  };
}
