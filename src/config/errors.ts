// Config errors: a problem found in one YAML document, located by file:line:col and the YAML path inside it.
// Validators record issues by path; the loader resolves each path to a source position.

/** One step of a YAML path: a map key or a sequence index. */
export type PathSegment = string | number;

/** A validation problem before it is located in a file (validators produce these). */
export interface ConfigIssue {
  readonly severity: "error" | "warning";
  /** Path inside the document, e.g. ["spec", "rules", 0, "routeTo"]. */
  readonly path: readonly PathSegment[];
  readonly message: string;
  /** Point at the key rather than its value (unknown fields, duplicate names). */
  readonly at?: "key" | "value";
}

/**
 * A located problem, as printed by `tokengate config validate` and kept by a failed reload.
 * `line`/`column` are 1-based; 0 means the problem has no single place (e.g. "no InferenceRoute").
 */
export interface ConfigError {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** YAML path inside the document, e.g. `spec.modelAliases.summary-default.pools[1].maxInputTokens`. */
  readonly path: string;
  readonly message: string;
}

const PLAIN_KEY = /^[A-Za-z0-9_-]+$/;

/** Renders a path as `spec.modelAliases.summary-default.pools[1]`; odd keys are bracketed and quoted. */
export function formatPath(path: readonly PathSegment[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (PLAIN_KEY.test(seg)) out += out === "" ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** `examples/x/route.yaml:23:11 spec.rules[0].routeTo: pool "x" is not declared` */
export function formatConfigError(e: ConfigError): string {
  const where = e.line > 0 ? `${e.file}:${e.line}:${e.column}` : e.file;
  return e.path === "" ? `${where}: ${e.message}` : `${where} ${e.path}: ${e.message}`;
}

/** Collects issues so validation reports every problem instead of stopping at the first. */
export class IssueList {
  readonly items: ConfigIssue[] = [];

  error(path: readonly PathSegment[], message: string, at?: "key" | "value"): void {
    this.items.push({ severity: "error", path: [...path], message, ...(at ? { at } : {}) });
  }

  warn(path: readonly PathSegment[], message: string, at?: "key" | "value"): void {
    this.items.push({ severity: "warning", path: [...path], message, ...(at ? { at } : {}) });
  }

  get errorCount(): number {
    return this.items.filter((i) => i.severity === "error").length;
  }
}

/** ` (did you mean "x"?)` when a candidate is a plausible typo of `input`, else "". */
export function didYouMean(input: string, candidates: Iterable<string>): string {
  const best = closest(input, candidates);
  return best === null ? "" : ` (did you mean ${JSON.stringify(best)}?)`;
}

function closest(input: string, candidates: Iterable<string>): string | null {
  let best: string | null = null;
  let bestDist = Number.POSITIVE_INFINITY;
  const lower = input.toLowerCase();
  for (const c of candidates) {
    const d = c.toLowerCase() === lower ? 0 : editDistance(lower, c.toLowerCase());
    if (d < bestDist) {
      bestDist = d;
      best = c;
    }
  }
  // A third of the length keeps short names from "suggesting" unrelated words.
  const limit = Math.max(1, Math.min(3, Math.floor(input.length / 3)));
  return best !== null && bestDist <= limit ? best : null;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
    }
    prev = cur;
  }
  return prev[b.length]!;
}
