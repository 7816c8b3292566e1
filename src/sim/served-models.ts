// What a replica serves, as vLLM's OpenAIServingModels keeps it: the base model and its LoRA adapters,
// listed by GET /v1/models, and adapters registered or removed at run time through
// POST /v1/load_lora_adapter and /v1/unload_lora_adapter (vLLM with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True).
// Registering does not put an adapter on the simulated GPU: LoraSlots loads it when a request runs.

import { randomBytes } from "node:crypto";
import type { EngineConfig } from "./engine-config.js";
import { SimHttpError } from "./errors.js";
import type { LoraSlots } from "./lora-slots.js";

export interface LoraModule {
  name: string;
  /** What /v1/models reports as the adapter's `root` (vLLM: the path it was loaded from). */
  path: string;
}

/** `name` or `name=path`, the --lora-modules form; a bare name is its own path. Null if malformed. */
export function parseLoraModule(spec: string): LoraModule | null {
  const eq = spec.indexOf("=");
  const name = (eq < 0 ? spec : spec.slice(0, eq)).trim();
  const path = eq < 0 ? name : spec.slice(eq + 1).trim();
  return name && path ? { name, path } : null;
}

/** Why a --model-version value cannot be used, or null. The gateway reads it back as the last segment of `root`. */
export function modelVersionProblem(v: string): string | null {
  if (!v.trim()) return "expected a version, got an empty string";
  if (v.includes("/"))
    return `a version cannot contain "/" (it is the last path segment of root), got "${v}"`;
  return null;
}

/** The base model's `root`: the path vLLM loaded, `/models/<version>`, or the model name without a version. */
export function baseModelRoot(modelName: string, version: string | null): string {
  return version === null ? modelName : `/models/${version}`;
}

/** The adapters a replica serves, by name, in registration order. */
export class LoraAdapters {
  private readonly paths = new Map<string, string>();
  private readonly initial: LoraModule[];

  constructor(modules: readonly string[]) {
    this.initial = modules.map((spec) => {
      const m = parseLoraModule(spec);
      if (!m) throw new Error(`bad LoRA module "${spec}": expected name or name=path`);
      return m;
    });
    this.restore();
  }

  /** Back to the --lora-modules alone, as a restarted vLLM process has forgotten run-time loads. */
  restore(): void {
    this.paths.clear();
    for (const m of this.initial) this.paths.set(m.name, m.path);
  }

  has(name: string): boolean {
    return this.paths.has(name);
  }

  names(): string[] {
    return [...this.paths.keys()];
  }

  modules(): LoraModule[] {
    return [...this.paths].map(([name, path]) => ({ name, path }));
  }

  set(name: string, path: string): void {
    this.paths.set(name, path);
  }

  delete(name: string): boolean {
    return this.paths.delete(name);
  }
}

/** A ModelPermission as vLLM attaches one to every model card (a fresh id each time, as vLLM's default factory). */
function permission(created: number): Record<string, unknown> {
  return {
    id: `modelperm-${randomBytes(16).toString("hex")}`,
    object: "model_permission",
    created,
    allow_create_engine: false,
    allow_sampling: true,
    allow_logprobs: true,
    allow_search_indices: false,
    allow_view: true,
    allow_fine_tuning: false,
    organization: "*",
    group: null,
    is_blocking: false,
  };
}

/** GET /v1/models: the base model (with max_model_len), then each adapter (root = its path, parent = base). */
export function modelList(
  cfg: EngineConfig,
  adapters: LoraAdapters,
  baseRoot: string,
  created: number,
): { object: "list"; data: Record<string, unknown>[] } {
  const card = (id: string, root: string, parent: string | null, maxModelLen: number | null) => ({
    id,
    object: "model",
    created,
    owned_by: "vllm",
    root,
    parent,
    max_model_len: maxModelLen,
    permission: [permission(created)],
  });
  return {
    object: "list",
    data: [
      card(cfg.modelName, baseRoot, null, cfg.maxModelLen),
      ...adapters.modules().map((m) => card(m.name, m.path, cfg.modelName, null)),
    ],
  };
}

// vLLM's own wording and error types for the two LoRA routes (vllm/entrypoints/openai/models/serving.py).
const invalid = (message: string) => new SimHttpError(400, message, null, {}, "InvalidUserInput");

function field(body: unknown, key: string): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new SimHttpError(400, "request body must be a JSON object");
  return (body as Record<string, unknown>)[key];
}

/** POST /v1/load_lora_adapter: registers `lora_name` (or, with `load_inplace`, replaces its path). */
export function loadLoraAdapter(cfg: EngineConfig, adapters: LoraAdapters, body: unknown): string {
  const name = field(body, "lora_name");
  const path = field(body, "lora_path");
  const inplace = field(body, "load_inplace") === true;
  if (typeof name !== "string" || !name || typeof path !== "string" || !path) {
    throw invalid("Both 'lora_name' and 'lora_path' must be provided.");
  }
  // vLLM fails in the engine when LoRA is off; the simulator says which flag turns it on.
  if (!cfg.enableLora) {
    throw new SimHttpError(400, "LoRA is not enabled: start the replica with --enable-lora.");
  }
  if (!inplace && adapters.has(name)) {
    throw invalid(
      `The lora adapter '${name}' has already been loaded. If you want to load the adapter in place, set 'load_inplace' to True.`,
    );
  }
  adapters.set(name, path);
  return `Success: LoRA adapter '${name}' added successfully.`;
}

/**
 * POST /v1/unload_lora_adapter. vLLM removes an adapter even while requests use it; the simulator
 * refuses (400) while requests for it are running, so a test never sees a running request lose its
 * adapter. Requests still waiting keep their adapter name and load it when they run, as in vLLM
 * (their LoRARequest carries the path).
 */
export function unloadLoraAdapter(adapters: LoraAdapters, slots: LoraSlots, body: unknown): string {
  const name = field(body, "lora_name");
  if (typeof name !== "string" || !name) {
    throw invalid("'lora_name' needs to be provided to unload a LoRA adapter.");
  }
  if (!adapters.has(name)) {
    throw new SimHttpError(404, `The lora adapter '${name}' cannot be found.`, null, {}, "NotFoundError");
  }
  if (slots.isRunning(name)) {
    throw invalid(`The lora adapter '${name}' has running requests; the simulator unloads it once they end.`);
  }
  adapters.delete(name);
  slots.evict(name);
  return `Success: LoRA adapter '${name}' removed successfully.`;
}

/**
 * SGLang's `POST /load_lora_adapter` and `/unload_lora_adapter`: the same registration, answered as
 * SGLang answers — `{success, error_message, loaded_adapters}` (name → path), 400 when refused.
 */
export function sglangLoraUpdate(
  adapters: LoraAdapters,
  update: () => unknown,
): {
  status: number;
  body: { success: boolean; error_message: string; loaded_adapters: Record<string, string> };
} {
  let error: string | null = null;
  try {
    update();
  } catch (err) {
    if (!(err instanceof SimHttpError)) throw err;
    error = err.message;
  }
  const loaded = Object.fromEntries(adapters.modules().map((m) => [m.name, m.path]));
  return {
    status: error === null ? 200 : 400,
    body: { success: error === null, error_message: error ?? "", loaded_adapters: loaded },
  };
}
