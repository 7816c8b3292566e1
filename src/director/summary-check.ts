// A region summary as it arrives over the wire (a poll's body, a push): checked field by field before the
// decision core sees it, so a region that publishes garbage is a failed poll (or a 400 naming the field),
// never a NaN in a score.

import type { RegionSummary } from "./director-types.js";

/** The summary, or the first field that is wrong and what was expected of it. */
export type SummaryCheck =
  | { readonly ok: true; readonly summary: RegionSummary }
  | { readonly ok: false; readonly field: string; readonly problem: string };

class FieldProblem extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(problem);
  }
}

type Obj = Record<string, unknown>;

function object(v: unknown, field: string): Obj {
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw new FieldProblem(field, "expected an object");
  return v as Obj;
}

function array(v: unknown, field: string): unknown[] {
  if (!Array.isArray(v)) throw new FieldProblem(field, "expected an array");
  return v;
}

function text(v: unknown, field: string): string {
  if (typeof v !== "string" || v === "") throw new FieldProblem(field, "expected a non-empty string");
  return v;
}

function flag(v: unknown, field: string): boolean {
  if (typeof v !== "boolean") throw new FieldProblem(field, "expected true or false");
  return v;
}

function number(v: unknown, field: string, min = 0, max = Number.POSITIVE_INFINITY): number {
  if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max) {
    const range = max === Number.POSITIVE_INFINITY ? `>= ${min}` : `${min}..${max}`;
    throw new FieldProblem(field, `expected a number ${range}, got ${JSON.stringify(v) ?? "nothing"}`);
  }
  return v;
}

/**
 * Checks `value` against RegionSummary. Unknown extra fields are allowed (a newer gateway may publish
 * more); every field the director reads must be there with the right type and range.
 */
export function checkSummary(value: unknown): SummaryCheck {
  try {
    return { ok: true, summary: readSummary(value) };
  } catch (err) {
    if (err instanceof FieldProblem) return { ok: false, field: err.field, problem: err.message };
    throw err;
  }
}

function readSummary(value: unknown): RegionSummary {
  const o = object(value, "summary");
  const models = array(o.models, "models").map((m, i) => {
    const f = `models[${i}]`;
    const mo = object(m, f);
    return {
      alias: text(mo.alias, `${f}.alias`),
      versions: array(mo.versions, `${f}.versions`).map((v, j) => {
        const vo = object(v, `${f}.versions[${j}]`);
        return {
          version: text(vo.version, `${f}.versions[${j}].version`),
          ready: flag(vo.ready, `${f}.versions[${j}].ready`),
        };
      }),
      ready: flag(mo.ready, `${f}.ready`),
    };
  });
  const pools = array(o.pools, "pools").map((p, i) => {
    const f = `pools[${i}]`;
    const po = object(p, f);
    return {
      pool: text(po.pool, `${f}.pool`),
      headroom: number(po.headroom, `${f}.headroom`, 0, 1),
      freeSlots: number(po.freeSlots, `${f}.freeSlots`),
      routableEndpoints: number(po.routableEndpoints, `${f}.routableEndpoints`),
      endpoints: number(po.endpoints, `${f}.endpoints`),
      queued: number(po.queued, `${f}.queued`),
    };
  });
  const byModel = object(o.headroomByModel, "headroomByModel");
  const headroomByModel: Record<string, number> = {};
  for (const [alias, h] of Object.entries(byModel))
    headroomByModel[alias] = number(h, `headroomByModel.${alias}`, 0, 1);
  const w = object(o.window, "window");
  const ttft = w.ttftP95Ms;
  return {
    region: text(o.region, "region"),
    computedAt: number(o.computedAt, "computedAt"),
    draining: flag(o.draining, "draining"),
    configVersion: text(o.configVersion, "configVersion"),
    models,
    pools,
    headroomByModel,
    window: {
      windowS: number(w.windowS, "window.windowS"),
      requests: number(w.requests, "window.requests"),
      ttftP95Ms: ttft === null ? null : number(ttft, "window.ttftP95Ms"),
      errorRate: number(w.errorRate, "window.errorRate", 0, 1),
    },
  };
}
