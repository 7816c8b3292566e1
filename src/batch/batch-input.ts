// Validation of a Batch API input file, line by line, before any of it runs. The file is JSONL, one
// request a line (`{"custom_id", "method", "url", "body"}`), and a batch either starts whole or fails
// whole: a bad line found after half the batch had run would leave the client with half its answers and
// no way to resubmit only the rest. So every line is checked up front and every problem is reported,
// each with its 1-based line number, in the shape OpenAI gives a failed batch's `errors` (`{object:
// "list", data: [{code, message, param, line}]}`), so a client fixes the whole file in one pass rather
// than one line per upload.
//
// The bodies are kept as parsed: the runner sends each one on unchanged to the endpoint the batch names.

import { setImmediate as nextTurn } from "node:timers/promises";

/** The endpoints a batch can run against here. */
export type BatchEndpoint = "/v1/chat/completions" | "/v1/completions";

/** One valid request of the file. */
export interface BatchLine {
  /** 1-based line number in the file, blank lines counted. */
  readonly line: number;
  readonly customId: string;
  readonly url: string;
  /** The request body as parsed, sent on unchanged. */
  readonly body: Record<string, unknown>;
  /** The line's size in UTF-8 bytes, without its line ending. */
  readonly bytes: number;
}

export type BatchLineErrorCode =
  | "empty_file"
  | "too_many_lines"
  | "line_too_large"
  | "invalid_json"
  | "invalid_request"
  | "missing_custom_id"
  | "duplicate_custom_id"
  | "invalid_method"
  | "invalid_url"
  | "invalid_body"
  | "missing_model"
  | "model_not_found";

/** One problem with the file; `line` is null for the file as a whole. */
export interface BatchLineError {
  readonly code: BatchLineErrorCode;
  readonly line: number | null;
  readonly message: string;
  /** The offending field, dotted (`body.model`); null when the whole line is at fault. */
  readonly param: string | null;
}

export interface BatchInputLimits {
  /** Requests (non-blank lines) a file may hold. */
  readonly maxLines: number;
  /** Size of one line in UTF-8 bytes, without its line ending. */
  readonly maxLineBytes: number;
}

export interface BatchInputOptions {
  /** The endpoint the batch was created for; every line's `url` must be it. */
  readonly endpoint: BatchEndpoint;
  /** Whether the gateway serves `model` (called only with a non-empty string). */
  readonly knownModel: (model: string) => boolean;
  readonly limits: BatchInputLimits;
}

export interface BatchInputResult {
  /** The valid lines, in file order. */
  readonly lines: BatchLine[];
  /** Every problem found, in file order; the batch may run only when this is empty. */
  readonly errors: BatchLineError[];
}

/** A failed batch's `errors` field, as OpenAI's Batch object carries it. */
export interface BatchErrorsObject {
  readonly object: "list";
  readonly data: { code: string; message: string; param: string | null; line: number | null }[];
}

/**
 * Checks every line of a batch input file. Blank lines (and the ending of the last line, LF or CRLF)
 * are skipped; a line over the byte limit is reported without parsing it; past `maxLines` requests one
 * `too_many_lines` error names the first line over and checking stops there.
 */
export function validateBatchInput(text: string, opts: BatchInputOptions): BatchInputResult {
  const checker = new InputChecker(opts);
  const raw = text.split("\n");
  for (let i = 0; i < raw.length && checker.take(raw[i]!, i + 1); i++) {}
  return checker.result();
}

/** Input bytes checked between two turns of the event loop. */
const YIELD_EVERY_BYTES = 512 * 1024;

/**
 * As `validateBatchInput`, over the file's bytes as stored, line by line (each decoded alone), with the
 * event loop free every YIELD_EVERY_BYTES: a 100 MB file is checked without stalling the live requests
 * of the same process.
 */
export async function checkBatchInput(content: Buffer, opts: BatchInputOptions): Promise<BatchInputResult> {
  const checker = new InputChecker(opts);
  let since = 0;
  for (let start = 0, lineNo = 1; start <= content.length; lineNo++) {
    const nl = content.indexOf(0x0a, start);
    const end = nl < 0 ? content.length : nl;
    if (!checker.take(content.toString("utf8", start, end), lineNo)) break;
    since += end - start + 1;
    start = end + 1;
    if (since >= YIELD_EVERY_BYTES) {
      since = 0;
      await nextTurn();
    }
  }
  return checker.result();
}

/** The checks' state across the lines of one file. */
class InputChecker {
  private readonly lines: BatchLine[] = [];
  private readonly errors: BatchLineError[] = [];
  private readonly firstLineOf = new Map<string, number>();
  private requests = 0;

  constructor(private readonly opts: BatchInputOptions) {}

  /** Checks line `lineNo` (its text without the LF); false once checking stops (too many lines). */
  take(raw: string, lineNo: number): boolean {
    const content = lineContent(raw, lineNo === 1);
    if (content.trim() === "") return true;
    this.requests++;
    if (this.requests > this.opts.limits.maxLines) {
      this.errors.push(tooManyLines(lineNo, this.opts.limits.maxLines));
      return false;
    }
    const checked = checkLine(content, lineNo, this.opts, this.firstLineOf);
    if (checked.errors.length > 0) this.errors.push(...checked.errors);
    else if (checked.line) this.lines.push(checked.line);
    return true;
  }

  result(): BatchInputResult {
    if (this.requests === 0) {
      this.errors.push({
        code: "empty_file",
        line: null,
        param: null,
        message: "the file holds no requests",
      });
    }
    return { lines: this.lines, errors: this.errors };
  }
}

/** The shape OpenAI gives a failed batch's `errors`: `{object: "list", data: [{code, message, param, line}]}`. */
export function batchErrorsObject(errors: readonly BatchLineError[]): BatchErrorsObject {
  return {
    object: "list",
    data: errors.map((e) => ({ code: e.code, message: e.message, param: e.param, line: e.line })),
  };
}

/** A line without its CR (of a CRLF ending) and, on the first line, without a UTF-8 byte order mark. */
function lineContent(raw: string, first: boolean): string {
  let s = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
  if (first && s.charCodeAt(0) === 0xfeff) s = s.slice(1);
  return s;
}

function tooManyLines(line: number, max: number): BatchLineError {
  return {
    code: "too_many_lines",
    line,
    param: null,
    message: `line ${line} is past the limit of ${max} requests in one batch; split the file into several batches`,
  };
}

/** One line's checks: its errors (all of them), or the valid line. */
function checkLine(
  content: string,
  line: number,
  opts: BatchInputOptions,
  firstLineOf: Map<string, number>,
): { errors: BatchLineError[]; line: BatchLine | null } {
  const bytes = Buffer.byteLength(content, "utf8");
  if (bytes > opts.limits.maxLineBytes) {
    const message = `line ${line} is ${bytes} bytes, over the limit of ${opts.limits.maxLineBytes} bytes a line`;
    return { errors: [{ code: "line_too_large", line, param: null, message }], line: null };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return {
      errors: [
        { code: "invalid_json", line, param: null, message: `line ${line} is not valid JSON: ${why}` },
      ],
      line: null,
    };
  }
  if (!isObject(parsed)) {
    const message = `line ${line} is not a JSON object; each line must be {"custom_id", "method", "url", "body"}`;
    return { errors: [{ code: "invalid_request", line, param: null, message }], line: null };
  }
  const errors: BatchLineError[] = [];
  const err = (code: BatchLineErrorCode, param: string, message: string) =>
    errors.push({ code, line, param, message: `line ${line}: ${message}` });

  const customId = parsed.custom_id;
  if (typeof customId !== "string" || customId === "") {
    err("missing_custom_id", "custom_id", "custom_id is missing or not a non-empty string");
  } else {
    const first = firstLineOf.get(customId);
    if (first === undefined) firstLineOf.set(customId, line);
    else {
      err(
        "duplicate_custom_id",
        "custom_id",
        `custom_id ${JSON.stringify(customId)} is already used on line ${first}; each must be unique in the batch`,
      );
    }
  }
  if (parsed.method !== "POST") {
    err(
      "invalid_method",
      "method",
      `method is ${describe(parsed.method)}; a batch request's method must be "POST"`,
    );
  }
  if (parsed.url !== opts.endpoint) {
    err(
      "invalid_url",
      "url",
      `url is ${describe(parsed.url)}, but this batch's endpoint is ${opts.endpoint}`,
    );
  }
  const body = parsed.body;
  if (!isObject(body)) err("invalid_body", "body", `body is ${describe(body)}; it must be a JSON object`);
  else checkBody(body, opts, err);

  if (errors.length > 0) return { errors, line: null };
  return {
    errors,
    line: {
      line,
      customId: customId as string,
      url: opts.endpoint,
      body: body as Record<string, unknown>,
      bytes,
    },
  };
}

/** The body's checks for the batch's endpoint: a served model, its input, and no streaming. */
function checkBody(
  body: Record<string, unknown>,
  opts: BatchInputOptions,
  err: (code: BatchLineErrorCode, param: string, message: string) => void,
): void {
  const model = body.model;
  if (typeof model !== "string" || model === "") {
    err("missing_model", "body.model", "body.model is missing or not a non-empty string");
  } else if (!opts.knownModel(model)) {
    err(
      "model_not_found",
      "body.model",
      `body.model ${JSON.stringify(model)} is not a model this gateway serves`,
    );
  }
  if (opts.endpoint === "/v1/chat/completions") {
    const messages = body.messages;
    if (!Array.isArray(messages) || messages.length === 0) {
      err(
        "invalid_body",
        "body.messages",
        `body.messages is ${describe(messages)}; it must be a non-empty array`,
      );
    }
  } else {
    const prompt = body.prompt;
    if (typeof prompt !== "string" && !Array.isArray(prompt)) {
      err(
        "invalid_body",
        "body.prompt",
        `body.prompt is ${describe(prompt)}; it must be a string or an array`,
      );
    }
  }
  if (body.stream === true) {
    err("invalid_body", "body.stream", "body.stream is true; batch requests cannot stream, leave it out");
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A value as a message names it: `missing`, `"GET"`, `an array`, `a number`. */
function describe(v: unknown): string {
  if (v === undefined) return "missing";
  if (v === null) return "null";
  if (typeof v === "string") return JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}…` : v);
  if (Array.isArray(v)) return v.length === 0 ? "an empty array" : "an array";
  return typeof v === "object" ? "an object" : `a ${typeof v}`;
}
