// OpenAI response bodies as vLLM writes them: streaming chunks (pre-rendered around each token so the
// hot path is a few string concatenations), the usage chunk, and the non-streaming reply, in the
// replica's framing (vLLM's by default; see framing.ts).

import { type Framing, VLLM_FRAMING } from "./framing.js";
import type { ApiKind } from "./openai-request.js";

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
}

export function makeUsage(promptTokens: number, completionTokens: number, cachedTokens: number): Usage {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: Math.max(0, cachedTokens) },
  };
}

/** The pieces of a stream's frames that depend only on the framing and the API kind. */
interface FrameParts {
  object: string;
  /** The chat stream's first frame after the head ("" for completions). */
  role: string;
  /** From the choice's start to the token text. */
  tokenOpen: string;
  /** From after the token text to the end of the event, while unfinished. */
  closeNull: string;
  /** The same for a last token, by finish reason. */
  closes: Map<string, string>;
  close: (finishReason: string) => string;
  usageOpen: string;
  usageClose: string;
}

function buildParts(f: Framing, kind: ApiKind): FrameParts {
  const c = f.colon;
  const s = f.comma;
  const end = f.eventEnd;
  const close =
    kind === "chat"
      ? (fr: string) => `}${s}"logprobs"${c}null${s}"finish_reason"${c}${fr}}]}${end}`
      : (fr: string) =>
          `${s}"logprobs"${c}null${s}"finish_reason"${c}${fr}${s}"stop_reason"${c}null}]}${end}`;
  return {
    object: kind === "chat" ? "chat.completion.chunk" : "text_completion",
    role:
      kind === "chat"
        ? `{"index"${c}0${s}"delta"${c}{"role"${c}"assistant"${s}"content"${c}""${close("null")}`
        : "",
    tokenOpen: kind === "chat" ? `{"index"${c}0${s}"delta"${c}{"content"${c}` : `{"index"${c}0${s}"text"${c}`,
    closeNull: close("null"),
    closes: new Map(),
    close,
    usageOpen: `]${s}"usage"${c}`,
    usageClose: `}${end}`,
  };
}

/** Parts per framing and kind, built on a replica's first stream and shared by all its streams. */
const partsCache = new WeakMap<Framing, Record<ApiKind, FrameParts>>();

function partsFor(f: Framing, kind: ApiKind): FrameParts {
  let byKind = partsCache.get(f);
  if (!byKind) {
    byKind = { chat: buildParts(f, "chat"), completion: buildParts(f, "completion") };
    partsCache.set(f, byKind);
  }
  return byKind[kind];
}

/** Writes the SSE frames of one streamed response. */
export class StreamFrames {
  /** `data: {"id":…,"choices":[` for this stream, built once. */
  private readonly head: string;
  private readonly parts: FrameParts;

  constructor(
    kind: ApiKind,
    readonly id: string,
    readonly model: string,
    readonly created: number,
    readonly framing: Framing = VLLM_FRAMING,
  ) {
    const f = framing;
    const c = f.colon;
    const s = f.comma;
    this.parts = partsFor(f, kind);
    this.head =
      `${f.dataPrefix}{"id"${c}${f.str(id)}${s}"object"${c}"${this.parts.object}"${s}` +
      `"created"${c}${created}${s}"model"${c}${f.str(model)}${s}"choices"${c}[`;
  }

  /** The chat stream opens with the assistant role, as vLLM's does. */
  roleFrame(): string {
    return this.parts.role && this.head + this.parts.role;
  }

  tokenFrame(text: string, finishReason: string | null): string {
    const p = this.parts;
    if (finishReason === null) return this.head + p.tokenOpen + this.framing.str(text) + p.closeNull;
    let close = p.closes.get(finishReason);
    if (close === undefined) {
      close = p.close(this.framing.str(finishReason));
      p.closes.set(finishReason, close);
    }
    return this.head + p.tokenOpen + this.framing.str(text) + close;
  }

  usageFrame(usage: Usage): string {
    return this.head + this.parts.usageOpen + this.framing.json(usage) + this.parts.usageClose;
  }

  done(): string {
    return this.framing.done;
  }

  /** A failure after the stream started: one error event, so clients raise instead of seeing a clean end. */
  error(message: string, status: number, type: string): string {
    return this.framing.event(this.framing.json({ error: { message, type, param: null, code: status } }));
  }
}

export function fullResponse(
  kind: ApiKind,
  id: string,
  model: string,
  created: number,
  text: string,
  finishReason: string,
  usage: Usage,
  framing: Framing = VLLM_FRAMING,
): string {
  if (kind === "chat") {
    return framing.json({
      id,
      object: "chat.completion",
      created,
      model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: text, tool_calls: [] },
          logprobs: null,
          finish_reason: finishReason,
          stop_reason: null,
        },
      ],
      usage,
    });
  }
  return framing.json({
    id,
    object: "text_completion",
    created,
    model,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason, stop_reason: null }],
    usage,
  });
}
