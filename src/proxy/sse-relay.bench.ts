// Micro-benchmark of the SSE relay (not run by `npm test`; figures, never assertions):
// `node dist/proxy/sse-relay.bench.js [other-relay.js]` pushes whole chat streams (a role frame, 256
// token frames, the usage frame, [DONE]) through the relay, in chunks of 1 and of 8 frames, as vLLM
// writes them (LF, compact JSON) and as an sse-starlette server with Python's json.dumps does (CRLF,
// `"key": value`), and as a reasoning model's stream is (every token a `reasoning_content` delta, the
// answer's one token last: the first-content search runs on every frame), and prints the relay's CPU
// time per frame. Given the path of another compiled module
// exporting an SseRelay with the same constructor and push()/rest() (an older version, say), it times
// that one too, alternately with this one, on the same chunks.

import { pathToFileURL } from "node:url";
import { SseRelay } from "./sse-relay.js";

interface Relay {
  push(chunk: Buffer): Buffer;
  rest(): Buffer;
  firstContentAt: number;
  usage: unknown;
  sawDone: boolean;
}
type RelayClass = new (keepUsageFrame: boolean, onFirstContent: (() => void) | null) => Relay;

const TOKENS = 256;
const WORDS = " the of and to in is that for it as was with be by on not he this are or his".split(" ");

/** Python's json.dumps: ", " and ": " separators. */
function python(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(python).join(", ")}]`;
  if (v !== null && typeof v === "object")
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}: ${python(x)}`)
      .join(", ")}}`;
  return JSON.stringify(v);
}

type Shape = "vllm" | "starlette" | "reasoning";
const SHAPES: Record<Shape, string> = {
  vllm: "LF, compact JSON (vLLM)",
  starlette: "CRLF, Python JSON spacing (sse-starlette)",
  reasoning: "LF, compact JSON, reasoning deltas before the one content token",
};

/** The frames of one chat stream, vLLM's shape; starlette: CRLF line ends and json.dumps spacing. */
function frames(shape: Shape): string[] {
  const crlfPython = shape === "starlette";
  const head = {
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1733000000,
    model: "m",
  };
  const encode = crlfPython ? python : JSON.stringify;
  const eol = crlfPython ? "\r\n" : "\n";
  const frame = (v: unknown) => `data: ${encode(v)}${eol}${eol}`;
  const out = [
    frame({
      ...head,
      choices: [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }],
    }),
  ];
  for (let i = 0; i < TOKENS; i++) {
    const content = ` ${WORDS[(i * 7) % WORDS.length]}`;
    const finish = i === TOKENS - 1 ? "stop" : null;
    const delta = shape === "reasoning" && i < TOKENS - 1 ? { reasoning_content: content } : { content };
    out.push(frame({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] }));
  }
  const usage = { prompt_tokens: 812, total_tokens: 812 + TOKENS, completion_tokens: TOKENS };
  out.push(
    frame({ ...head, choices: [], usage: { ...usage, prompt_tokens_details: { cached_tokens: 512 } } }),
  );
  out.push(`data: [DONE]${eol}${eol}`);
  return out;
}

function chunked(fs: string[], perChunk: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < fs.length; i += perChunk) out.push(Buffer.from(fs.slice(i, i + perChunk).join("")));
  return out;
}

let sink = 0;

/** Streams through a fresh relay each, for about `ms`; ns per frame. */
function time(Relay: RelayClass, chunks: Buffer[], frameCount: number, ms: number): number {
  let streams = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let k = 0; k < 20; k++) {
      const relay = new Relay(false, null);
      for (const c of chunks) sink += relay.push(c).length;
      sink += relay.rest().length;
      streams++;
    }
    now = performance.now();
  }
  return ((now - start) * 1e6) / (streams * frameCount);
}

/** What a relay made of one stream: TTFT seen, usage read, [DONE] seen, bytes out. */
function outcome(Relay: RelayClass, chunks: Buffer[]): string {
  const relay = new Relay(false, null);
  let bytes = 0;
  for (const c of chunks) bytes += relay.push(c).length;
  bytes += relay.rest().length;
  const usage = relay.usage === null ? "no usage" : "usage";
  return `${Number.isNaN(relay.firstContentAt) ? "no TTFT" : "TTFT"}, ${usage}, ${relay.sawDone ? "[DONE]" : "no [DONE]"}, ${bytes} B out`;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const relays: [string, RelayClass][] = [["this relay", SseRelay]];
  const other = process.argv[2];
  if (other) {
    const mod = (await import(pathToFileURL(other).href)) as { SseRelay: RelayClass };
    relays.push([other, mod.SseRelay]);
  }
  const rounds = 5;
  for (const shape of Object.keys(SHAPES) as Shape[]) {
    const fs = frames(shape);
    const bytes = fs.reduce((s, f) => s + Buffer.byteLength(f), 0);
    const name = SHAPES[shape];
    process.stdout.write(
      `${name}: ${fs.length} frames, ${Math.round(bytes / fs.length)} bytes a frame on average\n`,
    );
    for (const perChunk of [1, 8]) {
      const chunks = chunked(fs, perChunk);
      const ns = relays.map(() => [] as number[]);
      for (const [, R] of relays) time(R, chunks, fs.length, 200); // warm-up
      for (let round = 0; round < rounds; round++)
        relays.forEach(([, R], i) => {
          ns[i]!.push(time(R, chunks, fs.length, 300));
        });
      relays.forEach(([label, R], i) => {
        const n = ns[i]!;
        process.stdout.write(
          `  ${perChunk} frame${perChunk > 1 ? "s" : ""} a chunk, ${label}: ${median(n).toFixed(0)} ns/frame ` +
            `(rounds ${Math.min(...n).toFixed(0)}–${Math.max(...n).toFixed(0)}); ${outcome(R, chunks)}\n`,
        );
      });
    }
  }
  if (sink === 0) process.stdout.write("\n");
}

if (process.argv[1]?.endsWith("sse-relay.bench.js")) await main();
