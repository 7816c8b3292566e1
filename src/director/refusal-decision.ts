// The director's refusals: when no region may take a request, which constraint says so — the tenant's
// data residency, the model, or plain unavailability — and why each region is out, in words.

import type { DirectorDecision, DirectorQuery, RegionCandidate } from "./director-types.js";
import type { RegionRecord } from "./region-record.js";
import { type Screened, servesModel } from "./score.js";

/**
 * The refusal for a request no region passed:
 * - `model_unavailable` when every region the tenant may use lacks the model (or pinned version) and no
 *   region at all has it ready;
 * - else `residency_unavailable` when the tenant's data is restricted to some regions (the message names
 *   the tenant, its regions and why each is out);
 * - else `no_region`.
 */
export function refusal(
  q: DirectorQuery,
  allowed: ReadonlySet<string> | null,
  screened: readonly Screened[],
  records: ReadonlyMap<string, RegionRecord>,
  candidates: readonly RegionCandidate[],
  now: number,
): Extract<DirectorDecision, { kind: "refuse" }> {
  const usable = screened.filter((s) => s.filtered !== "residency");
  const servedAnywhere = screened.some((s) => s.view.summary !== null && servesModel(s.view.summary, q));
  const what = modelText(q);
  const why = usable.map((s) => `${s.view.name}: ${outText(s, records.get(s.view.name), q, now)}`).join("; ");
  if (!servedAnywhere && usable.every((s) => s.filtered === "model_unavailable")) {
    return {
      kind: "refuse",
      code: "model_unavailable",
      message: `${what} is not ready in any region`,
      candidates,
    };
  }
  if (allowed !== null) {
    const list = [...allowed].join(", ");
    return {
      kind: "refuse",
      code: "residency_unavailable",
      message: `tenant "${q.tenant}" may be served only in ${list} (data residency), and none of them can take ${what} now: ${why}`,
      candidates,
    };
  }
  return { kind: "refuse", code: "no_region", message: `no region can take ${what} now: ${why}`, candidates };
}

function modelText(q: DirectorQuery): string {
  return q.version === null ? `model "${q.model}"` : `model "${q.model}" version "${q.version}"`;
}

/** Why one region is out, with what the director knows about it. */
function outText(s: Screened, record: RegionRecord | undefined, q: DirectorQuery, now: number): string {
  switch (s.filtered) {
    case "stale_summary": {
      const age = record?.ageMs(now) ?? null;
      return age === null ? "stale_summary (no summary yet)" : `stale_summary (last one ${age} ms old)`;
    }
    case "breaker_open": {
      const phase = record?.breaker.state(now) ?? "open";
      const reason = record?.breaker.reason;
      return `breaker_open (${phase}${reason ? `: ${reason}` : ""})`;
    }
    case "model_unavailable":
      return `model_unavailable (${modelText(q)} not ready)`;
    case "no_headroom":
      return `no_headroom (for model "${q.model}")`;
    default:
      return s.filtered ?? "ok";
  }
}
