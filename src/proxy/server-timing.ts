// Reads an engine's per-request timing from `Server-Timing` (header or trailer): queue, prefill and
// decode in ms. Engines that do not send it give nulls, never guesses.

export interface EngineTiming {
  queueMs: number | null;
  prefillMs: number | null;
  decodeMs: number | null;
}

const NONE: EngineTiming = { queueMs: null, prefillMs: null, decodeMs: null };

export function parseServerTiming(value: string | string[] | undefined): EngineTiming {
  const v = Array.isArray(value) ? value.join(",") : value;
  if (!v) return NONE;
  const out: EngineTiming = { queueMs: null, prefillMs: null, decodeMs: null };
  // One pass of index searches (this runs once per request): `name;param;dur=N, name;dur=N`.
  for (let start = 0; start < v.length; ) {
    let end = v.indexOf(",", start);
    if (end < 0) end = v.length;
    const semi = v.indexOf(";", start);
    if (semi > start && semi < end) {
      const name = v.slice(start, semi).trim();
      const ms = durationOf(v, semi, end);
      if (ms !== null) {
        if (name === "queue") out.queueMs = ms;
        else if (name === "prefill") out.prefillMs = ms;
        else if (name === "decode") out.decodeMs = ms;
      }
    }
    start = end + 1;
  }
  return out;
}

/** The first `dur=` parameter among the `;`-separated ones in v[from, end), as a finite number. */
function durationOf(v: string, from: number, end: number): number | null {
  for (let p = from; p < end; ) {
    let next = v.indexOf(";", p + 1);
    if (next < 0 || next > end) next = end;
    const param = v.slice(p + 1, next).trim();
    if (param.startsWith("dur=")) {
      const ms = Number(param.slice(4));
      return Number.isFinite(ms) ? ms : null;
    }
    p = next;
  }
  return null;
}
