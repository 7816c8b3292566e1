// The log line's timestamp. `new Date().toISOString()` was 1% of the gateway's CPU at 1,000 requests/s;
// the date and time up to the second change once a second, so they are formatted once and the
// milliseconds appended.

let second = Number.NaN;
let prefix = "";

/** `Date.now()` (or `ms`) as `new Date(ms).toISOString()` would write it, for years 1970–9999. */
export function isoTime(ms = Date.now()): string {
  const s = Math.floor(ms / 1000);
  if (s !== second) {
    second = s;
    prefix = new Date(s * 1000).toISOString().slice(0, 20); // 2026-11-30T19:30:12.
  }
  const frac = ms - s * 1000;
  return `${prefix}${frac < 10 ? "00" : frac < 100 ? "0" : ""}${frac}Z`;
}
