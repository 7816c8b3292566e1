// Writes one run's report directory: results.json, report.md and the SVG charts it links.

import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { BenchResults } from "../results.js";
import { jsonText } from "./json-text.js";
import { renderReport } from "./markdown.js";
import { kvUsageChart, queueDepthChart, ttftChart } from "./svg.js";

/** Above this, results.json leaves out the per-request samples: the figures stay, the file stays openable. */
export const MAX_RESULTS_JSON_BYTES = 5 * 1024 * 1024;

/** A router name as a file-name part: anything outside [A-Za-z0-9._-] becomes "-". */
export function fileSafe(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, "-");
}

/** results.json's text: with the samples if that stays within `maxBytes`, else without them. */
export function resultsJson(
  results: BenchResults,
  maxBytes = MAX_RESULTS_JSON_BYTES,
): { text: string; samplesOmitted: boolean } {
  const full = `${jsonText(results)}\n`;
  if (Buffer.byteLength(full) <= maxBytes) return { text: full, samplesOmitted: false };
  const routers = Object.fromEntries(
    Object.entries(results.routers).map(([name, { samples: _samples, ...rest }]) => [name, rest]),
  );
  return { text: `${jsonText({ ...results, routers })}\n`, samplesOmitted: true };
}

/**
 * Writes results.json, report.md, ttft-cdf.svg and queue-/kv-<router>.svg for each router that ran and
 * recorded those gauges into `outDir` (created if missing). Returns the paths written, in that order.
 * @example const files = await writeReport(results, "bench-results/support-incident")
 */
export async function writeReport(results: BenchResults, outDir: string): Promise<string[]> {
  await mkdir(outDir, { recursive: true });
  const charts = new Map<string, string>();
  const ran = Object.entries(results.routers).filter(([, r]) => r.status === "ok");
  if (ran.some(([, r]) => (r.samples?.length ?? 0) > 0)) charts.set("ttft-cdf.svg", ttftChart(results));
  const stems = new Set<string>();
  for (const [name, r] of ran) {
    // Two names that differ only in unsafe characters must not overwrite each other's charts.
    let stem = fileSafe(name);
    for (let i = 2; stems.has(stem); i++) stem = `${fileSafe(name)}-${i}`;
    stems.add(stem);
    if (Object.keys(r.queue_depth).length > 0)
      charts.set(`queue-${stem}.svg`, queueDepthChart(results, name));
    if (Object.keys(r.kv_usage).length > 0) charts.set(`kv-${stem}.svg`, kvUsageChart(results, name));
  }

  const json = resultsJson(results);
  const notes = json.samplesOmitted
    ? [
        "results.json leaves out the per-request samples: with them it would exceed 5 MB. The charts were drawn from them.",
      ]
    : [];
  const files = new Map<string, string>([
    ["results.json", json.text],
    ["report.md", renderReport(results, { charts: [...charts.keys()], notes })],
    ...charts,
  ]);
  const written: string[] = [];
  for (const [file, text] of files) {
    const path = join(outDir, file);
    await writeFile(path, text);
    written.push(path);
  }
  return written;
}
