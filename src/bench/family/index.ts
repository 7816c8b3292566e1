// The generated workload family's public surface: generateFamily() and writeFamily(), with the types a
// runner or a report needs.

export {
  enginePrefillTokensPerS,
  fleetContextWindow,
  fleetPrefillTokensPerS,
  usableContext,
} from "./capacity.js";
export {
  FAMILY_INDEX_FILE,
  type FamilyFiles,
  type FamilyIndex,
  type FamilyIndexEntry,
  fleetYaml,
  writeFamily,
} from "./files.js";
export { FAMILY_MODEL, familyFleet } from "./fleet.js";
export {
  type BurstParams,
  type FamilyOptions,
  type FamilyWorkload,
  generateFamily,
  generateWorkload,
  type OfferedLoad,
  type WorkloadOptions,
  type WorkloadParams,
} from "./generate.js";
export type { PromptKind, PromptMix, Triangular } from "./lengths.js";
export {
  type BurstShape,
  drawShape,
  type OutputSpec,
  type PrefixGroup,
  type PrefixSharing,
  RANGES,
  type TenantShare,
  type WorkloadShape,
} from "./params.js";
