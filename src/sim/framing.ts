// How a replica frames what it writes, so the gateway can be tested against servers that frame
// differently from vLLM: SSE line endings (LF as vLLM; CRLF as sse-starlette servers; CR), the space
// after `data:`, and JSON compact (vLLM, pydantic) or "pretty" as Python's json.dumps writes it by
// default (", " and ": " separators, non-ASCII escaped as \uXXXX), always one line per data field.

export const SSE_LINE_ENDINGS = ["lf", "crlf", "cr"] as const;
export const JSON_STYLES = ["compact", "pretty"] as const;
export const SSE_DATA_SPACES = ["space", "none"] as const;

export type SseLineEnding = (typeof SSE_LINE_ENDINGS)[number];
export type JsonStyle = (typeof JSON_STYLES)[number];
export type SseDataSpace = (typeof SSE_DATA_SPACES)[number];

export interface FramingOptions {
  sseLineEnding: SseLineEnding;
  jsonStyle: JsonStyle;
  sseDataSpace: SseDataSpace;
}

/** Whether `v` is one of `allowed` (for flag and fleet-file validation, which word their own errors). */
export function isOneOf<T extends string>(allowed: readonly T[], v: unknown): v is T {
  return typeof v === "string" && (allowed as readonly string[]).includes(v);
}

const LINE_ENDINGS: Record<SseLineEnding, string> = { lf: "\n", crlf: "\r\n", cr: "\r" };

/** Non-ASCII (and DEL), which Python's json.dumps escapes by default (ensure_ascii). */
const NON_ASCII = /[\u007f-\uffff]/g;

function escapeNonAscii(json: string): string {
  return json.replace(NON_ASCII, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** JSON as Python's json.dumps(v) writes it: `{"a": 1, "b": [1, 2]}`, ASCII only. */
export function pythonJson(v: unknown): string {
  if (typeof v === "string") return escapeNonAscii(JSON.stringify(v));
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? "null" : pythonJson(x))).join(", ")}]`;
  const parts: string[] = [];
  for (const [k, x] of Object.entries(v)) {
    if (x === undefined || typeof x === "function") continue; // as JSON.stringify drops them
    parts.push(`${pythonJson(k)}: ${pythonJson(x)}`);
  }
  return `{${parts.join(", ")}}`;
}

/** One replica's framing, fixed at start; the pieces frames are built from are computed here once. */
export class Framing {
  readonly options: FramingOptions;
  readonly pretty: boolean;
  /** `data: ` or `data:`. */
  readonly dataPrefix: string;
  /** What ends an event: the data line's line ending, then the blank line's. */
  readonly eventEnd: string;
  /** JSON separators in this style: `:` and `,`, or `: ` and `, `. */
  readonly colon: string;
  readonly comma: string;
  readonly done: string;

  constructor(options: Partial<FramingOptions> = {}) {
    this.options = {
      sseLineEnding: options.sseLineEnding ?? "lf",
      jsonStyle: options.jsonStyle ?? "compact",
      sseDataSpace: options.sseDataSpace ?? "space",
    };
    this.pretty = this.options.jsonStyle === "pretty";
    this.dataPrefix = this.options.sseDataSpace === "space" ? "data: " : "data:";
    const eol = LINE_ENDINGS[this.options.sseLineEnding];
    this.eventEnd = eol + eol;
    this.colon = this.pretty ? ": " : ":";
    this.comma = this.pretty ? ", " : ",";
    this.done = `${this.dataPrefix}[DONE]${this.eventEnd}`;
  }

  /** A whole value in this style (response bodies, usage, errors). */
  json(v: unknown): string {
    return this.pretty ? pythonJson(v) : JSON.stringify(v);
  }

  /** A JSON string literal in this style (the hot path: one per streamed token). */
  str(s: string): string {
    const j = JSON.stringify(s);
    return this.pretty ? escapeNonAscii(j) : j;
  }

  /** One SSE event carrying `data` (a single line). */
  event(data: string): string {
    return this.dataPrefix + data + this.eventEnd;
  }
}

/** vLLM's framing: `data: {compact json}\n\n`. */
export const VLLM_FRAMING = new Framing();
