// The benchmark report: results.json, report.md and SVG charts from one run's BenchResults.

export { type ReportOptions, renderReport } from "./markdown.js";
export { kvUsageChart, queueDepthChart, ttftChart } from "./svg.js";
export { writeReport } from "./write.js";
