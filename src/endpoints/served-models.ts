// What an engine says it serves, from its OpenAI `GET /v1/models`: vLLM lists the base model (its `root`
// is the path or repository it loaded, `parent` null) and every registered LoRA adapter (`parent` = the
// base model's id). The base model's version is the last path segment of its `root`, so an engine started
// from `/models/summary-7b-2026-06-15` runs version `summary-7b-2026-06-15`.

export interface ServedModels {
  /** The base model's id (`--served-model-name`); null when the list names none. */
  readonly base: string | null;
  /** The version its `root` names; null when there is no root. */
  readonly version: string | null;
  /** Adapter ids, registered at start (`--lora-modules`) or at run time. */
  readonly adapters: ReadonlySet<string>;
}

/** Parses a /v1/models body; throws with a short reason when it is not the OpenAI list shape. */
export function readServedModels(text: string): ServedModels {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error("/v1/models: not JSON");
  }
  const data = (doc as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new Error("/v1/models: no data list");
  let base: string | null = null;
  let version: string | null = null;
  const adapters = new Set<string>();
  for (const m of data as { id?: unknown; root?: unknown; parent?: unknown }[]) {
    if (typeof m?.id !== "string" || m.id === "") continue;
    if (typeof m.parent === "string" && m.parent !== "") {
      adapters.add(m.id);
    } else if (base === null) {
      base = m.id;
      version = typeof m.root === "string" && m.root !== "" ? lastSegment(m.root) : null;
    }
  }
  return { base, version, adapters };
}

function lastSegment(root: string): string {
  const parts = root.split("/").filter((p) => p !== "");
  return parts.at(-1) ?? root;
}
