// Test fixture: steady streaming load through the official openai client — `n` loops, each sending the
// next stream as soon as the last one ends — and every failure it met (an error, or a stream with no text).

import type OpenAI from "openai";

export interface StreamingLoad {
  /** Stops the loops once their streams end; how many completed and what failed. */
  stop(): Promise<{ done: number; failures: string[] }>;
}

export function streamingLoad(
  client: OpenAI,
  n: number,
  request: { model: string; messages: { role: "user"; content: string }[]; max_tokens: number },
): StreamingLoad {
  const failures: string[] = [];
  let done = 0;
  let stopping = false;
  const loop = async () => {
    while (!stopping) {
      try {
        const s = await client.chat.completions.create({ ...request, stream: true });
        let text = "";
        for await (const c of s) text += c.choices[0]?.delta?.content ?? "";
        if (text === "") failures.push("empty stream");
        done++;
      } catch (err) {
        failures.push(String(err));
      }
    }
  };
  const loops = Array.from({ length: n }, loop);
  return {
    stop: async () => {
      stopping = true;
      await Promise.all(loops);
      return { done, failures };
    },
  };
}
