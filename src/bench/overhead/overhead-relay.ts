// The relay benchmark's client: one streaming completion read as raw bytes, counting SSE events (frame
// ends) and reads without parsing them, so the client stays cheaper than the router it measures.

import { type Agent, request } from "undici";

/** What the relay's streams add up to. */
export interface RelayCounter {
  events: number;
  chunks: number;
  streams: number;
  errors: number;
  error: string | null;
}

const FRAME_END = Buffer.from("\n\n");
const DONE = Buffer.from("data: [DONE]");

export async function relayStream(
  url: string,
  body: string,
  agent: Agent,
  counter: RelayCounter,
): Promise<void> {
  const fail = (e: string) => {
    counter.errors++;
    counter.error ??= e;
  };
  try {
    const res = await request(`${url}/v1/chat/completions`, {
      method: "POST",
      dispatcher: agent,
      headers: { "content-type": "application/json" },
      body,
    });
    if (res.statusCode !== 200)
      return fail(`HTTP ${res.statusCode}: ${(await res.body.text()).slice(0, 200)}`);
    let lastByte = 0;
    let tail: Buffer = Buffer.alloc(0);
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      counter.chunks++;
      if (lastByte === 10 && chunk[0] === 10) counter.events++;
      for (let i = chunk.indexOf(FRAME_END); i >= 0; i = chunk.indexOf(FRAME_END, i + 2)) counter.events++;
      lastByte = chunk[chunk.length - 1] ?? lastByte;
      tail =
        chunk.length >= 32 ? chunk.subarray(chunk.length - 32) : Buffer.concat([tail, chunk]).subarray(-32);
    }
    if (tail.indexOf(DONE) < 0) return fail("stream ended without [DONE]");
    counter.streams++;
  } catch (err) {
    fail((err as Error).message);
  }
}
