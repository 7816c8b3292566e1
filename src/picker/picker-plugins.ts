// The filters and scorers a pool's EndpointPicker config may name (a test may parse and build against
// registries of its own).

import { FILTERS } from "./filters/filters.js";
import type { PickerPlugins } from "./framework/plugin.js";
import { SCORERS } from "./scorers/scorers.js";

export const PICKER_PLUGINS: PickerPlugins = { filters: FILTERS, scorers: SCORERS };
