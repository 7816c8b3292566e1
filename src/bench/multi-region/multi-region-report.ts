// The multi-region report: multi-region-figures.ts's figures of both passes as the Markdown
// multi-region.md holds, the director's pass beside the naive GeoDNS's.

import type { PassFigures, StateSpan } from "./multi-region-figures.js";
import { FAILING_REGION, type MultiRegionSettings, PHASES, REGIONS } from "./multi-region-scenario.js";

const UNRESTRICTED = `${FAILING_REGION} (no residency)`;

/** A pass's figures and what the run recorded beside them. */
export interface PassReport {
  readonly figures: PassFigures;
  readonly events: readonly { phase: string; what: string; plannedMs: number; appliedMs: number }[];
  readonly wallS: number;
  readonly decisionLines: number | null;
  readonly retried: number | null;
  readonly failingStates: readonly StateSpan[] | null;
}

/** The targets: residency is enforced (the run fails), the rest reported. */
export interface Targets {
  readonly residencyViolations: number | null;
  readonly failoverMs: number | null;
  readonly failoverTargetMs: number;
  readonly failoverMet: boolean;
  readonly flappingPerMin: number | null;
  readonly flappingTargetPerMin: number;
  readonly flappingMet: boolean;
  readonly failErrorsDirector: number | null;
  readonly failErrorsNaive: number | null;
  readonly fewerFailErrorsMet: boolean;
  readonly backMs: number | null;
  readonly backMet: boolean;
}

function sec(ms: number | null | undefined, never = "never"): string {
  if (ms === undefined) return "–";
  return ms === null ? never : `${(ms / 1000).toFixed(1)} s`;
}

function ms(x: number | null | undefined): string {
  return x === null || x === undefined ? "–" : `${Math.round(x)} ms`;
}

function pct(x: number | null | undefined, digits = 1): string {
  return x === null || x === undefined ? "–" : `${(x * 100).toFixed(digits)}%`;
}

function check(ok: boolean): string {
  return ok ? "met" : "**not met**";
}

export function multiRegionMarkdown(r: {
  setup: string;
  passes: readonly PassReport[];
  targets: Targets;
  problems: readonly string[];
  s: MultiRegionSettings;
}): string {
  const d = r.passes.find((p) => p.figures.name === "director");
  const n = r.passes.find((p) => p.figures.name === "naive");
  const col = (f: (p: PassReport) => string) => [d ? f(d) : "did not run", n ? f(n) : "did not run"];
  const row = (label: string, f: (p: PassReport) => string) => `| ${label} | ${col(f).join(" | ")} |`;
  const reason = (k: string) => (p: PassReport) =>
    p.figures.spilledShare === null ? "–" : String(p.figures.reasons[k] ?? 0);
  const bin = `${r.s.binMs / 1000} s`;
  const main = [
    "| | (a) tokengate director | (b) naive GeoDNS |",
    "|---|---:|---:|",
    row("requests sent / answered", (p) => `${p.figures.requests} / ${p.figures.answered}`),
    row(
      `**time to fail over** (≥ 90% of ${FAILING_REGION}'s traffic answered elsewhere, ${bin} bins)`,
      (p) => `**${sec(p.figures.failover.failoverMs)}**`,
    ),
    row("time to fail over, the director's first choice (retries left out)", (p) =>
      sec(p.figures.failover.decidedFailoverMs),
    ),
    row(`last request of that traffic not answered elsewhere, after the failure's start`, (p) =>
      sec(p.figures.failover.lastNotMovedMs, "none"),
    ),
    row("share of that traffic answered elsewhere during the failure", (p) =>
      pct(p.figures.failover.servedElsewhereShare),
    ),
    row("that traffic's errors during the failure", (p) => String(p.figures.failover.errorsInFail)),
    row(`time back to ${FAILING_REGION} after it recovered (≥ 90%)`, (p) => sec(p.figures.failover.backMs)),
    row("region switches, every answered request", (p) => String(p.figures.switches.all)),
    row("region switches of home traffic (no session, not spilled)", (p) => String(p.figures.switches.home)),
    row(
      "**switches per minute while degrading** (home / every request)",
      (p) => `**${p.figures.switches.homePerMinInDegrade}** / ${p.figures.switches.allPerMinInDegrade}`,
    ),
    row("**share spilled over**", (p) => `**${pct(p.figures.spilledShare, 2)}**`),
    row("requests by reason: home", reason("home")),
    row("spillover", reason("spillover")),
    row("failover", reason("failover")),
    row("compliance", reason("compliance")),
    row("retried by the director on another region (5xx before the first byte)", (p) =>
      p.retried === null ? "–" : String(p.retried),
    ),
    row(
      "**residency violations** (of the residency tenants' requests)",
      (p) => `**${p.figures.residency.violations}** (of ${p.figures.residency.requests})`,
    ),
    row("pass wall time", (p) => `${p.wallS} s`),
  ];

  const ttft: string[] = [
    `| phase | caller region | (a) P95 | (b) P95 | (a) P50 | (b) P50 |`,
    "|---|---|---:|---:|---:|---:|",
  ];
  for (const phase of PHASES) {
    for (const c of [...REGIONS, UNRESTRICTED, "all"]) {
      const v = (p: PassReport | undefined, k: "p95Ms" | "p50Ms") =>
        p ? ms(p.figures.ttftByPhase[phase][k][c]) : "–";
      const bold = (x: string) => (c === "all" ? `**${x}**` : x);
      ttft.push(
        `| ${phase} | ${c} | ${bold(v(d, "p95Ms"))} | ${bold(v(n, "p95Ms"))} | ${v(d, "p50Ms")} | ${v(n, "p50Ms")} |`,
      );
    }
  }

  const errs = [
    "| phase | (a) errors / requests | (b) errors / requests | (a) answered by region | (b) answered by region |",
    "|---|---:|---:|---|---|",
  ];
  for (const phase of PHASES) {
    const e = (p: PassReport | undefined) => {
      if (!p) return "–";
      const x = p.figures.errorsByPhase[phase];
      return `${x.errors} / ${x.requests}`;
    };
    const by = (p: PassReport | undefined) =>
      p ? REGIONS.map((g) => `${g} ${p.figures.servedByPhase[phase][g] ?? 0}`).join(", ") : "–";
    errs.push(`| ${phase} | ${e(d)} | ${e(n)} | ${by(d)} | ${by(n)} |`);
  }

  const streams = d ? Object.keys(d.figures.switches.byStream) : [];
  const sw = [
    "| stream (caller region/tenant) | (a) switches: all / home | (b) all / home |",
    "|---|---:|---:|",
  ];
  for (const k of streams) {
    const v = (p: PassReport | undefined) => {
      const x = p?.figures.switches.byStream[k];
      return x ? `${x.all} / ${x.home}` : "–";
    };
    sw.push(`| ${k} | ${v(d)} | ${v(n)} |`);
  }

  const events = (d ?? n)?.events ?? [];
  const states = (d?.failingStates ?? []).map(
    (x) =>
      `- ${(x.fromMs / 1000).toFixed(1)}–${(x.toMs / 1000).toFixed(1)} s: ${x.state} (${x.decisions} decision${x.decisions === 1 ? "" : "s"})`,
  );
  const t = r.targets;
  const targets = [
    `- Residency (enforced): tokengate's director served **${t.residencyViolations ?? "–"}** request(s) outside their tenant's regions — ${t.residencyViolations === 0 ? "met" : "**not met: the run fails**"}.`,
    `- Time to fail over ≤ ${sec(t.failoverTargetMs)}: ${sec(t.failoverMs)} — ${check(t.failoverMet)}.`,
    `- Flapping while degrading ≤ ${t.flappingTargetPerMin} home switches/min: ${t.flappingPerMin ?? "–"} — ${check(t.flappingMet)}.`,
    `- Fewer errors than the naive GeoDNS during the failure: ${t.failErrorsDirector ?? "–"} against ${t.failErrorsNaive ?? "–"} — ${check(t.fewerFailErrorsMet)}.`,
    `- Traffic back in ${FAILING_REGION} within the recovery phase: ${sec(t.backMs)} — ${check(t.backMet)}.`,
  ];

  const problems =
    r.problems.length === 0
      ? ""
      : `\n## Problems (the run failed)\n\n${r.problems.map((p) => `- ${p}`).join("\n")}\n`;
  return `# Multi-region: tokengate's director against a naive GeoDNS

${r.setup}
${problems}
## Failover, flapping, spillover, residency

${main.join("\n")}

"${FAILING_REGION}'s traffic" is the streams (caller region, tenant) more than half of whose answered requests were served
in ${FAILING_REGION} in the steady phase (director: ${d?.figures.failover.streams.join(", ") || "–"}; naive:
${n?.figures.failover.streams.join(", ") || "–"}). A switch is a change of serving region between consecutive answered
requests of one stream (by send time); home traffic leaves out requests with a session header (affinity keeps them where
they were) and requests the director spilled over, so that it counts the stream's home moving.

## Live TTFT by caller region and phase (measured on loopback + the modeled WAN round trip)

${ttft.join("\n")}

${FAILING_REGION}'s callers include the residency tenants (eu-bank, ap-health), which the director serves in their own
regions — the modeled WAN adds 80 and 190 ms to theirs — and the GeoDNS serves in ${FAILING_REGION}, against their
residency; the row "${UNRESTRICTED}" leaves them out. A P95 is over the answered requests only: see the errors below.

## Errors and where requests were answered, per phase (by send time)

${errs.join("\n")}

## Region switches per stream

${sw.join("\n")}

## ${FAILING_REGION}'s faults (both passes)

${events.map((e) => `- ${e.phase} at ${(e.plannedMs / 1000).toFixed(0)} s (applied at ${(e.appliedMs / 1000).toFixed(2)} s): ${e.what}`).join("\n")}

## ${FAILING_REGION} as the director saw it

Its candidate in each decision of pass (a), in decision order (decisions that filtered it for the tenant's residency
left out), runs of the same state merged: \`ok\` passed the filters; otherwise the filter that kept it out.

${states.length > 0 ? states.join("\n") : "- no decision log"}

## Targets

${targets.join("\n")}
`;
}
