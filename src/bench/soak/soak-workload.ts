// The soak benchmark's requests: chat completions, most of them streamed, a system prompt from a small
// set (shared prefixes, as real traffic has) and a user message of its own (new prompt blocks all the
// time, so whatever the gateway keeps per prefix keeps meeting new ones), outputs of 16–256 tokens, and
// a few requests cancelled by the client on purpose: streams after a random number of text frames,
// non-streaming requests after a random delay, most of them before their reply. Seeded.

import { lognormalInt, type Random, randomStream, uniformInt } from "../workload/distributions.js";
import { generatedText } from "../workload/generated-text.js";
import type { SoakRequest } from "./soak-client.js";

export interface SoakMix {
  model: string;
  /** Share of requests streamed. */
  streamShare: number;
  /** Share of streams the client aborts at a random text frame. */
  streamCancelShare: number;
  /** Share of non-streaming requests the client aborts after a random delay. */
  replyCancelShare: number;
  /** A non-streaming cancel fires after a delay uniform in [1, this] ms. */
  replyCancelMaxMs: number;
  maxTokens: { min: number; max: number };
  userTokens: { median: number; sigma: number; min: number; max: number };
  /** Token lengths of the shared system prompts (one prompt per entry; 0: none). */
  systemPromptTokens: readonly number[];
}

export const SOAK_MIX: SoakMix = {
  model: "m",
  streamShare: 0.7,
  streamCancelShare: 0.04,
  replyCancelShare: 0.04,
  replyCancelMaxMs: 1500,
  maxTokens: { min: 16, max: 256 },
  userTokens: { median: 200, sigma: 0.8, min: 32, max: 1500 },
  systemPromptTokens: [0, 64, 128, 256, 256, 512, 512, 768, 1024, 1024, 1536, 2048],
};

/** Characters per token of the generated English text (the simulator's tokenizer: about 4). */
const CHARS_PER_TOKEN = 4;

export interface SoakWorkload {
  next(seq: number): SoakRequest;
  readonly mix: SoakMix;
}

/** Deterministic for (mix, seed): the same seq numbers give the same requests. */
export function soakWorkload(mix: SoakMix, seed: number): SoakWorkload {
  const systems = mix.systemPromptTokens.map((t, i) => (t > 0 ? generatedText("en", t, 9000 + i) : ""));
  const corpus = generatedText("en", 2 * mix.userTokens.max + 512, 4242);
  const kind: Random = randomStream(seed, "soak-kind");
  const sizes: Random = randomStream(seed, "soak-sizes");
  const cancels: Random = randomStream(seed, "soak-cancels");
  return {
    mix,
    next(seq: number): SoakRequest {
      const stream = kind() < mix.streamShare;
      const system = systems[Math.floor(sizes() * systems.length)]!;
      const userTokens = lognormalInt(sizes, mix.userTokens);
      const chars = userTokens * CHARS_PER_TOKEN;
      const from = Math.floor(sizes() * Math.max(1, corpus.length - chars));
      // The seq first: every user message starts a prompt block no other request has.
      const user = `Request ${seq}. ${corpus.slice(from, from + chars)}`;
      const maxTokens = uniformInt(sizes, mix.maxTokens.min, mix.maxTokens.max);
      const draw = cancels();
      const at = cancels();
      let cancel: SoakRequest["cancel"] = null;
      if (stream && draw < mix.streamCancelShare)
        cancel = { afterFrames: 1 + Math.floor(at * Math.max(1, maxTokens - 1)) };
      else if (!stream && draw < mix.replyCancelShare)
        cancel = { afterMs: 1 + Math.floor(at * mix.replyCancelMaxMs) };
      const messages = system
        ? [
            { role: "system", content: system },
            { role: "user", content: user },
          ]
        : [{ role: "user", content: user }];
      return {
        seq,
        stream,
        cancel,
        body: { model: mix.model, messages, max_tokens: maxTokens, ignore_eos: true },
      };
    },
  };
}
