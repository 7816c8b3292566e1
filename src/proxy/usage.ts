// The token usage an engine reports, read from a completion body or from a stream's usage frame without
// parsing the rest: a body can be long, and only `usage` settles the gateway's accounting. Any JSON
// spacing is read (`"usage":{` as vLLM writes it, `"usage": {` as Python's json.dumps does, newlines).

import { objectEnd, valueAfterKey } from "./json-bytes.js";

export interface StreamUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

const KEY = Buffer.from('"usage"');
const OPEN = 0x7b; // {

/**
 * The last `"usage": {…}` object in `body` (from the brace to its balanced closing one), parsed on its
 * own. null when absent, null-valued, cut off or malformed, or when a count in it is not a non-negative
 * whole number. A quoted "usage" with no colon after it is a value, not the key, and is passed over.
 */
export function usageOf(body: Buffer): StreamUsage | null {
  const to = body.length;
  for (let key = body.lastIndexOf(KEY); key >= 0; key = key > 0 ? body.lastIndexOf(KEY, key - 1) : -1) {
    const value = valueAfterKey(body, key + KEY.length, to);
    if (value < 0) continue;
    if (body[value] !== OPEN) return null;
    const end = objectEnd(body, value, to);
    if (end < 0) return null;
    let usage: unknown;
    try {
      usage = JSON.parse(body.toString("utf8", value, end));
    } catch {
      return null;
    }
    return countsOk(usage as Record<string, unknown>) ? (usage as StreamUsage) : null;
  }
  return null;
}

/**
 * Whether the counts the gateway reads are absent or non-negative whole numbers. An engine's garbage
 * (-5, "12", 1e999) would otherwise reach the token counters, whose inc() throws on a negative or
 * non-finite count (or concatenates a string), and the token correction.
 */
function countsOk(u: Record<string, unknown>): boolean {
  const details = u.prompt_tokens_details;
  if (details !== undefined && details !== null) {
    if (typeof details !== "object" || Array.isArray(details)) return false;
    if (!isCount((details as Record<string, unknown>).cached_tokens)) return false;
  }
  return isCount(u.prompt_tokens) && isCount(u.completion_tokens);
}

function isCount(v: unknown): boolean {
  return v === undefined || v === null || (Number.isSafeInteger(v) && (v as number) >= 0);
}
