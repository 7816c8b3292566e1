import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SseRelay } from "./sse-relay.js";

const HEAD = '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[';
const role = `data: ${HEAD}{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`;
const token = (t: string) =>
  `data: ${HEAD}{"index":0,"delta":{"content":${JSON.stringify(t)}},"finish_reason":null}]}\n\n`;
const usageFrame = `data: ${HEAD}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}\n\n`;
const done = "data: [DONE]\n\n";
const vllm = role + token("Hel") + token("lo") + usageFrame + done;

/** Python's json.dumps spacing, CRLF line ends: an sse-starlette server. */
const starlette = (frames: object[]) =>
  frames
    .map((f) => `data: ${JSON.stringify(f).replace(/":/g, '": ').replace(/,"/g, ', "')}\r\n\r\n`)
    .join("") + "data: [DONE]\r\n\r\n";

interface Run {
  relay: SseRelay;
  out: string[];
  events: string[];
  /** `relay.frames` when the first content was reported: the 1-based index of that event. */
  firstContentEvent: number;
}

function run(chunks: (string | Buffer)[], keepUsageFrame = false): Run {
  const events: string[] = [];
  const r: Run = { relay: null as unknown as SseRelay, out: [], events, firstContentEvent: 0 };
  r.relay = new SseRelay(
    keepUsageFrame,
    () => {
      r.firstContentEvent = r.relay.frames;
    },
    (data) => events.push(data),
  );
  for (const c of chunks) r.out.push(r.relay.push(Buffer.isBuffer(c) ? c : Buffer.from(c)).toString());
  r.out.push(r.relay.rest().toString());
  return r;
}

const bytesOf = (s: string, size: number) => {
  const b = Buffer.from(s);
  const out: Buffer[] = [];
  for (let i = 0; i < b.length; i += size) out.push(b.subarray(i, i + size));
  return out;
};

describe("SSE relay", () => {
  it("relays a vLLM stream unchanged, reading TTFT, usage and [DONE]; the usage frame dropped unless asked for", () => {
    const dropped = run([vllm]);
    assert.equal(dropped.out.join(""), role + token("Hel") + token("lo") + done);
    assert.deepEqual(dropped.relay.usage, { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
    assert.equal(dropped.relay.sawDone, true);
    assert.equal(dropped.relay.upstreamError, null);
    assert.equal(dropped.relay.frames, 5);
    assert.equal(dropped.firstContentEvent, 2, "the role frame (content '') is not the first token");
    assert.ok(!Number.isNaN(dropped.relay.firstContentAt));

    const kept = run([vllm], true);
    assert.equal(kept.out.join(""), vllm);
    assert.deepEqual(kept.relay.usage, dropped.relay.usage);
  });

  it("writes each complete frame as its chunk arrives, the chunk itself when nothing is dropped", () => {
    const relay = new SseRelay(false);
    const chunk = Buffer.from(role + token("a"));
    assert.equal(relay.push(chunk), chunk);
    assert.equal(relay.push(Buffer.from('data: {"choices":[{"delta":{"content":"b"}}]}')).length, 0);
    assert.equal(
      relay.push(Buffer.from("\n\ndata: x")).toString(),
      'data: {"choices":[{"delta":{"content":"b"}}]}\n\n',
    );
    assert.equal(relay.rest().toString(), "data: x");
  });

  it("relays a CRLF stream (sse-starlette) frame by frame, with Python's JSON spacing", () => {
    const frames = [
      { id: "c", choices: [{ index: 0, delta: { role: "assistant", content: "" } }] },
      { id: "c", choices: [{ index: 0, delta: { content: "Hi" } }] },
      { id: "c", choices: [], usage: { prompt_tokens: 3, completion_tokens: 1 } },
    ];
    const stream = starlette(frames);
    assert.ok(stream.includes('"usage": {"prompt_tokens": 3'));
    const parts = stream.split(/(?<=\r\n\r\n)/);
    const r = run(parts);
    assert.deepEqual(r.out.slice(0, 2), parts.slice(0, 2), "each frame goes out with its own chunk");
    assert.equal(r.out[2], "", "the usage frame is dropped");
    assert.equal(r.out.join(""), parts[0]! + parts[1]! + parts[3]!);
    assert.deepEqual(r.relay.usage, { prompt_tokens: 3, completion_tokens: 1 });
    assert.equal(r.firstContentEvent, 2);
    assert.equal(r.relay.sawDone, true);
  });

  it("takes a CRLF split between chunks as one line end, dropping its LF with a dropped frame", () => {
    const stream = `data: {"choices":[],"usage":{"prompt_tokens":1}}\r\n\r\ndata: [DONE]\r\n\r\n`;
    const cr = stream.indexOf("\r\n\r\n") + 3;
    const dropped = run([stream.slice(0, cr), stream.slice(cr)]);
    assert.deepEqual(dropped.out, ["", "data: [DONE]\r\n\r\n", ""]);
    assert.deepEqual(dropped.relay.usage, { prompt_tokens: 1 });
    assert.equal(dropped.relay.sawDone, true);
    assert.equal(dropped.relay.frames, 2);

    const kept = run([stream.slice(0, cr), stream.slice(cr)], true);
    assert.deepEqual(kept.out, [stream.slice(0, cr), stream.slice(cr), ""], "the frame goes out at its CR");

    const byByte = run(bytesOf(stream, 1));
    assert.equal(byByte.out.join(""), "data: [DONE]\r\n\r\n");
    assert.deepEqual(byByte.events, ['{"choices":[],"usage":{"prompt_tokens":1}}', "[DONE]"]);
  });

  it("reads CR-only line ends, dispatching at the CR without waiting for the next chunk", () => {
    const r = run(["data: [DONE]\r\r"]);
    assert.equal(r.relay.sawDone, true);
    assert.deepEqual(r.out, ["data: [DONE]\r\r", ""]);
  });

  it("reads every legal line shape: no space after data:, comments, event/id/retry, multi-line data, a BOM", () => {
    const pretty = JSON.stringify(
      { choices: [], usage: { prompt_tokens: 9, completion_tokens: 4 } },
      null,
      2,
    ).split("\n");
    const stream =
      '\uFEFFdata:{"choices":[{"delta":{"content":"x"}}]}\nevent: message\nid: 1\nretry: 1000\n\n' +
      ": hello\n\n" +
      ": ping - 2024-01-01\r\n\r\n" +
      `${pretty.map((l) => `data: ${l}`).join("\n")}\n\n` +
      "data\n\n" +
      "data:[DONE]\n\n";
    for (const size of [1, 2, 7, stream.length]) {
      const r = run(bytesOf(stream, size));
      assert.deepEqual(r.events, [
        '{"choices":[{"delta":{"content":"x"}}]}',
        pretty.join("\n"),
        "",
        "[DONE]",
      ]);
      assert.equal(r.firstContentEvent, 1);
      assert.deepEqual(r.relay.usage, { prompt_tokens: 9, completion_tokens: 4 });
      assert.equal(r.relay.sawDone, true);
      const usageStart = Buffer.byteLength(stream.slice(0, stream.indexOf("data: {\n")));
      const usageEnd = Buffer.byteLength(stream.slice(0, stream.indexOf("data\n\n")));
      const bytes = Buffer.from(stream);
      assert.equal(
        r.out.join(""),
        Buffer.concat([bytes.subarray(0, usageStart), bytes.subarray(usageEnd)]).toString(),
        `chunks of ${size}`,
      );
    }
  });

  it("leaves a BOM in place when the first event is dropped", () => {
    const stream = '\uFEFFdata: {"choices": [], "usage": {"prompt_tokens": 1}}\n\ndata: [DONE]\n\n';
    assert.equal(run([stream]).out.join(""), "\uFEFFdata: [DONE]\n\n");
  });

  it("does not dispatch an unterminated last event, and passes its bytes on at the end", () => {
    const r = run([`${role}${token("a")}data: [DONE]\n`]);
    assert.equal(r.relay.sawDone, false);
    assert.equal(r.relay.frames, 2);
    assert.deepEqual(r.out, [role + token("a"), "data: [DONE]\n"]);
  });

  it("keeps an engine's error event as the JSON text of its data", () => {
    const error = '{"error": {"message": "engine died", "type": "server_error", "code": 500}}';
    const r = run([`${role}${token("error")}data:${error}\r\n\r\n`]);
    assert.equal(r.relay.upstreamError, error);
    assert.equal(r.firstContentEvent, 2);

    const notErrors = run([
      token("error") +
        'data: {"choices":[{"delta":{"content":"\\"error\\": 1"}}]}\n\n' +
        'data: {"error": null}\n\n' +
        'data: {"id": "c", "error": {"message": "not the first key"}}\n\n',
    ]);
    assert.equal(notErrors.relay.upstreamError, null);
  });

  it("takes only a choice's non-empty delta.content or text as the first token", () => {
    const frames = [
      'data: {"choices":[{"delta":{"role":"assistant","content": ""}}]}\n\n',
      'data: {"choices":[{"delta":{"content":null,"tool_calls":[]}}]}\n\n',
      'data: {"choices":[{"delta":{"reasoning_content":"thinking"}}]}\n\n',
      'data: {"choices":[{"delta":{}}],"usage":null,"content":"top-level"}\n\n',
      'data: {"choices":[{"delta":{"content" :\t"\\n"}}]}\n\n',
    ];
    assert.equal(run([frames.join("")]).firstContentEvent, 5);
    const completion =
      'data: {"choices":[{"text":""}]}\n\ndata: {"choices": [{"index": 0, "text": "a"}]}\n\n';
    assert.equal(run([completion]).firstContentEvent, 2);
  });

  it("takes only the usage frame with empty choices as usage: not usage: null, nor continuous usage stats", () => {
    const stats =
      'data: {"choices":[{"delta":{"content":"a"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}\n\n';
    const nulls = 'data: {"choices":[{"delta":{"content":"b"}}],"usage": null}\n\n';
    const r = run([stats + nulls + done]);
    assert.equal(r.out.join(""), stats + nulls + done);
    assert.equal(r.relay.usage, null);
  });

  it("drops a usage frame whose counts are garbage all the same, leaving the usage unknown", () => {
    const bad = `data: ${HEAD}],"usage":{"prompt_tokens":-5,"completion_tokens":1e999}}\n\n`;
    const r = run([role + token("a") + bad + done]);
    assert.equal(r.out.join(""), role + token("a") + done);
    assert.equal(r.relay.usage, null);
  });
});
