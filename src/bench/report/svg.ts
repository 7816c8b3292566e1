// The report's charts as standalone SVG 1.1 files, drawn by hand (no dependencies, no external resources).

export { kvUsageChart, queueDepthChart } from "./timeseries-chart.js";
export { ttftChart } from "./ttft-chart.js";
