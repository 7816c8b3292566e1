// Reads YAML config files (one file, or every *.yaml/*.yml in a folder) into documents that remember where
// each node came from, so a validation path like spec.rules[0].routeTo can be reported as file:line:col.
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseAllDocuments,
} from "yaml";
import type { ConfigError, PathSegment } from "./errors.js";
import { formatPath } from "./errors.js";

/** One parsed YAML document with a way back to its source positions. */
export interface SourceDocument {
  readonly file: string;
  /** 0-based position of the document in its file (documents are separated by `---`). */
  readonly index: number;
  /** The document as plain data (anchors resolved). */
  readonly value: unknown;
  /** 1-based line and column of the node at `path` (or of its nearest existing parent). */
  locate(path: readonly PathSegment[], at?: "key" | "value"): { line: number; column: number };
}

export interface SourceSet {
  /** The files read, in load order. */
  readonly files: readonly string[];
  readonly documents: readonly SourceDocument[];
  /** YAML syntax errors and unreadable files; documents with syntax errors are left out of `documents`. */
  readonly errors: readonly ConfigError[];
}

const YAML_FILE = /\.ya?ml$/i;

/** A config's files as read from disk: path → text; unreadable ones as errors. */
export interface ConfigTexts {
  readonly files: Readonly<Record<string, string>>;
  readonly errors: readonly ConfigError[];
}

/**
 * Reads the texts of a file, or of the *.yaml / *.yml files of a folder (not its subfolders) in name
 * order, keyed by their paths (`<folder>/<name>`), as a reload and `config apply` send them.
 */
export async function readConfigTexts(path: string): Promise<ConfigTexts> {
  let names: string[];
  try {
    const st = await stat(path);
    if (st.isDirectory()) {
      names = (await readdir(path))
        .filter((n) => YAML_FILE.test(n))
        .sort()
        .map((n) => join(path, n));
      if (names.length === 0)
        return { files: {}, errors: [at(path, 0, 0, "folder has no *.yaml or *.yml files")] };
    } else {
      names = [path];
    }
  } catch (err) {
    return { files: {}, errors: [at(path, 0, 0, `cannot read: ${reason(err)}`)] };
  }
  const files: Record<string, string> = {};
  const errors: ConfigError[] = [];
  for (const file of names) {
    try {
      files[file] = await readFile(file, "utf8");
    } catch (err) {
      errors.push(at(file, 0, 0, `cannot read: ${reason(err)}`));
    }
  }
  return { files, errors };
}

/** Reads a file, or the *.yaml / *.yml files of a folder (not its subfolders) in name order. */
export async function readYamlSources(path: string): Promise<SourceSet> {
  const read = await readConfigTexts(path);
  const documents: SourceDocument[] = [];
  const errors: ConfigError[] = [...read.errors];
  for (const [file, text] of Object.entries(read.files)) {
    const parsed = parseYamlText(file, text);
    documents.push(...parsed.documents);
    errors.push(...parsed.errors);
  }
  return { files: Object.keys(read.files), documents, errors };
}

/** Parses one file's text into its non-empty documents. */
export function parseYamlText(file: string, text: string): Omit<SourceSet, "files"> {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const errors: ConfigError[] = [];
  const documents: SourceDocument[] = [];
  const pos = (offset: number) => {
    const p = lineCounter.linePos(offset);
    return { line: p.line, column: p.col };
  };
  if (!Array.isArray(docs)) return { documents, errors };
  docs.forEach((doc, index) => {
    if (doc.errors.length > 0) {
      for (const e of doc.errors) {
        const p = pos(e.pos[0]);
        errors.push(at(file, p.line, p.column, `YAML syntax: ${e.message.split("\n")[0]}`));
      }
      return;
    }
    if (doc.contents === null) return;
    let value: unknown;
    try {
      // The alias cap stops "billion laughs" documents from expanding without bound.
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      const p = pos(doc.range?.[0] ?? 0);
      errors.push(at(file, p.line, p.column, `YAML: ${reason(err)}`));
      return;
    }
    documents.push({
      file,
      index,
      value,
      locate: (path, mode = "value") => pos(nodeOffset(doc, path, mode)),
    });
  });
  return { documents, errors };
}

/** Source offset of the node at `path`; for a missing node, the key of its deepest existing parent. */
function nodeOffset(doc: Document, path: readonly PathSegment[], mode: "key" | "value"): number {
  let node: unknown = doc.contents;
  let anchor: Node | null = null;
  let matched = 0;
  for (const seg of path) {
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && keyText(p.key) === String(seg));
      if (!pair) break;
      matched++;
      const key = pair.key as Node;
      if (matched === path.length && mode === "key") return start(key, doc);
      anchor = key;
      node = pair.value;
      if (node === null || node === undefined) return start(key, doc);
    } else if (isSeq(node) && typeof seg === "number") {
      const item = node.items[seg];
      if (item === undefined) break;
      matched++;
      anchor = item as Node;
      node = item;
    } else {
      break;
    }
  }
  const complete = matched === path.length;
  // A whole map or list reads best pointed at by its key; a scalar by its value.
  if (complete && (isScalar(node) || anchor === null)) return start(node as Node, doc);
  return start(anchor ?? (node as Node), doc);
}

function keyText(key: unknown): string | null {
  if (isScalar(key)) return String(key.value);
  return null;
}

function start(node: Node | null | undefined, doc: Document): number {
  return node?.range?.[0] ?? doc.range?.[0] ?? 0;
}

function at(file: string, line: number, column: number, message: string): ConfigError {
  return { file, line, column, path: formatPath([]), message };
}

function reason(err: unknown): string {
  if (err && typeof err === "object" && "code" in err && err.code === "ENOENT")
    return "no such file or directory";
  return err instanceof Error ? err.message : String(err);
}
