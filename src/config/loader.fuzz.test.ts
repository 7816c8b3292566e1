// Fuzzes the config loader with fast-check: random YAML texts (fragments of YAML syntax — anchors, tags,
// directives, flow collections, merge keys, tabs — strung together), and mutations of the valid example
// config (examples/support-summary): fields dropped, values of the wrong type, huge numbers, random and
// prototype keys, lines duplicated (duplicate keys), deleted, cut or shuffled. loadConfigTexts never
// throws; it either loads, or lists errors each located by file, line, column and path.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, it } from "node:test";
import fc from "fast-check";
import { parseAllDocuments, stringify } from "yaml";
import { anyJson, PROTO_KEYS } from "../testing/request-arbitraries.js";
import type { ConfigError } from "./errors.js";
import { loadConfigTexts } from "./loader.js";

// Tests run from dist/config/; the examples are read from the repository.
const EXAMPLE = new URL("../../examples/support-summary/", import.meta.url);
const FILES: Record<string, string> = Object.fromEntries(
  readdirSync(EXAMPLE)
    .filter((n) => n.endsWith(".yaml"))
    .sort()
    .map((n) => [n, readFileSync(new URL(n, EXAMPLE), "utf8")]),
);
/** The example's documents as data, per file. */
const DOCS: unknown[][] = Object.values(FILES).map((t) =>
  parseAllDocuments(t).map((d) => d.toJS() as unknown),
);
const OPTIONS = { env: { TOKENGATE_UPSTREAM_SECRET: "fuzz-secret-0123456789" } };

/** Runs the loader and checks the shape of what it says; fails on a throw. */
function checkLoad(files: Record<string, string>): void {
  let res: ReturnType<typeof loadConfigTexts>;
  try {
    res = loadConfigTexts(files, OPTIONS);
  } catch (err) {
    assert.fail(`loadConfigTexts threw: ${(err as Error).stack}`);
  }
  const names = Object.keys(files);
  const root = names.join(",");
  const lineCounts = new Map(names.map((n) => [n, files[n]!.split(/\r\n|\r|\n/).length]));
  const located = (e: ConfigError, what: string) => {
    const where = `${what} ${JSON.stringify(e)}`;
    assert.ok(e.file === root || names.includes(e.file), `file; ${where}`);
    assert.ok(Number.isInteger(e.line) && e.line >= 0, `line; ${where}`);
    assert.ok(Number.isInteger(e.column) && e.column >= 0, `column; ${where}`);
    if (e.line === 0) assert.equal(e.column, 0, `no column without a line; ${where}`);
    else {
      const lines = lineCounts.get(e.file) ?? 0;
      assert.ok(e.line <= lines, `line within the file's ${lines}; ${where}`);
      assert.ok(e.column >= 1, `1-based column; ${where}`);
    }
    assert.equal(typeof e.path, "string", `path; ${where}`);
    assert.ok(typeof e.message === "string" && e.message.length > 0, `message; ${where}`);
  };
  if (res.ok) {
    assert.ok(res.config.route && res.config.pools.size > 0, "a loaded config has a route and pools");
  } else {
    assert.ok(res.errors.length > 0, "a failed load says why");
    for (const e of res.errors) located(e, "error");
  }
  for (const w of res.warnings) located(w, "warning");
}

/** Pieces of YAML syntax, valid and not, strung into lines. */
const FRAGMENTS = [
  "---",
  "...",
  "%YAML 1.1",
  "%YAML 1.2",
  "%TAG ! tag:example.com,2000:",
  "apiVersion: ai.example.com/v1alpha1",
  "apiVersion: tokengate.dev/v1alpha1",
  "kind: InferenceRoute",
  "kind: InferencePool",
  "kind: GatewayConfig",
  "kind: EndpointPicker",
  "kind: SimFleet",
  "metadata: { name: x }",
  "metadata:",
  "  name: summary-online",
  "spec:",
  "  modelAliases:",
  "    a: { defaultPool: p, pools: [{ name: p, maxInputTokens: 10 }] }",
  "  engine: vllm",
  "  endpoints: [http://127.0.0.1:1]",
  "  model: m",
  "  rules:",
  "    - name: r",
  "      when: { taskIn: [a] }",
  "      routeTo: p",
  "  maxInputTokens: 1e400",
  "  maxInputTokens: .inf",
  "  maxInputTokens: -.inf",
  "  maxInputTokens: .nan",
  "  maxInputTokens: 0x7fffffffffffffff",
  "  maxInputTokens: 123456789012345678901234567890",
  "  priority: !!str 10",
  "  priority: !!float 1",
  "  data: !!binary aGVsbG8=",
  "  when: 2001-12-14t21:59:43.10-05:00",
  "  x: !!set { a, b }",
  "  x: !!omap [ a: 1 ]",
  "  x: !custom tag",
  "  x: !<tag:yaml.org,2002:int> 3",
  "a: &anchor { b: 1 }",
  "c: *anchor",
  "d: *missing",
  "<<: *anchor",
  "<<: [*anchor, *anchor]",
  "? [complex, key]",
  ": value",
  "? { a: 1 }",
  "__proto__: { polluted: true }",
  "constructor: { prototype: { x: 1 } }",
  "key: value",
  "key: other",
  "- item",
  "  - nested",
  "[unclosed",
  "{ a: 1",
  "}",
  "'unterminated",
  '"esc \\x41 \\u263A \\q"',
  "\tkey: tab-indented",
  "|",
  "  block scalar",
  ">-",
  "#comment",
  "",
  "   ",
  "\uFEFFkey: bom",
  "\u0000",
  "é: ü",
  "🎉: 🎉",
];

const randomYaml = fc
  .array(
    fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom(...FRAGMENTS) },
      { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
      {
        weight: 1,
        arbitrary: fc.tuple(fc.nat(6), fc.constantFrom(...FRAGMENTS)).map(([n, f]) => " ".repeat(n) + f),
      },
    ),
    { maxLength: 25 },
  )
  .map((lines) => lines.join("\n"));

/** Values YAML can write that a field does not expect. */
const WRONG = fc.oneof(
  { weight: 3, arbitrary: anyJson },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(
      1e308,
      -1,
      0,
      0.5,
      2 ** 53 + 2,
      Number.POSITIVE_INFINITY,
      Number.NaN,
      "8192",
      "",
      "summary-online",
      true,
      [],
      {},
      [1, 2],
      { name: "x" },
      "x".repeat(300),
    ),
  },
);

type Mutation =
  | { op: "set" | "add"; file: number; walk: number[]; key: string; value: unknown }
  | { op: "drop"; file: number; walk: number[] };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    op: fc.constantFrom("set" as const, "add" as const),
    file: fc.nat(),
    walk: fc.array(fc.nat(), { maxLength: 6 }),
    key: fc.oneof(fc.constantFrom(...PROTO_KEYS, "<<", "name", "spec", "pools"), fc.string({ maxLength: 8 })),
    value: WRONG,
  }),
  fc.record({ op: fc.constant("drop" as const), file: fc.nat(), walk: fc.array(fc.nat(), { maxLength: 6 }) }),
);

/** Applies mutations to the example's documents (as data) and writes the files touched back as YAML. */
function mutateData(mutations: Mutation[]): Record<string, string> {
  const names = Object.keys(FILES);
  const docs = structuredClone(DOCS);
  const touched = new Set<number>();
  for (const m of mutations) {
    touched.add(m.file % docs.length);
    const fileDocs = docs[m.file % docs.length]!;
    const [first, ...rest] = m.walk;
    const top = fileDocs[(first ?? 0) % fileDocs.length];
    // Walk into the document: each number picks a key or an index; stop at a leaf.
    let parent: any = null;
    let key: string | number | null = null;
    let node: any = top;
    for (const step of rest) {
      if (node === null || typeof node !== "object") break;
      const keys: (string | number)[] = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
      if (keys.length === 0) break;
      parent = node;
      key = keys[step % keys.length]!;
      node = node[key];
    }
    if (m.op === "drop") {
      if (parent === null) continue;
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key as string];
    } else if (m.op === "set") {
      if (parent === null) continue;
      parent[key as string | number] = m.value;
    } else if (node !== null && typeof node === "object" && !Array.isArray(node)) {
      Object.defineProperty(node, m.key, {
        value: m.value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return Object.fromEntries(
    names.map((n, i) => [
      n,
      touched.has(i)
        ? docs[i]!.map((d) => stringify(d, { aliasDuplicateObjects: false })).join("---\n")
        : FILES[n]!,
    ]),
  );
}

/**
 * Values YAML reads without a syntax error that a field does not expect: aliases (one containing
 * itself, one to nowhere), tags, non-finite and hex numbers, empty and nested collections.
 */
const VALUES = [
  "&loop [*loop]",
  "&self { a: *self }",
  "*nowhere",
  "!!set { a, b }",
  "!!binary aGk=",
  "!!str 5",
  "!!int 1_000",
  "!custom x",
  "!!map [a]",
  ".nan",
  "-.inf",
  "1e400",
  "0x10",
  "0o17",
  "2001-12-14",
  "~",
  "''",
  "{}",
  "[]",
  "[a, [b, [c]]]",
  "🎉",
];

type LineEdit = { file: number; line: number; how: "dup" | "drop" | "cut" | "swap" | "insert"; text: string };

const lineEdit: fc.Arbitrary<LineEdit> = fc.record({
  file: fc.nat(),
  line: fc.nat(),
  how: fc.constantFrom("dup" as const, "drop" as const, "cut" as const, "swap" as const, "insert" as const),
  text: fc.constantFrom(...FRAGMENTS),
});

/** A key with its value on the same line (a key opening a block keeps it: the document stays YAML). */
const KEY_LINE = /^\s*(- )?[^\s#:'"][^:#]*:(?=\s+[^\s#])/;

/**
 * Edits the example's text: each key's value replaced by one of VALUES now and then (`picks`, one per
 * line: below VALUES.length picks a value, above leaves the line), then whole lines edited —
 * duplicated (duplicate keys), dropped, cut short, swapped, or a fragment of YAML inserted.
 */
function mutateText(picks: number[], edits: LineEdit[]): Record<string, string> {
  const names = Object.keys(FILES);
  let n = 0;
  const lines = names.map((name) =>
    FILES[name]!.split("\n").map((l) => {
      const pick = picks[n++ % picks.length]!;
      const key = pick < VALUES.length ? l.match(KEY_LINE) : null;
      return key ? `${key[0]} ${VALUES[pick]}` : l;
    }),
  );
  for (const e of edits) {
    const ls = lines[e.file % lines.length]!;
    const i = e.line % ls.length;
    if (e.how === "dup") ls.splice(i, 0, ls[i]!);
    else if (e.how === "drop") ls.splice(i, 1);
    else if (e.how === "cut") ls[i] = ls[i]!.slice(0, e.line % (ls[i]!.length + 1));
    else if (e.how === "swap") [ls[i], ls[(i + 1) % ls.length]] = [ls[(i + 1) % ls.length]!, ls[i]!];
    else ls.splice(i, 0, (ls[i]!.match(/^\s*/)?.[0] ?? "") + e.text);
  }
  return Object.fromEntries(names.map((name, i) => [name, lines[i]!.join("\n")]));
}

const RUNS = { seed: 0x12f0222, includeErrorInReport: true };

describe("config loader, fuzzed", () => {
  it("loads the example unchanged (the seed every mutation starts from)", () => {
    const res = loadConfigTexts(FILES, OPTIONS);
    assert.ok(res.ok, JSON.stringify(!res.ok && res.errors));
  });

  it("never throws on random YAML, and locates every error by file, line, column and path", () => {
    fc.assert(
      fc.property(fc.array(randomYaml, { minLength: 1, maxLength: 3 }), (texts) =>
        checkLoad(Object.fromEntries(texts.map((t, i) => [`f${i}.yaml`, t]))),
      ),
      { ...RUNS, numRuns: 300 },
    );
  });

  it("never throws on the example with fields dropped, mistyped or added, and locates every error", () => {
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 4 }), (ms) => checkLoad(mutateData(ms))),
      { ...RUNS, seed: RUNS.seed + 1, numRuns: 100 },
    );
  });

  it("never throws on the example's text with lines duplicated, dropped, cut, inserted or given odd values, and locates every error", () => {
    fc.assert(
      fc.property(
        // One value in four replaced, on average; a few line edits, or none.
        fc.array(fc.nat(VALUES.length * 4 - 1), { minLength: 64, maxLength: 64 }),
        fc.array(lineEdit, { maxLength: 3 }),
        (picks, edits) => checkLoad(mutateText(picks, edits)),
      ),
      { ...RUNS, seed: RUNS.seed + 2, numRuns: 120 },
    );
  });
});
