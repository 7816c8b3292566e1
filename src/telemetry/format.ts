// How values, label sets and HELP text are written in the Prometheus text exposition format 0.0.4.
// Two styles: plain (JS numbers, labels in declared order) and python (prometheus_client, as vLLM prints).

/** Content-Type of a `/metrics` response in text format 0.0.4. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** How a registry writes its samples. Fixed per registry; children bake their series names with it. */
export interface ExpositionStyle {
  readonly formatValue: (v: number) => string;
  /** prometheus_client sorts label names (including `le`); the plain style keeps declaration order. */
  readonly sortLabels: boolean;
  /** prometheus_client writes `_count` before `_sum`; client_golang writes `_sum` first. */
  readonly countBeforeSum: boolean;
}

export const PLAIN_STYLE: ExpositionStyle = { formatValue, sortLabels: false, countBeforeSum: false };
export const PYTHON_STYLE: ExpositionStyle = {
  formatValue: formatValuePython,
  sortLabels: true,
  countBeforeSum: true,
};

/** Integers without exponent, other finite numbers as JS prints them, `+Inf`, `-Inf`, `NaN`. */
export function formatValue(v: number): string {
  if (Number.isInteger(v)) return Math.abs(v) < 1e21 ? String(v) : BigInt(v).toString();
  if (v === Number.POSITIVE_INFINITY) return "+Inf";
  if (v === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(v);
}

/**
 * prometheus_client's `floatToGoString`: Python `repr(float)` (`3.0`, `1.5e-05`), except that positive
 * numbers with more than six integer digits switch to an exponent (`1.7e+09`, and, faithfully, `1e+010`).
 */
export function formatValuePython(v: number): string {
  if (v === Number.POSITIVE_INFINITY) return "+Inf";
  if (v === Number.NEGATIVE_INFINITY) return "-Inf";
  if (Number.isNaN(v)) return "NaN";
  const s = pythonRepr(v);
  const dot = s.indexOf(".");
  if (v > 0 && dot > 6) {
    const mantissa = stripTrailing(`${s[0]}.${s.slice(1, dot)}${s.slice(dot + 1)}`, "0.");
    return `${mantissa}e+0${dot - 1}`;
  }
  return s;
}

function pythonRepr(v: number): string {
  if (v === 0) return Object.is(v, -0) ? "-0.0" : "0.0";
  // toExponential() without digits gives the shortest round-trip digits, as Python's repr does.
  const e = v.toExponential();
  const at = e.indexOf("e");
  const exp = Number(e.slice(at + 1));
  if (exp < -4 || exp >= 16) {
    const digits = String(Math.abs(exp)).padStart(2, "0");
    return `${e.slice(0, at)}e${exp < 0 ? "-" : "+"}${digits}`;
  }
  const s = String(v); // JS prints fixed notation throughout this exponent range
  return s.includes(".") ? s : `${s}.0`;
}

function stripTrailing(s: string, chars: string): string {
  let end = s.length;
  while (end > 0 && chars.includes(s[end - 1]!)) end--;
  return s.slice(0, end);
}

const LABEL_VALUE_SPECIAL = /[\\"\n]/;

export function escapeLabelValue(s: string): string {
  if (!LABEL_VALUE_SPECIAL.test(s)) return s;
  return s.replace(/[\\"\n]/g, (c) => (c === "\n" ? "\\n" : `\\${c}`));
}

/** HELP text escapes backslash and newline only (quotes stay as they are in 0.0.4). */
export function escapeHelp(s: string): string {
  return s.replace(/[\\\n]/g, (c) => (c === "\n" ? "\\n" : "\\\\"));
}

/** `name{a="x",b="y"}`, or `name` alone when there are no labels. */
export function renderSeries(
  name: string,
  labelNames: readonly string[],
  labelValues: readonly string[],
  style: ExpositionStyle,
): string {
  if (labelNames.length === 0) return name;
  const pairs = labelNames.map((n, i) => [n, labelValues[i] ?? ""] as const);
  if (style.sortLabels) pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return `${name}{${pairs.map(([n, v]) => `${n}="${escapeLabelValue(v)}"`).join(",")}}`;
}
