// report.md's latency per tenant and per input-size bucket (issue 13), over the whole run and within
// each scenario phase: one row per group and router, the routers of a group side by side.

import type { GroupResult, RouterResult } from "../results.js";
import { INPUT_SIZE_BUCKETS } from "../summary/breakdowns.js";
import { formatCount, formatMs } from "./format.js";
import { figuresRight, mdTable } from "./md-table.js";
import { type Ran, routerTitle } from "./router-title.js";

type Groups = (r: RouterResult) => Record<string, GroupResult> | undefined;

/** The report's name of an input-size bucket key ("<1024" → "< 1,024"); unknown keys as they are. */
export function bucketLabel(key: string): string {
  return INPUT_SIZE_BUCKETS.find((b) => b.key === key)?.label ?? key;
}

/** Keys over every router, in first-seen order (each router lists its own in order). */
function union(lists: string[][]): string[] {
  const keys: string[] = [];
  for (const list of lists) for (const k of list) if (!keys.includes(k)) keys.push(k);
  return keys;
}

function keysOf(ran: Ran, groups: Groups): string[] {
  return union(ran.map(([, r]) => Object.keys(groups(r) ?? {})));
}

function groupTable(ran: Ran, groups: Groups, title: string, label: (key: string) => string): string {
  const head = [title, "Router", "Requests", "Errors", "TTFT P50", "TTFT P90", "TTFT P99", "E2E P90"];
  const rows = keysOf(ran, groups).flatMap((k) =>
    ran.flatMap(([name, r]) => {
      const g = groups(r)?.[k];
      if (!g) return [];
      const t = g.ttft_ms;
      return [
        [
          label(k),
          routerTitle(name, r),
          formatCount(g.count),
          formatCount(g.errors),
          ...[t.p50, t.p90, t.p99, g.e2e_ms.p90].map(formatMs),
        ],
      ];
    }),
  );
  return mdTable(head, rows, figuresRight(head.length, 2));
}

/** The tenant table, or a sentence when every request of every router had one tenant. */
function tenantPart(ran: Ran, groups: Groups): string {
  const tenants = keysOf(ran, groups);
  if (tenants.length === 0) return "";
  if (tenants.length === 1) return `Every request was tenant \`${tenants[0]}\`.`;
  return groupTable(ran, groups, "Tenant", (k) => `\`${k}\``);
}

function sizePart(ran: Ran, groups: Groups): string {
  return keysOf(ran, groups).length === 0 ? "" : groupTable(ran, groups, "Input tokens", bucketLabel);
}

export function groupSections(ran: Ran): string {
  const parts: string[] = [];
  const tenants = tenantPart(ran, (r) => r.by_tenant);
  if (tenants) parts.push(`### Per tenant\n\n${tenants}`);
  const sizes = sizePart(ran, (r) => r.by_input_size);
  if (sizes) parts.push(`### Per input size\n\n${sizes}`);
  if (parts.length === 0) return "";
  const phases = union(ran.map(([, r]) => Object.keys(r.by_phase ?? {})));
  for (const p of phases) {
    const t = tenantPart(ran, (r) => r.by_phase?.[p]?.by_tenant);
    if (t) parts.push(`### Phase \`${p}\`: per tenant\n\n${t}`);
    const s = sizePart(ran, (r) => r.by_phase?.[p]?.by_input_size);
    if (s) parts.push(`### Phase \`${p}\`: per input size\n\n${s}`);
  }
  const intro =
    "Client-side, by the trace's `tenant` (sent as `X-AI-Tenant`) and by its `input_tokens` (the user " +
    "message, without a shared system prompt or a session's history), over the whole run" +
    (phases.length > 0 ? " and within each phase of the scenario (by arrival time)" : "") +
    ". Quantiles over the requests that finished without error.";
  return `## Latency per tenant and input size\n\n${intro}\n\n${parts.join("\n\n")}`;
}
