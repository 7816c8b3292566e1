// The token usage an engine reports, read from a completion body or from a stream's usage frame without
// parsing the rest: a body can be long, and only `usage` settles the gateway's accounting.

export interface StreamUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

const KEY = Buffer.from('"usage":');

/**
 * The last `"usage":{…}` object in `body` (from the brace to its balanced closing one), parsed on its
 * own. null when absent, null-valued, cut off or malformed.
 */
export function usageOf(body: Buffer): StreamUsage | null {
  const key = body.lastIndexOf(KEY);
  if (key < 0) return null;
  let start = key + KEY.length;
  while (body[start] === 0x20) start++;
  if (body[start] !== 0x7b) return null; // {
  let depth = 0;
  for (let i = start; i < body.length; i++) {
    const c = body[i];
    if (c === 0x7b) depth++;
    else if (c === 0x7d && --depth === 0) {
      try {
        return JSON.parse(body.toString("utf8", start, i + 1)) as StreamUsage;
      } catch {
        return null;
      }
    }
  }
  return null;
}
