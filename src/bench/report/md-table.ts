// A GitHub-flavoured Markdown table from a header and rows of already formatted cells.

import { mdCell } from "./format.js";

export type Align = "left" | "right";

export function mdTable(header: string[], rows: string[][], align: Align[] = []): string {
  const rule = header.map((_, i) => (align[i] === "right" ? "---:" : "---"));
  const line = (cells: string[]) => `| ${cells.map(mdCell).join(" | ")} |`;
  return [line(header), `|${rule.join("|")}|`, ...rows.map(line)].join("\n");
}

/** Alignment for a table whose first `textColumns` columns are text and the rest figures. */
export function figuresRight(columns: number, textColumns = 1): Align[] {
  return Array.from({ length: columns }, (_, i) => (i < textColumns ? "left" : "right"));
}
