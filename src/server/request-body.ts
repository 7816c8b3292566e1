// Reading a request body under the configured size limit.

import type { IncomingMessage } from "node:http";
import { GatewayError } from "./gateway-error.js";

/** The whole request body, or request_too_large as soon as it passes the limit. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        req.removeAllListeners("data");
        req.resume();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on("error", reject);
    req.on("close", () => {
      if (!req.complete) reject(new Error("the client disconnected while sending the body"));
    });
  });
}

function tooLarge(limit: number): GatewayError {
  return new GatewayError("request_too_large", `the request body exceeds the limit of ${limit} bytes`, {
    param: "body",
  });
}
