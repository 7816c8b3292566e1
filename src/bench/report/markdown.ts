// report.md: one benchmark run as a person reads it — seed 004's acceptance table first (and issue 13's
// targets, where a scenario declares them), then latency per request class, per tenant and per input
// size, TTFT prediction error, throughput and load balance, routers that did not run, and the charts.

import type { BenchResults, RouterResult } from "../results.js";
import { describePriority } from "../services/router-priority.js";
import { type AcceptanceTarget, meetsTarget, SEED_004_TARGETS } from "./acceptance-targets.js";
import { flowSection } from "./flow-section.js";
import { formatCount, formatMs, formatNumber, formatRate } from "./format.js";
import { groupSections } from "./group-tables.js";
import { figuresRight, mdTable } from "./md-table.js";
import { predictionSection } from "./prediction-section.js";
import { prefillTargetSection } from "./prefill-targets.js";
import { orderClasses } from "./request-classes.js";
import { roundsSection } from "./rounds-section.js";
import { type Ran, routerTitle } from "./router-title.js";

export interface ReportOptions {
  /** Chart files beside report.md, linked in this order. */
  charts?: string[];
  /** Extra remarks about this report (e.g. that results.json left out the per-request samples). */
  notes?: string[];
}

/**
 * Renders report.md for one run.
 * @example writeFileSync("report.md", renderReport(results, { charts: ["ttft-cdf.svg"] }))
 */
export function renderReport(results: BenchResults, opts: ReportOptions = {}): string {
  const ran = okRouters(results);
  const sections = [
    header(results),
    routerList(results),
    acceptanceSection(results, ran),
    prefillTargetSection(results, ran),
    roundsSection(results),
    classSections(ran),
    groupSections(ran),
    hopSection(ran),
    tenantFlowSection(ran),
    predictionSection(ran),
    throughputSection(ran),
    loraSection(ran),
    modelSection(ran),
    flowSection(ran, results.live_class ?? "interactive"),
    endpointSection(ran),
    chartSection(opts.charts ?? []),
    opts.notes?.length ? `## Notes\n\n${opts.notes.map((n) => `- ${n}`).join("\n")}` : "",
  ];
  return `${sections.filter((s) => s !== "").join("\n\n")}\n`;
}

function okRouters(results: BenchResults): Ran {
  return Object.entries(results.routers).filter(([, r]) => r.status === "ok");
}

function header(results: BenchResults): string {
  const mode = results.quick ? "quick (a short CI smoke run; figures are indicative)" : "full";
  const facts = [
    `- **Date:** ${results.date}`,
    `- **Seed:** ${results.seed}`,
    `- **Run:** ${mode}`,
    `- **Requests:** ${formatCount(results.requests)} in the workload, replayed under each router`,
  ];
  return `# Benchmark report: ${results.scenario}\n\n${results.description}\n\n${facts.join("\n")}`;
}

function routerList(results: BenchResults): string {
  const lines = Object.entries(results.routers).map(([name, r]) => {
    const where = r.topology ? ` on \`${r.topology}\`` : "";
    const priority = r.priority ? ` (${describePriority(r.priority)})` : "";
    if (r.status === "ok") return `- **${name}**${where}: ran${priority}`;
    return `- **${name}**${where}: **${r.status}** — ${reasonText(r)}`;
  });
  return `## Routers\n\n${lines.length ? lines.join("\n") : "No routers in this run."}`;
}

/** A reason on one line: it may be an engine's or nginx's multi-line stderr. */
function reasonText(r: RouterResult): string {
  return r.reason?.trim().replace(/\s+/g, " ") || "no reason recorded";
}

function notRunLine(results: BenchResults): string {
  const missing = Object.entries(results.routers).filter(([, r]) => r.status !== "ok");
  if (missing.length === 0) return "";
  const names = missing.map(([name, r]) => `${name} (${r.status}: ${reasonText(r)})`);
  return `\n\nNot in the tables below, because they did not run: ${names.join("; ")}.`;
}

function formatFigure(t: AcceptanceTarget, value: number | null | undefined): string {
  return t.unit === "ms" ? formatMs(value) : formatRate(value);
}

function acceptanceSection(results: BenchResults, ran: Ran): string {
  const intro =
    "Seed 004's acceptance table (验收标准). *Before* is the seed's figure before its change. " +
    "✓ meets the target, ✗ misses it; n/a means the router does not measure it " +
    "(the nginx baselines keep no route log and classify no tasks)." +
    notRunLine(results);
  if (ran.length === 0) return `## Seed 004 acceptance\n\n${intro}\n\nNo router completed a run.`;
  const rows = SEED_004_TARGETS.map((t) => {
    const cells = ran.map(([, r]) => {
      const value = r.acceptance?.[t.key];
      const verdict = meetsTarget(t, value);
      return verdict === null ? "n/a" : `${formatFigure(t, value)} ${verdict ? "✓" : "✗"}`;
    });
    const target = `${t.bound === "below" ? "<" : ">"} ${formatFigure(t, t.target)}`;
    return [t.label, formatFigure(t, t.before), target, ...cells];
  });
  const head = ["Figure", "Before", "Target", ...ran.map(([n, r]) => routerTitle(n, r))];
  const align = figuresRight(head.length);
  return `## Seed 004 acceptance\n\n${intro}\n\n${mdTable(head, rows, align)}`;
}

function classNames(ran: Ran): string[] {
  return orderClasses(ran.flatMap(([, r]) => Object.keys(r.classes)));
}

function classSections(ran: Ran): string {
  const classes = classNames(ran);
  if (classes.length === 0) return "";
  const head = [
    "Router",
    "Requests",
    "Errors",
    "TTFT P50",
    "TTFT P90",
    "TTFT P99",
    "E2E P50",
    "E2E P90",
    "E2E P99",
  ];
  const align = figuresRight(head.length);
  const tables = classes.map((cls) => {
    const rows = ran.flatMap(([name, r]) => {
      const c = r.classes[cls];
      if (!c) return [];
      const q = [c.ttft_ms.p50, c.ttft_ms.p90, c.ttft_ms.p99, c.e2e_ms.p50, c.e2e_ms.p90, c.e2e_ms.p99];
      return [[routerTitle(name, r), formatCount(c.count), formatCount(c.errors), ...q.map(formatMs)]];
    });
    return `### ${cls}\n\n${mdTable(head, rows, align)}`;
  });
  return `## Latency per request class\n\nClient-side: TTFT to the first content token, E2E to the end of the reply.\n\n${tables.join("\n\n")}`;
}

/** Engine-side TTFT (where the request was sent) apart from the hop (the router and the machine). */
function hopSection(ran: Ran): string {
  const classes = classNames(ran);
  const head = [
    "Router",
    "Engine TTFT P50",
    "Engine TTFT P90",
    "Engine TTFT P95",
    "Hop P50",
    "Hop P95",
    "Hop P99",
  ];
  const tables = classes.flatMap((cls) => {
    const rows = ran.flatMap(([name, r]) => {
      const c = r.classes[cls];
      if (!c?.engine_ttft_ms || !c.hop_ms || c.engine_ttft_ms.p50 === null) return [];
      const e = c.engine_ttft_ms;
      const h = c.hop_ms;
      return [[routerTitle(name, r), ...[e.p50, e.p90, e.p95, h.p50, h.p95, h.p99].map(formatMs)]];
    });
    return rows.length ? [`### ${cls}\n\n${mdTable(head, rows, figuresRight(head.length))}`] : [];
  });
  if (tables.length === 0) return "";
  return (
    "## Where TTFT went\n\nEngine TTFT: queue + prefill in the engine's own record (what the routing decided). " +
    "Hop: each request's client TTFT minus its engine TTFT (the router, the loopback network and the " +
    `machine's own delays).\n\n${tables.join("\n\n")}`
  );
}

/** Per tenant: the hop, the gateway queue and engines idle while the gateway held its requests. */
function tenantFlowSection(ran: Ran): string {
  const head = [
    "Router",
    "Tenant",
    "Hop P50",
    "Hop P95",
    "Gateway queue P95",
    "Hop less queue P95",
    "Held while idle",
    "Requests",
  ];
  const rows = ran.flatMap(([name, r]) =>
    Object.entries(r.tenant_flow ?? {}).map(([tenant, f]) => [
      routerTitle(name, r),
      tenant,
      formatMs(f.hop_ms.p50),
      formatMs(f.hop_ms.p95),
      formatMs(f.gateway_queue_ms?.p95 ?? null),
      formatMs(f.hop_after_queue_ms?.p95 ?? null),
      f.held_while_idle_ms_total === null
        ? "n/a"
        : `${formatMs(f.held_while_idle_ms_total)} (${f.held_while_idle_requests} req)`,
      formatCount(f.count),
    ]),
  );
  if (rows.length === 0) return "";
  return (
    "## Hop and gateway holds per tenant\n\nHop: client TTFT minus engine TTFT; less queue: without the wait in the gateway queue (a hold made on purpose). Held while idle: summed over the " +
    "tenant's requests, the time an engine it could have gone to had no prefill of the gateway's while the " +
    "gateway held it (a batch pause's holds left out; the requests: those over 10 ms); n/a: no gateway log.\n\n" +
    mdTable(head, rows, figuresRight(head.length, 2))
  );
}

function throughputSection(ran: Ran): string {
  if (ran.length === 0) return "";
  const head = [
    "Router",
    "Throughput",
    "Output",
    "Errors",
    "Prefix-cache hit rate",
    "Endpoint load max/mean",
    "Duration",
  ];
  const rows = ran.map(([name, r]) => [
    routerTitle(name, r),
    `${formatNumber(r.throughput_rps, 2)} req/s`,
    `${formatNumber(r.output_tokens_per_s, 0)} tok/s`,
    formatCount(r.errors),
    formatRate(r.prefix_cache_hit_rate),
    r.endpoint_load_max_over_mean === null ? "n/a" : `${formatNumber(r.endpoint_load_max_over_mean, 2)}×`,
    `${formatNumber(r.duration_s, 0)} s`,
  ]);
  const align = figuresRight(head.length);
  const why =
    "Endpoint load max/mean: the busiest endpoint's requests over the mean of its group of replicas, " +
    "for the most uneven group (1.00× is perfectly even).";
  return `## Throughput and load\n\n${why}\n\n${mdTable(head, rows, align)}`;
}

/**
 * LoRA adapter loads per router, as the engines counted them, in all and per endpoint; with the client's
 * TTFT beside them, since a load stalls the engine's whole batch.
 */
function loraSection(ran: Ran): string {
  const withLoads = ran.filter(([, r]) => r.lora_loads !== undefined);
  if (withLoads.length === 0) return "";
  const endpoints = [...new Set(withLoads.flatMap(([, r]) => Object.keys(r.lora_loads!.by_endpoint)))];
  const head = ["Router", "Adapter loads", ...endpoints, "TTFT P50", "TTFT P90", "TTFT P99"];
  const rows = withLoads.map(([name, r]) => {
    const l = r.lora_loads!;
    const ttft = allRequestsTtft(r);
    return [
      routerTitle(name, r),
      formatCount(l.total),
      ...endpoints.map((e) => (e in l.by_endpoint ? formatCount(l.by_endpoint[e]!) : "n/a")),
      formatMs(ttft?.p50),
      formatMs(ttft?.p90),
      formatMs(ttft?.p99),
    ];
  });
  const disagree = withLoads.filter(([, r]) => {
    const l = r.lora_loads!;
    return l.counter_total !== null && l.counter_total !== l.total;
  });
  const note = disagree.length
    ? `\n\nThe engines' \`tokengate_sim_lora_loads_total\` counters disagree with their state for ${disagree
        .map(([n, r]) => `${n} (${formatCount(r.lora_loads!.counter_total!)})`)
        .join(", ")}.`
    : "";
  const why =
    "Adapter loads onto the engines' GPUs during each router's run, as the engines count them " +
    "(`loraLoads` in each replica's `GET /admin/state`, after the run minus before; the engines are " +
    "reset between routers). Each load stalls that engine's batch for the load time.";
  return `## LoRA adapter loads\n\n${why}\n\n${mdTable(head, rows, figuresRight(head.length))}${note}`;
}

/** TTFT over every request, when the run has one class (else none: classes are shown apart). */
function allRequestsTtft(r: RouterResult) {
  const classes = Object.values(r.classes);
  return classes.length === 1 ? classes[0]!.ttft_ms : null;
}

/** TTFT by the model each request named (adapters, for a LoRA scenario): P50 / P90 per router. */
function modelSection(ran: Ran): string {
  const withModels = ran.filter(([, r]) => r.by_model !== undefined);
  if (withModels.length === 0) return "";
  const models = [...new Set(withModels.flatMap(([, r]) => Object.keys(r.by_model!)))];
  const head = ["Model", "Requests", ...withModels.map(([n, r]) => `${routerTitle(n, r)} TTFT P50 / P90`)];
  const rows = models.map((m) => {
    const count = withModels.map(([, r]) => r.by_model![m]?.count ?? 0).reduce((a, b) => Math.max(a, b), 0);
    const cells = withModels.map(([, r]) => {
      const t = r.by_model![m]?.ttft_ms;
      return t ? `${formatMs(t.p50)} / ${formatMs(t.p90)}` : "n/a";
    });
    return [m, formatCount(count), ...cells];
  });
  return `## TTFT by requested model\n\nClient-side, by the \`model\` each request named.\n\n${mdTable(head, rows, figuresRight(head.length))}`;
}

function endpointSection(ran: Ran): string {
  const withEndpoints = ran.filter(([, r]) => r.endpoints.length > 0);
  if (withEndpoints.length === 0) return "";
  const loads = withEndpoints.some(([, r]) => r.endpoints.some((e) => e.lora_loads !== undefined));
  const head = [
    "Endpoint",
    "Group",
    "Requests",
    "Share",
    "Prompt tokens",
    "Generated tokens",
    ...(loads ? ["Adapter loads"] : []),
  ];
  const align = figuresRight(head.length, 2);
  const tables = withEndpoints.map(([name, r]) => {
    const total = r.endpoints.reduce((s, e) => s + e.requests, 0);
    const rows = r.endpoints.map((e) => [
      e.endpoint,
      e.group,
      formatCount(e.requests),
      formatRate(total > 0 ? e.requests / total : null),
      formatCount(e.prompt_tokens),
      formatCount(e.generation_tokens),
      ...(loads ? [e.lora_loads === undefined ? "n/a" : formatCount(e.lora_loads)] : []),
    ]);
    return `### ${routerTitle(name, r)}\n\n${mdTable(head, rows, align)}`;
  });
  return `## Load per endpoint\n\n${tables.join("\n\n")}`;
}

function chartCaption(file: string): string {
  const base = file.replace(/^.*\//, "").replace(/\.svg$/, "");
  if (base === "ttft-cdf") return "TTFT distribution per router and request class";
  if (base.startsWith("queue-")) return `Engine waiting queue per endpoint: ${base.slice("queue-".length)}`;
  if (base.startsWith("kv-")) return `KV-cache use per endpoint: ${base.slice("kv-".length)}`;
  return base;
}

function chartSection(charts: string[]): string {
  if (charts.length === 0) return "";
  const items = charts.map((f) => `### ${chartCaption(f)}\n\n![${chartCaption(f)}](${encodeURI(f)})`);
  return `## Charts\n\n${items.join("\n\n")}`;
}
