// The admin surface's JSON in and out. A request's body: at most ADMIN_BODY_LIMIT bytes (413 past it, nothing read further into
// memory), an object (400 otherwise); the handler's GatewayError, or any other failure, answers as an
// error in the OpenAI shape.

import type http from "node:http";
import { GatewayError, sendBody } from "../errors/gateway-error.js";

export function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  sendBody(res, status, { "content-type": "application/json" }, JSON.stringify(value));
}

/** Admin request bodies are configs, not prompts: 8 MiB is far past any real one. */
export const ADMIN_BODY_LIMIT = 8 * 1024 * 1024;

export function readAdminJson(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  handle: (body: Record<string, unknown>) => Promise<void>,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  req.on("data", (c: Buffer) => {
    size += c.length;
    if (size > ADMIN_BODY_LIMIT) over = true;
    else chunks.push(c);
  });
  req.on("end", () => {
    if (over) {
      new GatewayError(
        "request_too_large",
        `admin request bodies are limited to ${ADMIN_BODY_LIMIT} bytes`,
      ).send(res, "none");
      return;
    }
    let body: unknown;
    try {
      body = chunks.length === 0 ? {} : JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch (err) {
      new GatewayError("invalid_json", `the body is not JSON: ${(err as Error).message}`).send(res, "none");
      return;
    }
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      new GatewayError("invalid_request", "the body must be a JSON object").send(res, "none");
      return;
    }
    handle(body as Record<string, unknown>).catch((err: unknown) => {
      const e =
        err instanceof GatewayError
          ? err
          : new GatewayError("internal_error", (err as Error).message ?? String(err));
      if (!res.headersSent) e.send(res, "none");
    });
  });
}
