// How the CLI reaches a running gateway's admin API: its URL (`--admin`, default the admin listener's
// default address) and the admin token (`--token-file`, else $TOKENGATE_ADMIN_TOKEN, else the token a
// gateway made in `.tokengate/admin-token` beside the config given with `--config`, or in the current
// folder's `.tokengate/`).

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_PORT, ADMIN_TOKEN_ENV } from "../config/gateway-settings.js";
import { UsageError } from "./args.js";
import { stateDirOf } from "./gateway.js";

export const DEFAULT_ADMIN_URL = `http://127.0.0.1:${ADMIN_PORT}`;

export interface AdminTarget {
  readonly url: string;
  readonly token: string;
}

/** The admin URL and token from the flags and the environment; a missing token is a usage error. */
export function adminTarget(
  flags: { admin?: string; tokenFile?: string; config?: string },
  env: Readonly<Record<string, string | undefined>> = process.env,
): AdminTarget {
  const url = (flags.admin ?? DEFAULT_ADMIN_URL).replace(/\/$/, "");
  const candidates = [
    flags.tokenFile,
    flags.config ? join(stateDirOf(flags.config), "admin-token") : undefined,
    join(".tokengate", "admin-token"),
  ];
  if (flags.tokenFile === undefined && env[ADMIN_TOKEN_ENV]) return { url, token: env[ADMIN_TOKEN_ENV] };
  for (const f of candidates) {
    if (f === undefined) continue;
    if (!existsSync(f)) {
      if (f === flags.tokenFile) throw new UsageError(`--token-file: ${f} does not exist`);
      continue;
    }
    return { url, token: readFileSync(f, "utf8").trim() };
  }
  throw new UsageError(
    `no admin token: set ${ADMIN_TOKEN_ENV}, or give --token-file (a gateway that made its own writes it to .tokengate/admin-token beside its config)`,
  );
}

/** A request to the admin API with the token; resolves with the status and the body's text. */
export async function adminRequest(
  target: AdminTarget,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
  actor?: string,
): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { authorization: `Bearer ${target.token}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (actor) headers["x-ai-actor"] = actor;
  const res = await fetch(`${target.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}
