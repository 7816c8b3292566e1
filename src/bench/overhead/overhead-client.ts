// The overhead benchmark's client for its fixed-rate and throughput runs: the lean client
// (lean-client.ts) by default, or the undici-based one with TOKENGATE_BENCH_CLIENT=undici (to compare
// the two, or to rule the lean one out when a figure looks wrong). Every path gets the same client.

import { LeanClient } from "../traffic/lean-client.js";
import { timedRequest } from "../traffic/load.js";
import { makeAgent, streamCompletion } from "../traffic/stream-client.js";

export type ClientKind = "lean" | "undici";

export interface FixedRateResult {
  error: string | null;
  /** Send to the last byte. */
  ms: number;
  /** Streams: send to the first frame with generated text. */
  ttftMs: number;
  e2eMs: number;
  contentFrames: number;
}

export interface FixedRateClient {
  /** Sends `body` (a chat completion) to the path's URL for `seq` (round robin over its URLs). */
  send(seq: number, body: string, stream: boolean): Promise<FixedRateResult>;
  close(): Promise<void>;
}

export const CLIENT_KIND: ClientKind = process.env.TOKENGATE_BENCH_CLIENT === "undici" ? "undici" : "lean";

const PATH = "/v1/chat/completions";

/** One client per path: `connections` keep-alive connections per URL. */
export function fixedRateClient(urls: string[], connections: number): FixedRateClient {
  if (CLIENT_KIND === "lean") {
    const clients = urls.map((u) => new LeanClient(u, connections));
    return {
      send: (seq, body, stream) => clients[seq % clients.length]!.post(PATH, body, stream),
      close: async () => {
        await Promise.all(clients.map((c) => c.close()));
      },
    };
  }
  const agent = makeAgent(connections);
  return {
    async send(seq, body, stream) {
      const url = urls[seq % urls.length]!;
      if (stream) {
        const r = await streamCompletion(url, JSON.parse(body) as Record<string, unknown>, { agent });
        return {
          error: r.error,
          ms: r.e2eMs,
          ttftMs: r.ttftMs,
          e2eMs: r.e2eMs,
          contentFrames: r.contentFrames,
        };
      }
      const r = await timedRequest(`${url}${PATH}`, body, agent);
      return { error: r.error, ms: r.ms, ttftMs: Number.NaN, e2eMs: r.ms, contentFrames: 0 };
    },
    close: () => agent.close(),
  };
}
