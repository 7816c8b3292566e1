// The Markdown of the overhead benchmark: the targets, then each measurement's paths side by side.

import { round } from "../stats.js";
import type { CpuFigures } from "./overhead-cpu.js";
import type { OverheadReport } from "./overhead-figures.js";
import { PACED_PROFILE, PACED_STREAMS, PACED_TOKENS } from "./overhead-paced.js";
import {
  CONCURRENCY,
  MAX_OTHER_CORES,
  PATHS,
  type PathName,
  RATE,
  RELAY_TOKENS,
} from "./overhead-settings.js";

export function markdown(r: OverheadReport): string {
  const v = (x: number | null | undefined) => (x === null || x === undefined ? "–" : String(x));
  const plus = (x: number | undefined, base: number | undefined, name: PathName) =>
    name === "direct" || x === undefined || base === undefined
      ? "–"
      : `${x >= base ? "+" : ""}${round(x - base, 2)}`;
  const table = (head: string[], rows: string[][]) =>
    [
      `| ${head.join(" | ")} |`,
      `|${head.map(() => "---").join("|")}|`,
      ...rows.map((row) => `| ${row.join(" | ")} |`),
    ].join("\n");
  // CPU as cores busy over the measured period: router, engines, client, everything else on the machine.
  const cpuHead = ["router cores", "engines cores", "client cores", "other cores"];
  const cores = (c: CpuFigures) =>
    [c.router_s, c.engines_s, c.client_s, c.others_s].map((x) =>
      v(x === null ? null : round(x / c.seconds, 2)),
    );
  const present = PATHS.filter((p) => r.latency[p]);
  const dl = r.latency.direct;
  const ds = r.streaming.direct;
  const busiest = Math.max(
    ...[r.latency, r.streaming, r.throughput, r.relay].flatMap((by) =>
      Object.values(by).map((x) => x.cpu.others_s / x.cpu.seconds),
    ),
  );
  const repeated = [r.latency, r.streaming, r.throughput, r.relay, r.paced_relay].reduce(
    (n, by) => n + Object.values(by).reduce((m, x) => m + x.attempts - 1, 0),
    0,
  );
  const contended = [
    ...(repeated > 0
      ? [
          `${repeated} measurement(s) were repeated because other work used more than ${MAX_OTHER_CORES} cores ` +
            "during them (the JSON lists each discarded attempt's other load).",
        ]
      : []),
    ...(busiest > MAX_OTHER_CORES
      ? [
          `**Contended run:** even the least disturbed attempt of a measurement had ${round(busiest, 2)} cores ` +
            'of other work (column "other cores"); its figures are pessimistic and noisy.',
        ]
      : []),
  ];
  if (contended.length > 0) contended.push("");
  const lines = [
    `# Gateway overhead${r.quick ? " (quick run)" : ""}`,
    "",
    `CPU pinning: ${r.setup.cpu_pinning ?? "none"}. Priority: ${r.setup.priority ?? "all at the same priority"}.`,
    "",
    `Engines: ${r.setup.engines}. Request: ${r.setup.request}. Each path is measured for ${r.setup.measured_seconds} s. ` +
      `At the fixed rate the paths alternate in ${r.setup.fixed_rate_slices ?? 1} slices each (the order rotating, ` +
      `${r.setup.fixed_rate_slice_warmup_seconds ?? 1} s of uncounted arrivals at the start of each), so that other work on the machine falls on all paths alike; ` +
      "throughput and relay run one path after another after a 1 s warm-up. Before any measurement every path carried 3 s of traffic so that no process runs cold code. " +
      `Client: ${r.setup.client}.`,
    "",
    `Machine: ${r.machine.cpus} × ${r.machine.cpu_model}, Node ${r.machine.node}, nginx ${r.machine.nginx}; ` +
      `load average ${r.machine.load_average_1m_before} before, ${r.machine.load_average_1m_after} after. ` +
      "The load generator, the engines, the gateway and nginx share these cores, so each figure includes contention " +
      'with the engines and the client; "other cores" is CPU used by anything else on the machine during the run.',
    "",
    ...contended,
    "## Targets",
    "",
    table(
      ["target", "goal", "measured", "met"],
      r.targets.map((t) => [
        t.name,
        t.target,
        `${v(t.measured)}${t.unit && t.measured !== null ? ` ${t.unit}` : ""}`,
        t.met === null ? "not measured" : t.met ? "yes" : "**no**",
      ]),
    ),
    "",
    `## Non-streaming at ${RATE} req/s (open loop, constant arrivals)`,
    "",
    table(
      [
        "path",
        "req/s",
        "errors + dropped",
        "p50 ms",
        "p99 ms",
        "added p50",
        "added p99",
        "router CPU µs/req",
        ...cpuHead,
      ],
      present.map((p) => {
        const x = r.latency[p]!;
        return [
          p,
          v(x.achieved_rps),
          v(x.errors + x.dropped),
          v(x.latency_ms.p50),
          v(x.latency_ms.p99),
          plus(x.latency_ms.p50, dl?.latency_ms.p50, p),
          plus(x.latency_ms.p99, dl?.latency_ms.p99, p),
          v(x.router_cpu_us_per_request),
          ...cores(x.cpu),
        ];
      }),
    ),
    "",
    `## Streaming at ${RATE} req/s (16 tokens each; times in ms)`,
    "",
    table(
      [
        "path",
        "req/s",
        "errors + dropped",
        "TTFT p50",
        "TTFT p99",
        "e2e p50",
        "e2e p99",
        "added TTFT p99",
        "added e2e p99",
        ...cpuHead,
      ],
      present.map((p) => {
        const x = r.streaming[p]!;
        return [
          p,
          v(x.achieved_rps),
          v(x.errors + x.dropped),
          v(x.ttft_ms.p50),
          v(x.ttft_ms.p99),
          v(x.e2e_ms.p50),
          v(x.e2e_ms.p99),
          plus(x.ttft_ms.p99, ds?.ttft_ms.p99, p),
          plus(x.e2e_ms.p99, ds?.e2e_ms.p99, p),
          ...cores(x.cpu),
        ];
      }),
    ),
    "",
    ...pausesSection(r, present, table),
    `## Maximum throughput (closed loop, ${CONCURRENCY} clients, non-streaming)`,
    "",
    table(
      ["path", "req/s", "errors", "p50 ms", "p99 ms", "router CPU µs/req", ...cpuHead],
      present.map((p) => {
        const x = r.throughput[p]!;
        return [
          p,
          v(x.rps),
          v(x.errors),
          v(x.latency_ms.p50),
          v(x.latency_ms.p99),
          v(x.router_cpu_us_per_request),
          ...cores(x.cpu),
        ];
      }),
    ),
    "",
    `## Streaming relay (${CONCURRENCY} concurrent streams of ${RELAY_TOKENS} tokens)`,
    "",
    table(
      ["path", "SSE events/s", "errors", "events per router CPU-s", "events per client read", ...cpuHead],
      present.map((p) => {
        const x = r.relay[p]!;
        return [
          p,
          v(x.events_per_s),
          v(x.errors),
          v(x.events_per_router_cpu_s),
          v(x.events_per_client_read),
          ...cores(x.cpu),
        ];
      }),
    ),
    "",
    `## Streaming relay at an engine's pace (${PACED_STREAMS} concurrent streams of ${PACED_TOKENS} tokens, ` +
      `engines \`${PACED_PROFILE}\`: every frame its own read and write)`,
    "",
    table(
      ["path", "SSE events/s", "errors", "events per router CPU-s", "router µs per event", ...cpuHead],
      present
        .filter((p) => r.paced_relay[p])
        .map((p) => {
          const x = r.paced_relay[p]!;
          return [
            p,
            v(x.events_per_s),
            v(x.errors),
            v(x.events_per_router_cpu_s),
            v(x.router_us_per_event),
            ...cores(x.cpu),
          ];
        }),
    ),
    "",
    "Added latency is the difference of the percentiles (path − direct), not a percentile of per-request " +
      "differences. Router CPU is the gateway process, or nginx's master and worker, from /proc.",
    "",
  ];
  return lines.join("\n");
}

/**
 * What paused each probed router while it was measured at the fixed rate (pause-probe.ts): its garbage
 * collections and event-loop stalls, beside its added p99, so a tail can be told from the router's own
 * pauses or not.
 */
function pausesSection(
  r: OverheadReport,
  present: readonly PathName[],
  table: (head: string[], rows: string[][]) => string,
): string[] {
  const v = (x: number) => String(x);
  const rows: string[][] = [];
  for (const p of present) {
    for (const [run, x] of [
      ["non-streaming", r.latency[p]],
      ["streaming", r.streaming[p]],
    ] as const) {
      const q = x?.router_pauses;
      if (!q) continue;
      rows.push([p, run, v(q.gc_count), v(q.gc_ms), v(q.gc_max_ms), v(q.stalls), v(q.stall_max_ms)]);
    }
  }
  if (rows.length === 0) return [];
  return [
    `## What paused the routers while measured at ${RATE} req/s`,
    "",
    "Each router is started with a probe (`src/bench/overhead/pause-probe.ts`) that logs its garbage collections and its event-loop stalls of 10 ms or more (a 20 ms timer firing that late: a collection, work, or no CPU to run on).",
    "",
    table(
      ["path", "run", "collections", "GC pause ms", "longest GC ms", "stalls ≥ 10 ms", "longest stall ms"],
      rows,
    ),
    "",
  ];
}
