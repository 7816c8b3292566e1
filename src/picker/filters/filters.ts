// Every filter the EndpointPicker config may name, with how it reads its parameters: one entry each (a
// new filter is its predicate in endpoint-filters.ts, or its own file, and its entry here).

import { type FilterPlugin, PluginRegistry } from "../framework/plugin.js";
import {
  concurrencyCapFilter,
  DEFAULT_STALE_GRACE_MS,
  kvWatermarkFilter,
  loraAvailableFilter,
  metricsFreshFilter,
  notDrainingFilter,
  readyFilter,
  servesModelFilter,
} from "./endpoint-filters.js";

type NoParams = Record<string, never>;
const none = (): NoParams => ({});

const ready: FilterPlugin<NoParams> = { type: "ready", params: none, create: (_, fo) => readyFilter(fo) };
const notDraining: FilterPlugin<NoParams> = {
  type: "not-draining",
  params: none,
  create: (_, fo) => notDrainingFilter(fo),
};
const servesModel: FilterPlugin<NoParams> = {
  type: "serves-model",
  params: none,
  create: (_, fo) => servesModelFilter(fo),
};
const loraAvailable: FilterPlugin<NoParams> = {
  type: "lora-available",
  params: none,
  create: (_, fo) => loraAvailableFilter(fo),
};
const kvWatermark: FilterPlugin<{ threshold: number }> = {
  type: "kv-watermark",
  params: (entry) => ({ threshold: entry?.number("threshold", { min: 0, max: 1 }) ?? 0.9 }),
  create: (p, fo) => kvWatermarkFilter(p.threshold, fo),
};
const concurrencyCap: FilterPlugin<{ maxInflight: number }> = {
  type: "concurrency-cap",
  params: (entry) => ({ maxInflight: entry?.int("maxInflight", { min: 1 }) ?? 256 }),
  create: (p, fo) => concurrencyCapFilter(p.maxInflight, fo),
};
const metricsFresh: FilterPlugin<{ mode: "prefer" | "require"; graceMs: number }> = {
  type: "metrics-fresh",
  params: (entry) => ({
    mode: (entry?.string("mode", { oneOf: ["prefer", "require"] }) ?? "prefer") as "prefer" | "require",
    graceMs: entry?.int("graceMs", { min: 0 }) ?? DEFAULT_STALE_GRACE_MS,
  }),
  create: (p, fo) => metricsFreshFilter(p.mode, fo, p.graceMs),
};

export const FILTERS = new PluginRegistry<FilterPlugin>("filter", [
  ready,
  notDraining,
  servesModel,
  loraAvailable,
  kvWatermark,
  concurrencyCap,
  metricsFresh,
]);
