// The overhead benchmark's targets (issue 3), judged from one run's figures.

import { round } from "../stats.js";
import type {
  ByPath,
  LatencyFigures,
  RelayFigures,
  StreamingFigures,
  Target,
  ThroughputFigures,
} from "./overhead-figures.js";
import type { PacedRelayFigures } from "./overhead-paced.js";

export const TARGETS = { addedP99Ms: 2, throughputVsNginx: 0.35, relayEventsPerCpuS: 30_000 };

export function targets(
  latency: ByPath<LatencyFigures>,
  streaming: ByPath<StreamingFigures>,
  throughput: ByPath<ThroughputFigures>,
  relay: ByPath<RelayFigures>,
  paced: ByPath<PacedRelayFigures>,
): Target[] {
  const added = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? null : round(a - b, 2);
  const atMost = (v: number | null, max: number) => (v === null ? null : v <= max);
  const atLeast = (v: number | null, min: number) => (v === null ? null : v >= min);
  const nonStream = added(latency.tokengate?.latency_ms.p99, latency.direct?.latency_ms.p99);
  const ttft = added(streaming.tokengate?.ttft_ms.p99, streaming.direct?.ttft_ms.p99);
  const e2e = added(streaming.tokengate?.e2e_ms.p99, streaming.direct?.e2e_ms.p99);
  const ratio =
    throughput.tokengate && throughput.nginx
      ? round(throughput.tokengate.rps / throughput.nginx.rps, 3)
      : null;
  const perCpu = relay.tokengate?.events_per_router_cpu_s ?? null;
  const pacedPerCpu = paced.tokengate?.events_per_router_cpu_s ?? null;
  const max = `≤ ${TARGETS.addedP99Ms} ms`;
  return [
    {
      name: "added p99, non-streaming, 1,000 req/s",
      target: max,
      measured: nonStream,
      unit: "ms",
      met: atMost(nonStream, TARGETS.addedP99Ms),
    },
    {
      name: "added p99 TTFT, streaming, 1,000 req/s",
      target: max,
      measured: ttft,
      unit: "ms",
      met: atMost(ttft, TARGETS.addedP99Ms),
    },
    {
      name: "added p99 end-to-end, streaming, 1,000 req/s",
      target: max,
      measured: e2e,
      unit: "ms",
      met: atMost(e2e, TARGETS.addedP99Ms),
    },
    {
      name: "max throughput, tokengate ÷ nginx",
      target: `≥ ${TARGETS.throughputVsNginx}`,
      measured: ratio,
      unit: "",
      met: atLeast(ratio, TARGETS.throughputVsNginx),
    },
    {
      name: "streaming relay, SSE events per gateway CPU-second",
      target: `≥ ${TARGETS.relayEventsPerCpuS}`,
      measured: perCpu,
      unit: "events",
      met: atLeast(perCpu, TARGETS.relayEventsPerCpuS),
    },
    {
      name: "the same with paced engines (one frame per read)",
      target: `≥ ${TARGETS.relayEventsPerCpuS}`,
      measured: pacedPerCpu,
      unit: "events",
      met: atLeast(pacedPerCpu, TARGETS.relayEventsPerCpuS),
    },
  ];
}
