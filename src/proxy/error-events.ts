// What a stream's client is told when its stream cannot go on: SSE error events in the OpenAI error
// shape, which the official clients raise.

/** At most this much of an engine's refusal is quoted when it is not JSON. */
const DETAIL_BYTES = 2000;

/**
 * An engine's refusal (4xx) as an SSE error event: its own `error` object (or its top-level one, as
 * older vLLM sends) with the trace id, or its text as the message when it is not JSON.
 */
export function refusalEvent(status: number, body: Buffer, traceId: string): string {
  let error: Record<string, unknown> | null = null;
  try {
    const parsed = JSON.parse(body.toString("utf8")) as unknown;
    if (parsed !== null && typeof parsed === "object") {
      const inner = (parsed as { error?: unknown }).error;
      error = inner !== null && typeof inner === "object" ? { ...inner } : { ...parsed };
      delete error.object;
    }
  } catch {
    // not JSON: the text is the message
  }
  if (!error || typeof error.message !== "string")
    error = { ...error, message: body.toString("utf8", 0, DETAIL_BYTES) || `HTTP ${status}` };
  return `data: ${JSON.stringify({ error: { type: "invalid_request_error", param: null, code: status, ...error, trace_id: traceId } })}\n\n`;
}

export function errorEvent(message: string, traceId: string): string {
  return `data: ${JSON.stringify({
    error: { message, type: "server_error", param: null, code: "upstream_error", trace_id: traceId },
  })}\n\n`;
}
