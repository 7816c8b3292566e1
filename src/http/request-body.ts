// Reading a request body under the configured size limit and deadline.

import type { IncomingMessage } from "node:http";
import { GatewayError } from "../errors/gateway-error.js";

export interface BodyLimits {
  readonly maxBodyBytes: number;
  /** From the start of reading (the headers are in) to the body's last byte. */
  readonly bodyReadMs: number;
}

/**
 * The whole request body; request_too_large as soon as it passes the limit, request_timeout when it
 * has not all arrived within the deadline (a client trickling its body would otherwise hold a
 * connection and its buffers for as long as it likes: the server's own request timeout is off, as it
 * would also cut long streamed replies' connections).
 */
export function readBody(req: IncomingMessage, limits: BodyLimits): Promise<Buffer> {
  const { maxBodyBytes: limit, bodyReadMs } = limits;
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (err: GatewayError) => {
      clearTimeout(timer);
      req.removeAllListeners("data");
      req.resume();
      reject(err);
    };
    const timer = setTimeout(
      () =>
        stop(
          new GatewayError(
            "request_timeout",
            `the request body did not arrive within limits.bodyReadMs (${bodyReadMs} ms): ${size} bytes came`,
            { param: "body" },
          ),
        ),
      bodyReadMs,
    );
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        stop(tooLarge(limit));
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => {
      clearTimeout(timer);
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    req.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.on("close", () => {
      clearTimeout(timer);
      if (!req.complete) reject(new Error("the client disconnected while sending the body"));
    });
  });
}

function tooLarge(limit: number): GatewayError {
  return new GatewayError("request_too_large", `the request body exceeds the limit of ${limit} bytes`, {
    param: "body",
  });
}
