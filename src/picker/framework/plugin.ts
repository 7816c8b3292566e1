// The picker's plugins as the EndpointPicker config names them: a filter or scorer is its `type`, a
// function that reads its own parameters from its config entry (typed by the plugin, problems reported
// with their YAML path), and a factory from those parameters. Each kind has one registry
// (filters/filters.ts, scorers/scorers.ts): adding a plugin is its folder and one line there.

import type { FieldReader } from "../../config/fields.js";
import type { Filter, Scorer } from "./types.js";

export type ParamValue = number | string | boolean;
export type PluginParams = Readonly<Record<string, ParamValue>>;

export interface ScorerPlugin<P extends PluginParams = PluginParams> {
  readonly type: string;
  /**
   * Its parameters, read from its entry in `scorers` (the keys beside `type` and `weight`), defaults for
   * what is absent; `entry` null: all defaults. A bad value is an error on the entry's reader.
   */
  params(entry: FieldReader | null): P;
  create(params: P): Scorer;
}

export interface FilterPlugin<P extends PluginParams = PluginParams> {
  readonly type: string;
  /** As a scorer's, from its entry in `filters` (the keys beside `type` and `failOpen`). */
  params(entry: FieldReader | null): P;
  /** `failOpen` undefined: the profile's. */
  create(params: P, failOpen: boolean | undefined): Filter;
}

/** The plugins of one kind, by type: the one list of what a config may name. */
export class PluginRegistry<T extends { readonly type: string }> {
  private readonly byType = new Map<string, T>();

  constructor(
    readonly kind: string,
    plugins: readonly T[],
  ) {
    for (const p of plugins) {
      if (this.byType.has(p.type)) throw new Error(`${kind} type ${p.type} is registered twice`);
      this.byType.set(p.type, p);
    }
  }

  get types(): string[] {
    return [...this.byType.keys()];
  }

  /** The plugin of `type`; the config parser admits only registered types, so a miss is a bug. */
  get(type: string): T {
    const p = this.byType.get(type);
    if (p === undefined)
      throw new Error(
        `unknown ${this.kind} type ${JSON.stringify(type)} (the config parser admits only known types)`,
      );
    return p;
  }
}

/** The registries a config is parsed against and a profile built from. */
export interface PickerPlugins {
  readonly filters: PluginRegistry<FilterPlugin>;
  readonly scorers: PluginRegistry<ScorerPlugin>;
}
