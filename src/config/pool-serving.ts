// What an InferencePool's engines serve beyond their base model, and how the gateway speaks to them:
// `loraAdapters` (served under their own names, as vLLM's --lora-modules), `upstreamAuth` (the key of an
// engine started with --api-key) and `models` (how often the engines' /v1/models is read).

import { readFileSync } from "node:fs";
import type { IssueList, PathSegment } from "./errors.js";
import { ENV_NAME, FieldReader } from "./fields.js";
import type { EnvOptions } from "./gateway-settings.js";
import { Secret } from "./secret.js";

/** Adapter names are upstream model ids (`support-tone-v2`, `org/adapter`). */
export const ADAPTER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

/**
 * One entry of `spec.loraAdapters`.
 * @example
 * ```yaml
 * loraAdapters:
 *   - support-tone-v1                                          # the engines were started with it
 *   - { name: support-tone-v2, path: /adapters/support-tone-v2 }   # the gateway registers it where missing
 * ```
 */
export interface LoraAdapterConfig {
  readonly name: string;
  /**
   * Where an engine loads it from: the gateway registers the adapter (`POST /v1/load_lora_adapter`,
   * vLLM with VLLM_ALLOW_RUNTIME_LORA_UPDATING) on an engine whose /v1/models does not list it, before
   * the first request for it there. null: only engines that list it are sent its requests.
   */
  readonly path: string | null;
}

/** `spec.upstreamAuth`: the bearer key the engines require; never logged, never the caller's. */
export interface UpstreamAuth {
  /** Where it came from, for messages: `env ENGINE_KEY` or `file /run/secrets/key`. */
  readonly source: string;
  readonly key: Secret;
}

/** `spec.models`: how often the engines' /v1/models is read, and whether it names their version. */
export interface ModelsPoll {
  readonly path: string;
  readonly intervalMs: number;
  /**
   * `config` (default): the version is the pool's (or the endpoint's) `modelVersion`. `root`: the last
   * path segment of the base model's `root`, for engines loaded from versioned paths
   * (`vllm serve /models/summary-7b-2026-06-15 --served-model-name summary-7b`).
   */
  readonly versionFrom: "config" | "root";
}

export const DEFAULT_MODELS_POLL: ModelsPoll = {
  path: "/v1/models",
  intervalMs: 30_000,
  versionFrom: "config",
};

export function parseLoraAdapters(spec: FieldReader, issues: IssueList): LoraAdapterConfig[] {
  const items = spec.list("loraAdapters") ?? [];
  const out: LoraAdapterConfig[] = [];
  items.forEach((item, i) => {
    const path = spec.at("loraAdapters", i);
    let name: string | undefined;
    let from: string | null = null;
    if (typeof item === "string") {
      name = checkName(item, path, issues);
    } else {
      const f = FieldReader.of(item, path, issues);
      name = f?.string("name", {
        required: true,
        pattern: ADAPTER_PATTERN,
        patternHint: "letters, digits, '.', '_', ':', '/' and '-'",
      });
      from = f?.string("path") ?? null;
      f?.done();
    }
    if (name === undefined) return;
    if (out.some((a) => a.name === name)) {
      issues.error(path, `adapter ${JSON.stringify(name)} is listed twice`);
      return;
    }
    out.push({ name, path: from });
  });
  return out;
}

function checkName(text: string, path: PathSegment[], issues: IssueList): string | undefined {
  if (ADAPTER_PATTERN.test(text)) return text;
  issues.error(path, `adapter name ${JSON.stringify(text)}: use letters, digits, '.', '_', ':', '/' and '-'`);
  return undefined;
}

/** Reads the key now, so a missing variable or file fails the load rather than every request. */
export function parseUpstreamAuth(
  spec: FieldReader,
  issues: IssueList,
  options: EnvOptions,
): UpstreamAuth | null {
  const f = spec.map("upstreamAuth");
  if (!f) return null;
  const envName = f.string("apiKeyEnv", { pattern: ENV_NAME, patternHint: "an environment variable name" });
  const file = f.string("apiKeyFile");
  f.done();
  if ((envName === undefined) === (file === undefined)) {
    issues.error(f.path, 'set exactly one of "apiKeyEnv" and "apiKeyFile"');
    return null;
  }
  const missing = (at: PathSegment[], message: string) => {
    if (options.missingEnv === "warning") issues.warn(at, message);
    else issues.error(at, message);
  };
  if (envName !== undefined) {
    const value = (options.env ?? process.env)[envName]?.trim();
    if (!value) {
      missing(
        f.at("apiKeyEnv"),
        `environment variable ${envName} is not set (the gateway will not start without it)`,
      );
      return null;
    }
    return { source: `env ${envName}`, key: new Secret(value) };
  }
  let value: string;
  try {
    value = readFileSync(file!, "utf8").trim();
  } catch (err) {
    missing(f.at("apiKeyFile"), `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    return null;
  }
  if (value === "") {
    issues.error(f.at("apiKeyFile"), `${file} is empty`);
    return null;
  }
  return { source: `file ${file}`, key: new Secret(value) };
}
