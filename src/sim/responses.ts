// OpenAI response bodies as vLLM writes them: streaming chunks (pre-rendered around each token so the
// hot path is two string concatenations), the usage chunk, and the non-streaming reply.

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

/** Writes the SSE frames of one streamed response. */
export class StreamFrames {
  private readonly head: string;
  private readonly kind: ApiKind;

  constructor(
    kind: ApiKind,
    readonly id: string,
    readonly model: string,
    readonly created: number,
  ) {
    this.kind = kind;
    const object = kind === "chat" ? "chat.completion.chunk" : "text_completion";
    this.head = `data: {"id":"${id}","object":"${object}","created":${created},"model":${JSON.stringify(model)},"choices":[`;
  }

  /** The chat stream opens with the assistant role, as vLLM's does. */
  roleFrame(): string {
    return this.kind === "chat"
      ? `${this.head}{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\n`
      : "";
  }

  tokenFrame(text: string, finishReason: string | null): string {
    const fr = finishReason === null ? "null" : `"${finishReason}"`;
    const t = JSON.stringify(text);
    return this.kind === "chat"
      ? `${this.head}{"index":0,"delta":{"content":${t}},"logprobs":null,"finish_reason":${fr}}]}\n\n`
      : `${this.head}{"index":0,"text":${t},"logprobs":null,"finish_reason":${fr},"stop_reason":null}]}\n\n`;
  }

  usageFrame(usage: Usage): string {
    return `${this.head}],"usage":${JSON.stringify(usage)}}\n\n`;
  }

  static done(): string {
    return "data: [DONE]\n\n";
  }

  /** A failure after the stream started: one error event, so clients raise instead of seeing a clean end. */
  static error(message: string, status: number, type: string): string {
    return `data: ${JSON.stringify({ error: { message, type, param: null, code: status } })}\n\n`;
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
): string {
  if (kind === "chat") {
    return JSON.stringify({
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
  return JSON.stringify({
    id,
    object: "text_completion",
    created,
    model,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason, stop_reason: null }],
    usage,
  });
}
