// A unified diff of two config versions, file by file, as `config diff <a> <b>` prints it. Config files
// are small: a longest-common-subsequence table over their lines is enough (capped; past the cap a
// file is shown as replaced whole).

import type { ConfigFiles } from "./config-history.js";

/** Lines per side past which a file's diff is not worked out line by line. */
const MAX_LINES = 4000;
const CONTEXT = 3;

type Op = { kind: " " | "-" | "+"; line: string };

/** The edit script from `a` to `b`, by the longest common subsequence of their lines. */
function editScript(a: readonly string[], b: readonly string[]): Op[] {
  if (a.length > MAX_LINES || b.length > MAX_LINES) {
    return [
      ...a.map((line) => ({ kind: "-" as const, line })),
      ...b.map((line) => ({ kind: "+" as const, line })),
    ];
  }
  const n = a.length;
  const m = b.length;
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * w + j] =
        a[i] === b[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ kind: " ", line: a[i]! });
      i++;
      j++;
    } else if (lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!) ops.push({ kind: "-", line: a[i++]! });
    else ops.push({ kind: "+", line: b[j++]! });
  }
  while (i < n) ops.push({ kind: "-", line: a[i++]! });
  while (j < m) ops.push({ kind: "+", line: b[j++]! });
  return ops;
}

function lines(text: string | undefined): string[] {
  if (text === undefined || text === "") return [];
  const out = text.split("\n");
  if (out[out.length - 1] === "") out.pop();
  return out;
}

/** One file's unified diff (`--- a/… +++ b/…`, hunks with 3 lines of context), or "" when equal. */
export function unifiedDiff(name: string, before: string | undefined, after: string | undefined): string {
  if (before === after) return "";
  const ops = editScript(lines(before), lines(after));
  const out: string[] = [
    `--- ${before === undefined ? "/dev/null" : `a/${name}`}`,
    `+++ ${after === undefined ? "/dev/null" : `b/${name}`}`,
  ];
  // Positions (in ops) of changes, grouped into hunks whose context overlaps.
  let k = 0;
  while (k < ops.length) {
    while (k < ops.length && ops[k]!.kind === " ") k++;
    if (k >= ops.length) break;
    const start = Math.max(0, k - CONTEXT);
    let end = k;
    for (;;) {
      while (end < ops.length && ops[end]!.kind !== " ") end++;
      let next = end;
      while (next < ops.length && ops[next]!.kind === " ") next++;
      if (next < ops.length && next - end <= 2 * CONTEXT) end = next;
      else break;
    }
    const stop = Math.min(ops.length, end + CONTEXT);
    let aLine = 1;
    let bLine = 1;
    for (let p = 0; p < start; p++) {
      if (ops[p]!.kind !== "+") aLine++;
      if (ops[p]!.kind !== "-") bLine++;
    }
    const hunk = ops.slice(start, stop);
    const aCount = hunk.filter((o) => o.kind !== "+").length;
    const bCount = hunk.filter((o) => o.kind !== "-").length;
    out.push(
      `@@ -${aCount === 0 ? aLine - 1 : aLine},${aCount} +${bCount === 0 ? bLine - 1 : bLine},${bCount} @@`,
    );
    for (const o of hunk) out.push(`${o.kind}${o.line}`);
    k = stop;
  }
  return `${out.join("\n")}\n`;
}

/** Every file's diff between two versions' files, in name order; "" when they are the same. */
export function diffConfigs(before: ConfigFiles, after: ConfigFiles): string {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return names.map((n) => unifiedDiff(n, before[n], after[n])).join("");
}
