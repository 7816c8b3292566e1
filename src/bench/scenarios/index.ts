// The scenarios `tokengate bench` ships, by name.

import { liveSurge } from "./live-surge.js";
import { mixedLengths } from "./mixed-lengths.js";
import { multiLora } from "./multi-lora.js";
import { multiTurn } from "./multi-turn.js";
import { noisyNeighbor } from "./noisy-neighbor.js";
import { sharedPrefix } from "./shared-prefix.js";
import type { ShippedScenario } from "./shipped.js";
import { supportIncident } from "./support-incident.js";

export type { ScenarioPhase, ShippedScenario } from "./shipped.js";

export const SCENARIOS: Readonly<Record<string, ShippedScenario>> = {
  [supportIncident.name]: supportIncident,
  [sharedPrefix.name]: sharedPrefix,
  [multiTurn.name]: multiTurn,
  [mixedLengths.name]: mixedLengths,
  [liveSurge.name]: liveSurge,
  [multiLora.name]: multiLora,
  [noisyNeighbor.name]: noisyNeighbor,
};

/** The named scenario; throws naming the known ones otherwise. */
export function getScenario(name: string): ShippedScenario {
  const s = SCENARIOS[name];
  if (!s) throw new Error(`unknown scenario "${name}"; known: ${Object.keys(SCENARIOS).join(", ")}`);
  return s;
}
