// The prompt as the prefix index sees it: each message's role tag, content and a newline, in order.

import type { ApiKind } from "../profile/request-profile.js";

/**
 * The prompt for prefix hashing, as its parts in order: each message's role tag, content and a newline,
 * so two requests sharing a system prompt and history share a prefix here exactly where they do in the
 * engine. Parts, not one joined string: hashing reads a 220 KB prompt in place instead of copying it.
 */
export function promptPartsOf(kind: ApiKind, body: Record<string, unknown>): string[] {
  if (kind === "completion") {
    const p = body.prompt;
    return [typeof p === "string" ? p : Array.isArray(p) ? p.join(",") : ""];
  }
  const parts: string[] = [];
  for (const m of body.messages as { role: string; content?: unknown }[]) {
    const c = m.content;
    const content =
      typeof c === "string"
        ? c
        : Array.isArray(c)
          ? c.map((part: { text?: unknown }) => (typeof part.text === "string" ? part.text : "")).join("\n")
          : "";
    parts.push(`<${m.role}>`, content, "\n");
  }
  return parts;
}
