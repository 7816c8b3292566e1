// `tokengate config apply | current | history | diff | rollback | reload`: the config history of a
// running gateway, through its admin API (admin-client.ts for the URL and the token). A refused change
// prints every error (file:line:column and YAML path) and exits 1; nothing changed then.

import type { ConfigError } from "../config/errors.js";
import { formatConfigError } from "../config/errors.js";
import { readConfigTexts } from "../config/yaml-source.js";
import type { ConfigAct } from "../control/config-history.js";
import { type AdminTarget, adminRequest, adminTarget } from "./admin-client.js";
import { type CommandOutput, parseFlags, UsageError } from "./args.js";

export const REMOTE_SUBCOMMANDS = ["apply", "current", "history", "diff", "rollback", "reload"] as const;
export type RemoteSubcommand = (typeof REMOTE_SUBCOMMANDS)[number];

export const REMOTE_USAGE = `       tokengate config apply <file or folder> [--replaces <version>] [--note <text>]
       tokengate config current
       tokengate config history [--limit <n>]
       tokengate config diff <version a> [<version b>]     (b: the version running)
       tokengate config rollback --to <version> [--replaces <version>] [--note <text>]
       tokengate config reload                               (read the gateway's own files again)

These talk to a running gateway's admin API. Every applied version is kept in its config history; an
apply names the version it replaces (default: the one running when the command starts), so two operators
applying at once cannot overwrite each other — the second is refused with the version now running.

Admin options:
  --admin <url>        the admin listener (default http://127.0.0.1:9090)
  --token-file <file>  the admin token (default: $TOKENGATE_ADMIN_TOKEN, else .tokengate/admin-token
                       beside --config <path>, else in the current folder)
  --config <path>      the gateway's config file or folder (to find the token it made)
  --actor <name>       who is acting, for the audit log (default $USER)
`;

interface RemoteArgs {
  readonly sub: RemoteSubcommand;
  readonly positionals: readonly string[];
  readonly target: AdminTarget;
  readonly replaces?: string;
  readonly note?: string;
  readonly to?: string;
  readonly limit?: string;
  readonly actor: string;
}

export function readRemoteArgs(argv: string[]): RemoteArgs {
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    options: {
      admin: { type: "string" },
      "token-file": { type: "string" },
      config: { type: "string" },
      actor: { type: "string" },
      replaces: { type: "string" },
      note: { type: "string" },
      to: { type: "string" },
      limit: { type: "string" },
    },
  });
  const [sub, ...rest] = positionals as [RemoteSubcommand, ...string[]];
  const want = {
    apply: [1, 1],
    current: [0, 0],
    history: [0, 0],
    diff: [1, 2],
    rollback: [0, 0],
    reload: [0, 0],
  }[sub];
  if (rest.length < want[0]! || rest.length > want[1]!) {
    throw new UsageError(
      rest.length < want[0]!
        ? `${sub}: expected ${sub === "apply" ? "a file or folder" : "a version"}`
        : `unexpected argument "${rest[want[1]!]}"`,
    );
  }
  if (sub === "rollback" && !values.to) throw new UsageError("rollback: --to <version> is required");
  const target = adminTarget({ admin: values.admin, tokenFile: values["token-file"], config: values.config });
  return {
    sub,
    positionals: rest,
    target,
    replaces: values.replaces,
    note: values.note,
    to: values.to,
    limit: values.limit,
    actor: values.actor ?? process.env.USER ?? "cli",
  };
}

/** Runs one remote subcommand; the exit status. */
export async function runRemote(a: RemoteArgs, io: CommandOutput): Promise<number> {
  try {
    switch (a.sub) {
      case "current": {
        const r = await adminRequest(a.target, "GET", "/admin/config");
        return print(io, r, (v) => {
          const cur = v.current as Act | null;
          return `${v.version}${cur ? `  (${cur.action} by ${cur.actor} at ${cur.at}${cur.replaced ? `, replaced ${cur.replaced}` : ""})` : ""}\n`;
        });
      }
      case "history": {
        const q = a.limit ? `?limit=${encodeURIComponent(a.limit)}` : "";
        const r = await adminRequest(a.target, "GET", `/admin/config/history${q}`);
        return print(io, r, (v) => (v.acts as Act[]).map(formatAct).join(""));
      }
      case "diff": {
        const [from, to] = a.positionals;
        const q = new URLSearchParams({ from: from!, ...(to ? { to } : {}) });
        const r = await adminRequest(a.target, "GET", `/admin/config/diff?${q}`);
        if (r.status === 200) {
          io.out(r.text === "" ? `no difference\n` : r.text);
          return 0;
        }
        return print(io, r, () => "");
      }
      case "apply": {
        const read = await readConfigTexts(a.positionals[0]!);
        if (read.errors.length > 0) return refusedLocally(io, read.errors);
        const replaces = a.replaces ?? (await runningVersion(a.target));
        const r = await adminRequest(
          a.target,
          "POST",
          "/admin/config",
          { files: read.files, replaces, note: a.note ?? null },
          a.actor,
        );
        return print(io, r, changed);
      }
      case "rollback": {
        const replaces = a.replaces ?? (await runningVersion(a.target));
        const body = { to: a.to, replaces, note: a.note ?? null };
        return print(
          io,
          await adminRequest(a.target, "POST", "/admin/config/rollback", body, a.actor),
          changed,
        );
      }
      case "reload":
        return print(io, await adminRequest(a.target, "POST", "/admin/config/reload", {}, a.actor), changed);
    }
  } catch (err) {
    const cause = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
    io.err(`tokengate config ${a.sub}: no answer from ${a.target.url} (${cause})\n`);
    return 1;
  }
}

/** An act as the admin API sends it (the history's own type, as JSON). */
type Act = ConfigAct;

function formatAct(x: Act): string {
  const note = x.note ? `  "${x.note}"` : "";
  return `${String(x.seq).padStart(4)}  ${x.at}  ${x.action.padEnd(8)} ${x.version}  by ${x.actor}${x.replaced ? `  (replaced ${x.replaced})` : ""}${x.forced ? "  [forced]" : ""}${note}\n`;
}

export function changed(v: Record<string, unknown>): string {
  const act = v.act as Act | null;
  if (v.unchanged) return `unchanged: ${v.version} is already running\n`;
  return `now running ${v.version}${act?.replaced ? ` (replaced ${act.replaced})` : ""}\n`;
}

export async function runningVersion(target: AdminTarget): Promise<string | null> {
  const r = await adminRequest(target, "GET", "/admin/config");
  if (r.status !== 200) throw new Error(`GET /admin/config answered ${r.status}: ${r.text}`);
  return (JSON.parse(r.text) as { version: string }).version;
}

/** Prints a 2xx answer with `ok`, or the error and every config error in it; the exit status. */
export function print(
  io: CommandOutput,
  r: { status: number; text: string },
  ok: (v: Record<string, unknown>) => string,
): number {
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(r.text) as Record<string, unknown>;
  } catch {
    io.err(`the admin API answered ${r.status}: ${r.text}\n`);
    return 1;
  }
  if (r.status >= 200 && r.status < 300) {
    io.out(ok(v));
    return 0;
  }
  const e = (v.error ?? {}) as {
    code?: string;
    message?: string;
    errors?: ConfigError[];
    current_version?: string;
  };
  for (const ce of e.errors ?? []) io.err(`${formatConfigError(ce)}\n`);
  io.err(`refused (${e.code ?? r.status}): ${e.message ?? r.text}\n`);
  return 1;
}

export function refusedLocally(io: CommandOutput, errors: readonly ConfigError[]): number {
  for (const e of errors) io.err(`${formatConfigError(e)}\n`);
  io.err("refused: the files could not be read; nothing was sent\n");
  return 1;
}
