// How a replica reads JSON request bodies and writes JSON, plain-text and error replies, in its
// framing's JSON style; a handler that throws a SimHttpError becomes vLLM's error reply.

import type http from "node:http";
import { errorObject, SimHttpError } from "./errors.js";
import type { Framing } from "./framing.js";

const JSON_HEADERS = { "content-type": "application/json" };

export function sendJson(res: http.ServerResponse, framing: Framing, status: number, value: unknown): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, JSON_HEADERS).end(framing.json(value));
}

/** A plain-text 200, as vLLM's LoRA routes answer (a bare Response: no content-type header). */
export function sendText(res: http.ServerResponse, text: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(200).end(text);
}

export function sendError(res: http.ServerResponse, framing: Framing, err: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const e = err instanceof SimHttpError ? err : new SimHttpError(500, (err as Error)?.message ?? String(err));
  res
    .writeHead(e.status, { ...JSON_HEADERS, ...e.headers })
    .end(framing.json(errorObject(e.status, e.message, e.param, e.type)));
}

/** Reads the body as JSON (undefined when empty) and runs `fn` on it; 413 past `maxBytes`, 400 if malformed. */
export function withJsonBody(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  framing: Framing,
  maxBytes: number,
  fn: (body: unknown) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  req.on("data", (c: Buffer) => {
    size += c.length;
    if (size > maxBytes) tooLarge = true;
    else chunks.push(c);
  });
  req.on("end", () => {
    if (tooLarge)
      return sendError(res, framing, new SimHttpError(413, `request body exceeds ${maxBytes} bytes`));
    let body: unknown;
    try {
      body = chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch (err) {
      return sendError(res, framing, new SimHttpError(400, `JSON decode error: ${(err as Error).message}`));
    }
    try {
      fn(body);
    } catch (err) {
      sendError(res, framing, err);
    }
  });
  req.on("error", () => res.destroy());
}
