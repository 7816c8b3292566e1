// The soak benchmark's report in Markdown, from the figures soak-figures.ts computes and judges.

import { mdTable } from "../report/md-table.js";
import { round } from "../stats.js";
import type { SoakReport } from "./soak-figures.js";

const v = (x: number | null | undefined, unit = "") =>
  x === null || x === undefined || !Number.isFinite(x) ? "–" : `${x}${unit}`;

export function soakMarkdown(r: SoakReport): string {
  const table = (head: string[], rows: string[][]) => mdTable(head, rows);
  const m = r.memory;
  const f = r.failures;
  const lines = [
    `# Soak${r.quick ? " (quick run)" : ""}: ${r.minutes} min`,
    "",
    `${r.date}. Engines: ${r.setup.engines}. Load: ${r.setup.load}. Faults: ${r.setup.faults}. Gateway: ${r.setup.gateway}.`,
    "",
    `Machine: ${r.machine.cpus} × ${r.machine.cpu_model}, Node ${r.machine.node}; load average (1 min) ${r.machine.load_average_1m_before} before, ` +
      `up to ${r.machine.load_average_1m_max_during} during, ${r.machine.load_average_1m_after} after. The engines, the gateway and the load ` +
      "generator share these cores with whatever else runs on the machine.",
    "",
    "## Targets",
    "",
    table(
      ["target", "goal", "measured", "met"],
      r.targets.map((t) => [
        t.name,
        t.goal,
        t.measured,
        t.met === null ? "not measured" : t.met ? "yes" : "**no**",
      ]),
    ),
    "",
    "## Load",
    "",
    `${r.load.requests} requests (${r.load.streams} streamed) at ${r.load.achieved_rps} req/s (offered ${r.load.offered_rps}): ` +
      `${r.load.ok} succeeded, ${r.load.cancelled_by_client} cancelled by the client on purpose, ${r.load.failed} failed, ` +
      `${r.load.dropped_at_max_outstanding} not sent (too many outstanding). TTFT p50 ${r.load.ttft_ms.p50} ms, p99 ${r.load.ttft_ms.p99} ms; ` +
      `end-to-end p50 ${r.load.e2e_ms.p50} ms, p99 ${r.load.e2e_ms.p99} ms.`,
    "",
    table(
      ["engine", "requests served", "waiting queue max", "samples with a queue"],
      Object.entries(r.engines).map(([name, e]) => [
        name,
        v(e.requests),
        String(e.waiting_max),
        `${round(e.waiting_nonzero_share * 100, 1)}%`,
      ]),
    ),
    "",
    "## Gateway process",
    "",
    table(
      ["", "after warm-up", "end of load", "growth"],
      [
        ["window (s)", `${m.warmup.from_s}–${m.warmup.to_s}`, `${m.end.from_s}–${m.end.to_s}`, ""],
        ["RSS (MiB, median)", v(m.warmup.rss_mib), v(m.end.rss_mib), v(m.rss_growth_percent, "%")],
        [
          "heap used (MiB, median)",
          v(m.warmup.heap_used_mib),
          v(m.end.heap_used_mib),
          v(m.heap_growth_percent, "%"),
        ],
        [
          "heap used after a full GC (MiB)",
          v(m.warmup.heap_after_gc_mib),
          v(m.end.heap_after_gc_mib),
          v(m.heap_after_gc_growth_percent, "%"),
        ],
        ["RSS after a full GC (MiB)", v(m.warmup.rss_after_gc_mib), v(m.end.rss_after_gc_mib), ""],
        ["open fds (median)", v(r.fds.warmup), v(r.fds.end), ""],
      ],
    ),
    "",
    `RSS halfway through the measured period ${v(m.rss_mid_mib)} MiB (growth from there to the end ${v(m.rss_growth_second_half_percent, "%")}); ` +
      `least-squares trend over the measured period ${v(m.rss_slope_mib_per_hour)} MiB/h; peak RSS ${v(m.rss_peak_mib)} MiB; fds at most ${v(r.fds.max)}, ` +
      `${v(r.fds.after_settle)} after the settle. Event-loop delay (the gateway's 10 s windows): p99 median ${v(r.loop_delay_ms.p99_median)} ms, ` +
      `worst window's p99 ${v(r.loop_delay_ms.p99_max)} ms, max ${v(r.loop_delay_ms.max)} ms.`,
    "",
    `After the load stopped and ${r.end_state.settle_ms} ms of settle: in flight ${v(r.end_state.inflight_metric)} (ai_gateway_inflight_requests), ` +
      `per endpoint ${r.end_state.inflight_by_endpoint ? JSON.stringify(r.end_state.inflight_by_endpoint) : "–"} (/admin/endpoints); ` +
      `queued ${v(r.end_state.queued_metric)} (ai_gateway_queue_depth); open fds ${v(r.end_state.fds)}` +
      `${
        r.end_state.fd_kinds
          ? ` (${Object.entries(r.end_state.fd_kinds)
              .map(([k, n]) => `${n} ${k}`)
              .join(", ")})`
          : ""
      }. ` +
      `Open fds before the load ${v(r.end_state.fds_before_load)}; ` +
      (r.end_state.fds_after_idle === null
        ? "not waited for idle connections to close."
        : `${r.end_state.fds_after_idle} after ${r.end_state.idle_wait_s} s without traffic (idle keep-alive connections close after 60–65 s).`),
    "",
    `The gateway's log: ${r.gateway_log.requests} requests (${Object.entries(r.gateway_log.by_status)
      .map(([k, n]) => `${n} ${k}`)
      .join(
        ", ",
      )}); ${r.gateway_log.retried} retried on another engine (${r.gateway_log.retried_ok} of them succeeded), ` +
      `${r.gateway_log.failed_without_retry_after_retryable} failed after a retryable failure without a second attempt (the retry budget refused it); ` +
      `events: ${
        Object.entries(r.gateway_log.events)
          .map(([k, n]) => `${k} ${n}`)
          .join(", ") || "none"
      }.`,
    "",
    "## Crashes",
    "",
    table(
      [
        "#",
        "engine",
        "crashed at (s)",
        "engine back (s)",
        "gateway took it out (s)",
        "gateway routable again (s)",
        "gateway's reasons",
        "failed while healthy",
        "streams cut",
      ],
      r.crashes.map((c, i) => [
        String(i + 1),
        c.endpoint,
        String(c.at_s),
        v(c.engine_back_at_s),
        v(c.gateway_out_at_s),
        v(c.gateway_back_at_s),
        c.posted ? c.gateway_why.join("; ") || "–" : "**fault POST failed**",
        v(c.failed_while_healthy),
        v(c.streams_cut),
      ]),
    ),
    "",
    "## Failures",
    "",
    `${f.total} in all: **${f.while_healthy_capacity} while healthy capacity remained** (counted against the target), ` +
      `${f.stream_cut_by_its_engine_crash} streams cut because the engine relaying them crashed (their tokens were already sent: ` +
      `no gateway can move them; the client gets an error event), ${f.without_healthy_capacity} with no healthy engine at all. ` +
      'Client cancels are not failures. "engine down" is whether any engine was down (crashed or failing /health) when the client saw the failure.',
    "",
    f.groups.length === 0
      ? "None."
      : table(
          ["class", "code", "phase", "engine down", "count", "streams", "first trace ids"],
          f.groups.map((g) => [
            g.class,
            g.code,
            g.phase,
            g.engineDown ? "yes" : "no",
            String(g.count),
            String(g.streams),
            g.samples.map((s) => s.trace_id).join(" "),
          ]),
        ),
    "",
  ];
  const examples = f.groups
    .filter((g) => g.class !== "stream_cut_by_its_engine_crash")
    .flatMap((g) => g.samples.slice(0, 1));
  if (examples.length > 0) {
    lines.push("First failure of each counted group, with the gateway's log line:", "");
    for (const s of examples) {
      const log = s.gateway_log;
      const gw = log
        ? `gateway: status ${log.status}, error_code ${log.error_code}, attempts ${log.attempts}, endpoint ${log.endpoint}, fallback ${log.fallback_reason}`
        : "no gateway log line";
      lines.push(
        `- \`${s.trace_id}\` at ${s.at_s} s (${s.since_crash_ms === null ? "before any crash" : `${s.since_crash_ms} ms after the last crash began`}; down: ${s.down.join(", ") || "none"}): ${s.detail.slice(0, 160).replace(/\|/g, "\\|")} — ${gw}`,
      );
    }
    lines.push("");
  }
  return lines.join("\n");
}
