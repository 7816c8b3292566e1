// Renders the kustomize overlays of deploy/ with `kubectl kustomize` into their objects, so the deploy
// files can be checked by what Kubernetes would receive rather than by what the YAML files say.

import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

/** One rendered Kubernetes object: the envelope is checked, the rest is the manifest as written. */
export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
  };
  readonly [field: string]: unknown;
}

/** deploy/ at the repository root, resolved from this module (src/deploy or dist/deploy alike). */
export const DEPLOY_ROOT = fileURLToPath(new URL("../../deploy/", import.meta.url));

/** The overlays under deploy/overlays/, by name, each a folder with a kustomization.yaml. */
export function overlayDirs(root: string = DEPLOY_ROOT): Map<string, string> {
  const overlays = join(root, "overlays");
  const found = new Map<string, string>();
  for (const name of readdirSync(overlays).sort()) {
    const dir = join(overlays, name);
    if (existsSync(join(dir, "kustomization.yaml"))) found.set(name, dir);
  }
  return found;
}

/** Why `kubectl` cannot render here (not on PATH, not runnable), or null when it can. */
export function kubectlProblem(kubectl = "kubectl"): string | null {
  try {
    execFileSync(kubectl, ["version", "--client"], { stdio: ["ignore", "pipe", "pipe"], timeout: 30_000 });
    return null;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === "ENOENT") return `${kubectl} is not on PATH`;
    return `${kubectl} version --client failed: ${e.message.split("\n", 1)[0]}`;
  }
}

/**
 * `kubectl kustomize <dir>`, parsed into its objects. Throws with kubectl's stderr when the
 * kustomization does not build. kubectl's deprecation warnings (bases, commonLabels) are ignored.
 * @example
 * const objects = renderOverlay(overlayDirs().get("vllm")!);
 */
export function renderOverlay(dir: string, kubectl = "kubectl"): KubeObject[] {
  let text: string;
  try {
    text = execFileSync(kubectl, ["kustomize", dir], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 16 * 1024 * 1024,
      timeout: 60_000,
    });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer | string }).stderr?.toString().trim();
    throw new Error(`${kubectl} kustomize ${dir} failed: ${stderr || (err as Error).message}`);
  }
  return parseManifests(text, `${kubectl} kustomize ${dir}`);
}

/** A multi-document YAML stream into its objects; empty documents are skipped, malformed ones throw. */
export function parseManifests(text: string, source = "manifests"): KubeObject[] {
  const objects: KubeObject[] = [];
  parseAllDocuments(text).forEach((doc, i) => {
    if (doc.errors.length > 0) throw new Error(`${source}: document ${i + 1}: ${doc.errors[0]!.message}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    const obj = value as Partial<KubeObject>;
    if (typeof obj.apiVersion !== "string" || typeof obj.kind !== "string") {
      throw new Error(`${source}: document ${i + 1} has no apiVersion or kind`);
    }
    if (typeof obj.metadata?.name !== "string") {
      throw new Error(`${source}: document ${i + 1} (${obj.kind}) has no metadata.name`);
    }
    objects.push(obj as KubeObject);
  });
  return objects;
}

/** The objects of one kind (and of one apiVersion, when given). */
export function objectsOf(objects: readonly KubeObject[], kind: string, apiVersion?: string): KubeObject[] {
  return objects.filter((o) => o.kind === kind && (apiVersion === undefined || o.apiVersion === apiVersion));
}
