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
  for (const part of v.split(",")) {
    const [name, ...params] = part.trim().split(";");
    const dur = params.map((p) => p.trim()).find((p) => p.startsWith("dur="));
    if (!dur) continue;
    const ms = Number(dur.slice(4));
    if (!Number.isFinite(ms)) continue;
    if (name === "queue") out.queueMs = ms;
    else if (name === "prefill") out.prefillMs = ms;
    else if (name === "decode") out.decodeMs = ms;
  }
  return out;
}
