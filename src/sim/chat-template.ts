// Renders OpenAI-style chat messages into the simulated engine's prompt text, a Llama-3-like template
// whose markers the tokenizer turns into one special token each.

import { END_MARKER, START_MARKER } from "./tokenizer.js";

export type ChatContent = string | ReadonlyArray<{ type: string; text?: string }> | null;

export interface ChatMessage {
  role: string;
  content: ChatContent;
}

export interface ChatTemplateOptions {
  /** Append the header of the assistant turn the engine is about to generate (default true). */
  addGenerationPrompt?: boolean;
}

/**
 * `<|start|>role\ncontent<|end|>\n` per message, then `<|start|>assistant\n`.
 * Content is trimmed, as Llama 3's template does; that is also what makes multi-turn prompts share a
 * token prefix: the prompt for turn N+1 starts with the tokens of turn N's prompt followed by the
 * tokens of its (trimmed) reply and the end marker, so the simulator's prefix cache hits like vLLM's.
 * @example renderChatPrompt([{ role: "user", content: "Hi" }]) // "<|start|>user\nHi<|end|>\n<|start|>assistant\n"
 */
export function renderChatPrompt(messages: readonly ChatMessage[], opts: ChatTemplateOptions = {}): string {
  let prompt = "";
  for (const m of messages) {
    prompt += START_MARKER + m.role + "\n" + contentText(m.content).trim() + END_MARKER + "\n";
  }
  if (opts.addGenerationPrompt ?? true) prompt += START_MARKER + "assistant\n";
  return prompt;
}

/** /v1/completions prompts go to the engine as they are. */
export function renderCompletionPrompt(prompt: string): string {
  return prompt;
}

/** Text parts are joined with "\n", as vLLM does; image and audio parts carry no text here. */
function contentText(content: ChatContent): string {
  if (content === null) return "";
  if (typeof content === "string") return content;
  const texts: string[] = [];
  for (const part of content) {
    if (part.type === "text" && typeof part.text === "string") texts.push(part.text);
  }
  return texts.join("\n");
}
