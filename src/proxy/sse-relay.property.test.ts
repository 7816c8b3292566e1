// Property test of the SSE relay against eventsource-parser (a WHATWG event-stream parser) on the same
// bytes: random streams (LF, CRLF, CR or mixed line ends; `data:` with and without its space; multi-line
// data; comments; event/id/retry and unknown fields; compact, Python-spaced, loose or indented JSON; a
// BOM; a cut-off end) split into random chunks down to single bytes, CR and LF apart included. The relay
// must dispatch the same events in the same order, report TTFT on exactly the first content event, read
// the usage, [DONE] and the error event, and pass on every byte but those of a dropped usage frame.
//
// Seeded: a fixed seed, and a fresh one each run (printed); SSE_RELAY_SEED=<n> replays one seed.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createParser } from "eventsource-parser";
import { seededRandom } from "../sim/rng.js";
import { SseRelay } from "./sse-relay.js";

type Rng = () => number;
const pick = <T>(r: Rng, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: Rng, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

type Framing = "lf" | "crlf" | "cr" | "mixed";
type JsonStyle = "compact" | "python" | "loose" | "pretty" | "mixed";
const EOLS = ["\n", "\r\n", "\r"] as const;

/** Token texts, some of them shaped like what the relay searches for. */
const TEXTS = [
  "Hel",
  "lo",
  " world",
  "",
  "é",
  "世界",
  "🎉",
  "error",
  "usage",
  '"usage": {',
  '"error": 1',
  '"choices":[]',
  '"content": "x"',
  "data: x\n\n",
  "[DONE]",
  "\r\n",
  "\r",
  "\\",
  "{}",
  ": ping",
  "\u2028",
];

/** Lines that are not data: comments, other fields, unknown ones, near-misses of `data`. */
const NOISE = [
  ": ping",
  ":",
  ": keep-alive 2024-01-01 00:00:00",
  "event: message",
  "event:delta",
  "event: error",
  "id: 42",
  "id:",
  "retry: 3000",
  "retry:abc",
  "foo: bar",
  "data-x: 1",
  "Data: x",
  "datax",
  "dat",
  "event",
];

/** Python's json.dumps: ", " and ": " separators. */
function python(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(python).join(", ")}]`;
  if (v !== null && typeof v === "object")
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}: ${python(x)}`)
      .join(", ")}}`;
  return JSON.stringify(v);
}

/** Random spaces and tabs wherever JSON allows whitespace on one line. */
function loose(v: unknown, r: Rng): string {
  const ws = () => pick(r, ["", "", " ", "  ", "\t", " \t"]);
  if (Array.isArray(v)) return `[${ws()}${v.map((x) => loose(x, r)).join(`${ws()},${ws()}`)}${ws()}]`;
  if (v !== null && typeof v === "object")
    return `{${ws()}${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}${ws()}:${ws()}${loose(x, r)}`)
      .join(`${ws()},${ws()}`)}${ws()}}`;
  return JSON.stringify(v);
}

interface Generated {
  bytes: Buffer;
  /** Where the usage frame's bytes lie (from its first line to the end of its blank line). */
  usageFrame: [number, number] | null;
  describe: string;
}

class StreamWriter {
  private readonly parts: Buffer[] = [];
  size = 0;
  private lastEol = "";

  constructor(
    private readonly r: Rng,
    private readonly framing: Framing,
  ) {}

  write(s: string): void {
    const b = Buffer.from(s);
    this.parts.push(b);
    this.size += b.length;
  }

  line(text: string): void {
    let eol: string =
      this.framing === "lf"
        ? "\n"
        : this.framing === "crlf"
          ? "\r\n"
          : this.framing === "cr"
            ? "\r"
            : pick(this.r, EOLS);
    // A blank line after a bare CR must not start with LF: the two would be one CRLF line end.
    if (text === "" && this.lastEol === "\r" && eol === "\n") eol = "\r";
    this.lastEol = eol;
    this.write(text + eol);
  }

  bytes(): Buffer {
    return Buffer.concat(this.parts);
  }
}

function generate(r: Rng): Generated {
  const framing = pick(r, ["lf", "crlf", "cr", "mixed"] as const);
  const style = pick(r, ["compact", "python", "loose", "pretty", "mixed"] as const);
  const chat = r() < 0.7;
  const w = new StreamWriter(r, framing);
  const noise = r() < 0.5 ? 0.15 : 0;
  let usageFrame: [number, number] | null = null;

  const encode = (v: unknown): string[] => {
    const s: JsonStyle =
      style === "mixed" ? pick(r, ["compact", "python", "loose", "pretty"] as const) : style;
    if (s === "pretty") return JSON.stringify(v, null, pick(r, [2, "\t"])).split("\n");
    const text = s === "compact" ? JSON.stringify(v) : s === "python" ? python(v) : loose(v, r);
    return [r() < 0.1 ? ` ${text}` : text];
  };
  const dataLine = (value: string): string => {
    if (value === "" && r() < 0.3) return "data";
    return `data:${r() < 0.7 ? " " : ""}${value}`;
  };
  /** One event: its data lines, noise lines among them, and its blank line. Returns its byte range. */
  const event = (values: string[]): [number, number] => {
    const start = w.size;
    for (const v of values) {
      while (r() < noise) w.line(pick(r, NOISE));
      w.line(dataLine(v));
    }
    while (r() < noise) w.line(pick(r, NOISE));
    w.line("");
    return [start, w.size];
  };
  const between = () => {
    if (r() < noise) {
      // A block with no data line (a heartbeat comment, a lone field) or a stray blank line.
      if (r() < 0.7) w.line(pick(r, NOISE));
      w.line("");
    }
  };

  if (r() < 0.1) w.write("\uFEFF");
  between();
  const head = chat
    ? { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m" }
    : { id: "cmpl-1", object: "text_completion", created: 1, model: "m" };
  const usageKind = pick(r, ["none", "null", "stats"] as const);
  const withUsage = (frame: Record<string, unknown>, n: number) =>
    usageKind === "null"
      ? { ...frame, usage: null }
      : usageKind === "stats"
        ? { ...frame, usage: { prompt_tokens: 3, completion_tokens: n } }
        : frame;
  if (chat && r() < 0.8)
    event(encode({ ...head, choices: [{ index: 0, delta: { role: "assistant", content: "" } }] }));
  const preamble = int(r, 0, 2);
  for (let i = 0; i < preamble; i++) {
    between();
    const delta = pick(r, [
      { content: null, tool_calls: [{ index: 0, function: { arguments: '{"error": 1}' } }] },
      { reasoning_content: pick(r, TEXTS) },
      {},
    ]);
    event(encode({ ...head, choices: [{ index: 0, delta }] }));
  }
  const tokens = int(r, 0, 10);
  for (let i = 0; i < tokens; i++) {
    between();
    const text = pick(r, TEXTS);
    const choice = chat
      ? { index: 0, delta: { content: text }, logprobs: null, finish_reason: null }
      : { index: 0, text, logprobs: null, finish_reason: null };
    event(encode(withUsage({ ...head, choices: [choice] }, i + 1)));
  }
  if (r() < 0.15) {
    between();
    const error = { message: "engine failed", type: "server_error", param: null, code: 500 };
    // Only the first is an error event: `{"error": …}` with a value.
    event(encode(pick(r, [{ error }, { error }, { error: null }, { id: "x", error }])));
  }
  if (r() < 0.75) {
    between();
    const usage = {
      prompt_tokens: int(r, 1, 5000),
      completion_tokens: tokens,
      total_tokens: 0,
      prompt_tokens_details: r() < 0.5 ? { cached_tokens: int(r, 0, 100) } : null,
    };
    usageFrame = event(encode({ ...head, choices: [], usage }));
  }
  if (r() < 0.85) {
    between();
    event([pick(r, ["[DONE]", "[DONE]", " [DONE]"])]);
  }
  between();
  let bytes = w.bytes();
  const cutOff = r() < 0.15;
  if (cutOff) bytes = bytes.subarray(0, int(r, 0, bytes.length));
  return {
    bytes,
    usageFrame,
    describe: `framing ${framing}, JSON ${style}, ${chat ? "chat" : "completion"}, noise ${noise}${cutOff ? ", cut off" : ""}`,
  };
}

/** Random chunks, down to single bytes; some runs split every CRLF between its CR and LF. */
function chunksOf(r: Rng, bytes: Buffer): Buffer[] {
  const mode = pick(r, ["bytes", "small", "medium", "large", "whole", "crlf"] as const);
  const cuts = new Set<number>();
  if (mode === "bytes") for (let i = 1; i < bytes.length; i++) cuts.add(i);
  else if (mode !== "whole") {
    const max = mode === "small" ? 8 : mode === "large" ? 600 : 64;
    for (let i = int(r, 1, max); i < bytes.length; i += int(r, 1, max)) cuts.add(i);
  }
  if (mode === "crlf" || r() < 0.2)
    for (let i = 0; i + 1 < bytes.length; i++)
      if (bytes[i] === 0x0d && bytes[i + 1] === 0x0a) cuts.add(i + 1);
  const sorted = [...cuts].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let at = 0;
  for (const c of sorted) {
    out.push(bytes.subarray(at, c));
    if (r() < 0.01) out.push(Buffer.alloc(0));
    at = c;
  }
  out.push(bytes.subarray(at));
  return out;
}

interface Reference {
  data: string[];
  /** 1-based index of the first event carrying generated text; 0 if none. */
  firstContent: number;
  usage: unknown;
  usageEvents: number;
  sawDone: boolean;
  error: string | null;
}

/** eventsource-parser's events on the same bytes, read by the definitions the relay documents. */
function reference(bytes: Buffer): Reference {
  const data: string[] = [];
  const parser = createParser({ onEvent: (e) => data.push(e.data) });
  // TextDecoder drops a leading BOM, as the spec's decoding does. A CR ending the stream ends a line;
  // eventsource-parser waits for a possible LF after it, so it is given one (CR LF is the same line end).
  const text = new TextDecoder().decode(bytes);
  parser.feed(text.endsWith("\r") ? `${text}\n` : text);
  const ref: Reference = { data, firstContent: 0, usage: null, usageEvents: 0, sawDone: false, error: null };
  data.forEach((d, i) => {
    if (/^[ \t\r\n]*\[DONE\]/.test(d)) ref.sawDone = true;
    let v: unknown;
    try {
      v = JSON.parse(d);
    } catch {
      return;
    }
    if (v === null || typeof v !== "object" || Array.isArray(v)) return;
    const o = v as { choices?: unknown; usage?: unknown; error?: unknown };
    const choices = Array.isArray(o.choices) ? (o.choices as Record<string, any>[]) : [];
    const content = choices.some(
      (c) =>
        (typeof c?.delta?.content === "string" && c.delta.content !== "") ||
        (typeof c?.text === "string" && c.text !== ""),
    );
    if (content && ref.firstContent === 0) ref.firstContent = i + 1;
    if (
      Array.isArray(o.choices) &&
      o.choices.length === 0 &&
      o.usage !== null &&
      typeof o.usage === "object"
    ) {
      ref.usage = o.usage;
      ref.usageEvents++;
    }
    if (Object.keys(o)[0] === "error" && o.error != null && ref.error === null) ref.error = d;
  });
  return ref;
}

function check(seed: number, index: number, r: Rng): void {
  const g = generate(r);
  const keep = r() < 0.5;
  const chunks = chunksOf(r, g.bytes);
  const where = `seed ${seed} case ${index} (${g.describe}, ${chunks.length} chunks, keepUsageFrame ${keep}); replay with SSE_RELAY_SEED=${seed}\nstream: ${JSON.stringify(g.bytes.toString("latin1")).slice(0, 3000)}`;

  const events: string[] = [];
  let firstContent = 0;
  const relay: SseRelay = new SseRelay(
    keep,
    () => {
      assert.equal(firstContent, 0, `TTFT reported twice; ${where}`);
      firstContent = relay.frames;
    },
    (d) => events.push(d),
  );
  const out: Buffer[] = chunks.map((c) => relay.push(c));
  out.push(relay.rest());

  const ref = reference(g.bytes);
  assert.deepEqual(events, ref.data, `events; ${where}`);
  assert.equal(relay.frames, ref.data.length, `event count; ${where}`);
  assert.equal(firstContent, ref.firstContent, `first content event; ${where}`);
  assert.equal(Number.isNaN(relay.firstContentAt), ref.firstContent === 0, `firstContentAt; ${where}`);
  assert.deepEqual(relay.usage, ref.usage, `usage; ${where}`);
  assert.equal(relay.sawDone, ref.sawDone, `[DONE]; ${where}`);
  assert.equal(relay.upstreamError, ref.error, `error event; ${where}`);
  assert.ok(ref.usageEvents <= (g.usageFrame ? 1 : 0), `only the usage frame reads as one; ${where}`);

  let expected = g.bytes;
  if (!keep && ref.usageEvents > 0 && g.usageFrame) {
    const [start, end] = g.usageFrame;
    expected = Buffer.concat([g.bytes.subarray(0, start), g.bytes.subarray(Math.min(end, g.bytes.length))]);
  }
  const got = Buffer.concat(out);
  assert.ok(got.equals(expected), `output bytes; ${where}\ngot: ${JSON.stringify(got.toString("latin1"))}`);
}

function runSeed(seed: number, cases: number): void {
  const r = seededRandom(seed);
  for (let i = 0; i < cases; i++) check(seed, i, r);
}

describe("SSE relay against eventsource-parser on random streams", () => {
  const fixed = process.env.SSE_RELAY_SEED;
  if (fixed !== undefined) {
    it(`replays seed ${fixed}`, () => runSeed(Number(fixed), 3000));
    return;
  }

  it("dispatches the same events, reads TTFT, usage, [DONE] and errors, and passes every other byte on (fixed seed)", () => {
    runSeed(0x5ee5e, 2000);
  });

  it("does so for a fresh seed each run", (t) => {
    const seed = Math.floor(Math.random() * 2 ** 32);
    t.diagnostic(`seed ${seed} (SSE_RELAY_SEED=${seed} replays it)`);
    runSeed(seed, 1000);
  });
});
