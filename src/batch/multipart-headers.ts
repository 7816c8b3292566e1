// The MIME header grammar of a multipart part (RFC 2046, RFC 7578) and of a Content-Type: header lines
// with folding, a value with its `; key=value` parameters, and a part's filename in either of its two
// spellings. Pure string work; multipart.ts decides what a malformed header costs the upload.

/**
 * Header lines by lower-cased name; a folded line (leading space) continues the one before. Null when
 * a line is malformed (no name before its colon).
 */
export function parseHeaders(block: string): Map<string, string> | null {
  const headers = new Map<string, string>();
  let last: string | null = null;
  for (const line of block.split("\r\n")) {
    if (line === "") continue;
    if ((line[0] === " " || line[0] === "\t") && last !== null) {
      headers.set(last, `${headers.get(last)} ${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0) return null;
    last = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(last)) headers.set(last, line.slice(colon + 1).trim());
  }
  return headers;
}

/**
 * A header value and its `; key=value` parameters (keys lower-cased; values unquoted, `\"` and `\\`
 * unescaped, any other backslash kept: browsers send Windows paths unescaped).
 */
export function parseHeaderValue(header: string): { value: string; params: Map<string, string> } {
  const params = new Map<string, string>();
  const semi = header.indexOf(";");
  const value = (semi < 0 ? header : header.slice(0, semi)).trim().toLowerCase();
  let i = semi < 0 ? header.length : semi + 1;
  while (i < header.length) {
    const eq = header.indexOf("=", i);
    if (eq < 0) break;
    const key = header.slice(i, eq).trim().toLowerCase();
    let j = eq + 1;
    while (header[j] === " " || header[j] === "\t") j++;
    let val = "";
    if (header[j] === '"') {
      for (j++; j < header.length && header[j] !== '"'; j++) {
        if (header[j] === "\\" && (header[j + 1] === '"' || header[j + 1] === "\\")) j++;
        val += header[j];
      }
      const next = header.indexOf(";", j);
      i = next < 0 ? header.length : next + 1;
    } else {
      const next = header.indexOf(";", j);
      val = header.slice(j, next < 0 ? header.length : next).trim();
      i = next < 0 ? header.length : next + 1;
    }
    if (key !== "" && !params.has(key)) params.set(key, val);
  }
  return { value, params };
}

/** The part's filename: `filename`, else a UTF-8 `filename*` (RFC 5987); null for a text field. */
export function filenameOf(params: Map<string, string>): string | null {
  const plain = params.get("filename");
  if (plain !== undefined) return plain;
  const extended = params.get("filename*");
  if (extended === undefined) return null;
  const m = /^utf-8'[^']*'(.*)$/i.exec(extended);
  if (!m) return extended;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return m[1]!;
  }
}
