// An alias's weighted targets (`targets`: adapters or model versions with weights, GIE's
// InferenceModel `targetModels`) and how a split sticks (`stickyBy`), validated against the adapters the
// alias's pools declare.

import type { IssueList } from "./errors.js";
import { FieldReader } from "./fields.js";
import { ADAPTER_PATTERN } from "./pool-serving.js";
import type { AliasTarget, StickyBy } from "./route-types.js";

/**
 * `targets: [{ adapter: tone-v1, weight: 90 }, { adapter: tone-v2, weight: 10 }]` or model versions.
 * Every adapter must be declared by one of the alias's pools (`InferencePool.spec.loraAdapters`).
 */
export function parseTargets(
  f: FieldReader,
  defaultVersion: string | null,
  poolNames: readonly string[],
  poolAdapters: ReadonlyMap<string, ReadonlySet<string>> | null,
  issues: IssueList,
): AliasTarget[] {
  const out: AliasTarget[] = [];
  const items = f.list("targets", { nonEmpty: true }) ?? [];
  items.forEach((item, i) => {
    const path = f.at("targets", i);
    const t = FieldReader.of(item, path, issues);
    if (!t) return;
    const adapter = t.string("adapter", { pattern: ADAPTER_PATTERN, patternHint: "an adapter name" }) ?? null;
    const version = t.string("modelVersion") ?? null;
    const weight = t.int("weight", { required: true, min: 0, max: 1_000_000 });
    t.done();
    if (adapter === null && version === null) {
      issues.error(path, 'a target names an "adapter", a "modelVersion", or both');
      return;
    }
    // A pool whose own document failed already has its error; its adapters are unknown.
    const known =
      poolAdapters !== null && poolNames.length > 0 && poolNames.every((p) => poolAdapters.has(p));
    if (adapter !== null && known) {
      const serving = poolNames.filter((p) => poolAdapters!.get(p)?.has(adapter));
      if (serving.length === 0) {
        issues.error(
          [...path, "adapter"],
          `adapter "${adapter}" is not in the loraAdapters of any pool of this alias (${poolNames.join(", ")})`,
        );
      }
    }
    const name = adapter ?? version!;
    if (out.some((o) => o.name === name && o.modelVersion === (version ?? defaultVersion))) {
      issues.error(path, `target "${name}" is listed twice`);
      return;
    }
    if (weight === undefined) return;
    out.push({ name, adapter, modelVersion: version ?? defaultVersion, weight });
  });
  if (out.length > 0 && out.every((t) => t.weight === 0)) {
    issues.error(f.at("targets"), "every target has weight 0: no request could be served");
  }
  return out;
}

const HEADER_NAME = /^[A-Za-z0-9-]+$/;

/** `stickyBy: tenant` (default), `header:x-session-id` or `none`. */
export function parseStickyBy(f: FieldReader): StickyBy {
  const v = f.string("stickyBy");
  if (v === undefined || v === "tenant") return { kind: "tenant" };
  if (v === "none") return { kind: "none" };
  const header = v.startsWith("header:") ? v.slice("header:".length) : "";
  if (HEADER_NAME.test(header)) return { kind: "header", header: header.toLowerCase() };
  f.issues.error(f.at("stickyBy"), `must be "tenant", "none" or "header:<name>", got ${JSON.stringify(v)}`);
  return { kind: "tenant" };
}
