// The batch-day report: batch-day-figures.ts's figures as the Markdown batch-day.md holds.

import type { BatchDayFigures, RunFigures } from "./batch-day-figures.js";

function fmtMs(x: number | null): string {
  if (x === null) return "–";
  return x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${Math.round(x)} ms`;
}

function endpoints(r: RunFigures): string {
  const e = Object.values(r.liveEndpoints);
  return e.length > 0 ? e.join(" / ") : "–";
}

function n(x: number | null): string {
  return x === null ? "–" : x.toLocaleString("en-US");
}

export function batchDayMarkdown(f: BatchDayFigures, setup: string): string {
  const [s, j] = f.runs as [RunFigures, RunFigures];
  const row = (label: string, a: string, b: string) => `| ${label} | ${a} | ${b} |`;
  const r = j.restart;
  const rows = [
    row(
      "live summaries sent / answered",
      `${n(s.live.sent)} / ${n(s.live.answered)}`,
      `${n(j.live.sent)} / ${n(j.live.answered)}`,
    ),
    row(
      "live failed: in the restart window / outside it",
      `${s.live.failedInRestartWindow} / ${s.live.failedOutsideRestartWindow}`,
      `${j.live.failedInRestartWindow} / ${j.live.failedOutsideRestartWindow}`,
    ),
    row("live TTFT P50", fmtMs(s.live.ttftP50Ms), fmtMs(j.live.ttftP50Ms)),
    row("**live TTFT P95** (answered)", `**${fmtMs(s.live.ttftP95Ms)}**`, `**${fmtMs(j.live.ttftP95Ms)}**`),
    row(
      "live TTFT P95 outside the restart window",
      fmtMs(s.live.ttftP95OutsideRestartMs),
      fmtMs(j.live.ttftP95OutsideRestartMs),
    ),
    row("live TTFT P99", fmtMs(s.live.ttftP99Ms), fmtMs(j.live.ttftP99Ms)),
    row(
      "live TTFT P95, the hop's part (TTFT − engine queue − prefill)",
      fmtMs(s.live.hopP95Ms),
      fmtMs(j.live.hopP95Ms),
    ),
    row("live end-to-end P95", fmtMs(s.live.e2eP95Ms), fmtMs(j.live.e2eP95Ms)),
    row(
      "long summaries answered / sent, TTFT P95",
      `${s.long.answered} / ${s.long.sent}, ${fmtMs(s.long.ttftP95Ms)}`,
      `${j.long.answered} / ${j.long.sent}, ${fmtMs(j.long.ttftP95Ms)}`,
    ),
    row("batch lines submitted", n(s.batch.submitted), n(j.batch.submitted)),
    row(
      "in the output / in the error file",
      `${s.batch.inOutput} / ${s.batch.inErrorFile}`,
      `${j.batch.inOutput} / ${j.batch.inErrorFile}`,
    ),
    row("**batch lines lost**", `**${s.batch.lost}**`, `**${j.batch.lost}**`),
    row("**lines twice in the output**", `**${s.batch.duplicated}**`, `**${j.batch.duplicated}**`),
    row(
      "lines the engines ran to the end twice / engine runs cut",
      `${s.batch.ranTwiceOnEngines} / ${s.batch.engineRunsAborted}`,
      `${j.batch.ranTwiceOnEngines} / ${j.batch.engineRunsAborted}`,
    ),
    row("batch output tokens", n(s.batch.outputTokens), n(j.batch.outputTokens)),
    row(
      "batch window (first line in → last answered)",
      s.batch.windowS === null ? "–" : `${s.batch.windowS} s`,
      j.batch.windowS === null ? "–" : `${j.batch.windowS} s`,
    ),
    row(
      "**batch output tokens/s** in the window",
      `**${n(s.batch.outputTokensPerS)}**`,
      `**${n(j.batch.outputTokensPerS)}**`,
    ),
    row("live summaries by online engine (gateway log)", endpoints(s), endpoints(j)),
    row("run's wall time", `${s.wallS} s`, `${j.wallS} s`),
  ];
  const jobs = j.jobs.map(
    (x) =>
      `| \`${x.id}\` | ${x.lines} | ${fmtMs(x.uploadMs)} / ${fmtMs(x.createMs)} | ${x.status} | ${x.completed} | ${x.failed} | ${x.createdAtS} | ${x.endedAtS ?? "–"} |`,
  );
  const outcomes = Object.entries(j.batch.lineOutcomes)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  const timeline = s.liveTimeline.length >= j.liveTimeline.length ? s.liveTimeline : j.liveTimeline;
  const bin = (run: RunFigures, fromS: number) => {
    const x = run.liveTimeline.find((y) => y.fromS === fromS);
    if (!x) return "–";
    return `${fmtMs(x.ttftP95Ms)}${x.failed > 0 ? ` (${x.failed})` : ""}`;
  };
  const part = (run: RunFigures, fromS: number) =>
    fmtMs(run.liveTimeline.find((y) => y.fromS === fromS)?.hopP95Ms ?? null);
  const t = f.targets;
  const problems = [
    ...j.batch.lostIds.map((id) => `- lost: \`${id}\``),
    ...j.batch.duplicatedIds.map((id) => `- more than once in the files: \`${id}\``),
    ...[...s.live.failures, ...j.live.failures].map((x) => `- live failure: ${x}`),
  ];
  return `# Batch day

${setup}

| | synchronous batch calls | Batch API jobs, gateway ${r ? r.signal : "not"} restarted |
|---|---:|---:|
${rows.join("\n")}

Live TTFT P95, jobs over synchronous: ${f.liveTtftP95Ratio ?? "–"} (answered requests), ${f.liveTtftP95OutsideRestartRatio ?? "–"} (outside the restart window).
${
  r
    ? `
Restart: ${r.signal} at ${r.atS} s with ${r.linesDoneAtKill} of ${r.linesSubmittedAtKill} submitted lines finished; the gateway
was down ${fmtMs(r.downMs)} (kill → listening), ready after ${fmtMs(r.readyMs)}, sent its first line to an engine again
after ${fmtMs(r.sentAgainAfterMs)}, and the jobs progressed again (a line finished) ${r.progressAfterMs === null ? "never" : `${fmtMs(r.progressAfterMs)}`} after the kill. ${j.live.inRestartWindow} live summaries were in flight in the
restart window (kill → ready), ${j.live.failedInRestartWindow} of them failed.
`
    : ""
}
| job | lines | upload / create | status | completed | failed | created (s) | seen final (s) |
|---|---:|---:|---|---:|---:|---:|---:|
${jobs.join("\n")}

Live TTFT P95 (failed) by when the summaries were sent:

| from (s) | ${timeline.map((x) => x.fromS).join(" | ")} |
|---|${timeline.map(() => "---:").join("|")}|
| synchronous | ${timeline.map((x) => bin(s, x.fromS)).join(" | ")} |
| batch jobs | ${timeline.map((x) => bin(j, x.fromS)).join(" | ")} |
| synchronous: the hop's part | ${timeline.map((x) => part(s, x.fromS)).join(" | ")} |
| batch jobs: the hop's part | ${timeline.map((x) => part(j, x.fromS)).join(" | ")} |

The runner's line outcomes: ${outcomes || "none logged"}.

Targets: live TTFT P95 outside the restart window no worse than the synchronous run's (within ${Math.round((t.liveTtftTolerance - 1) * 100)}%) — ${t.liveNoWorse ? "met" : "NOT met"};
no batch line lost — ${t.noLostLines ? "met" : "NOT met"}; no line twice in the output — ${t.noDuplicatedLines ? "met" : "NOT met"};
every job completed — ${t.jobsCompleted ? "met" : "NOT met"}.
${problems.length > 0 ? `\n${problems.join("\n")}\n` : ""}`;
}
