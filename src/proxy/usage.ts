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
 * own. null when absent, null-valued, cut off or malformed. A quoted "usage" with no colon after it is a
 * value, not the key, and is passed over.
 */
export function usageOf(body: Buffer): StreamUsage | null {
  const to = body.length;
  for (let key = body.lastIndexOf(KEY); key >= 0; key = key > 0 ? body.lastIndexOf(KEY, key - 1) : -1) {
    const value = valueAfterKey(body, key + KEY.length, to);
    if (value < 0) continue;
    if (body[value] !== OPEN) return null;
    const end = objectEnd(body, value, to);
    if (end < 0) return null;
    try {
      return JSON.parse(body.toString("utf8", value, end)) as StreamUsage;
    } catch {
      return null;
    }
  }
  return null;
}
