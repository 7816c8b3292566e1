// `tokengate rollout report | promote`: seed 004's rollout stages on a running gateway, through its
// admin API. `report` prints the stage in force, per pool, and each of its gates with the figure measured
// and pass or fail; `promote <path>` applies the next stage's config only when those gates pass
// (`--force` applies it anyway, and the config history marks the act as forced).

import { readConfigTexts } from "../config/yaml-source.js";
import type { Gate, RolloutReport } from "../control/rollout-gates.js";
import { type AdminTarget, adminRequest, adminTarget } from "./admin-client.js";
import { type CommandOutput, parseFlags, processOutput, UsageError, usageFailure } from "./args.js";
import { changed, print, refusedLocally, runningVersion } from "./config-remote.js";

export const ROLLOUT_USAGE = `Usage: tokengate rollout report [--json]
       tokengate rollout promote <file or folder> [--force] [--replaces <version>] [--note <text>]

report   the rollout stage running (spec.rollout), each pool's stage, and the current stage's gates:
         shadow-label — labelled requests >= 95%, token-estimate P90 error < 18%, unknown tasks < 1%;
         canary — canary requests failed <= 1%, canary TTFT P95 <= 1800 ms (spec.rollout.gates).
         Exit status 0 when every gate passes, 1 otherwise.
promote  apply the next stage's config (a pool moves on, or the canary grows) if the gates pass;
         --force applies it anyway and the history says so.

Admin options:
  --admin <url>        the admin listener (default http://127.0.0.1:9090)
  --token-file <file>  the admin token (default: $TOKENGATE_ADMIN_TOKEN, else .tokengate/admin-token
                       beside --config <path>, else in the current folder)
  --config <path>      the gateway's config file or folder (to find the token it made)
  --actor <name>       who is acting, for the audit log (default $USER)
`;

interface RolloutArgs {
  readonly sub: "report" | "promote";
  readonly path: string | null;
  readonly target: AdminTarget;
  readonly force: boolean;
  readonly json: boolean;
  readonly replaces?: string;
  readonly note?: string;
  readonly actor: string;
}

export async function runRolloutCommand(argv: string[], io: CommandOutput = processOutput): Promise<number> {
  let a: RolloutArgs | "help";
  try {
    a = parse(argv);
  } catch (err) {
    return usageFailure("rollout", err, ROLLOUT_USAGE, io);
  }
  if (a === "help") {
    io.out(ROLLOUT_USAGE);
    return 0;
  }
  try {
    return a.sub === "report" ? await report(a, io) : await promote(a, io);
  } catch (err) {
    const cause = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
    io.err(`tokengate rollout ${a.sub}: no answer from ${a.target.url} (${cause})\n`);
    return 1;
  }
}

function parse(argv: string[]): RolloutArgs | "help" {
  if (argv.includes("--help") || argv.includes("-h")) return "help";
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
      force: { type: "boolean" },
      json: { type: "boolean" },
    },
  });
  const [sub, path, ...extra] = positionals;
  if (sub !== "report" && sub !== "promote") {
    throw new UsageError(sub === undefined ? "expected report or promote" : `unknown subcommand "${sub}"`);
  }
  if (sub === "promote" && path === undefined)
    throw new UsageError("promote: expected the next stage's file or folder");
  const unexpected = sub === "report" ? path : extra[0];
  if (unexpected !== undefined) throw new UsageError(`unexpected argument "${unexpected}"`);
  return {
    sub,
    path: path ?? null,
    target: adminTarget({ admin: values.admin, tokenFile: values["token-file"], config: values.config }),
    force: values.force === true,
    json: values.json === true,
    replaces: values.replaces,
    note: values.note,
    actor: values.actor ?? process.env.USER ?? "cli",
  };
}

async function report(a: RolloutArgs, io: CommandOutput): Promise<number> {
  const r = await adminRequest(a.target, "GET", "/admin/rollout");
  if (r.status !== 200) return print(io, r, () => "");
  const v = JSON.parse(r.text) as RolloutView;
  if (a.json) io.out(`${JSON.stringify(v, null, 2)}\n`);
  else io.out(formatView(v));
  return v.report.pass ? 0 : 1;
}

async function promote(a: RolloutArgs, io: CommandOutput): Promise<number> {
  const read = await readConfigTexts(a.path!);
  if (read.errors.length > 0) return refusedLocally(io, read.errors);
  const replaces = a.replaces ?? (await runningVersion(a.target));
  const body = { files: read.files, replaces, note: a.note ?? null, force: a.force };
  const r = await adminRequest(a.target, "POST", "/admin/rollout/promote", body, a.actor);
  if (r.status === 409) {
    const e = (JSON.parse(r.text) as { error?: { code?: string; report?: RolloutReport } }).error;
    if (e?.code === "rollout_gates_failed" && e.report) io.err(formatGates(e.report.gates));
  }
  return print(
    io,
    r,
    (v) =>
      `${changed(v).trimEnd()}${(v.act as { forced?: boolean } | null)?.forced ? " [forced past failed gates]" : ""}\n`,
  );
}

interface RolloutView {
  version: string;
  global_mode: string;
  legacy: string | null;
  stage: string | null;
  pools: Record<string, string>;
  canary: { route_to: string; percent: number; sticky_by: string } | null;
  report: RolloutReport;
}

export function formatView(v: RolloutView): string {
  const lines = [
    `config ${v.version}: ${v.stage === null ? "no rollout (every request routed)" : `stage ${v.stage}`}`,
  ];
  if (v.global_mode === "legacy_passthrough")
    lines.push(`globalMode legacy_passthrough: every request goes to ${v.legacy}`);
  if (v.legacy) lines.push(`legacy service: ${v.legacy}`);
  for (const [pool, stage] of Object.entries(v.pools)) lines.push(`  pool ${pool}: ${stage}`);
  if (v.canary)
    lines.push(`canary: ${v.canary.percent}% of ${v.canary.route_to}, sticky by ${v.canary.sticky_by}`);
  const s = v.report.sides;
  lines.push(
    `since ${v.report.since}: ${v.report.requests} requests — legacy ${s.legacy.requests} (${s.legacy.failed} failed), canary ${s.canary.requests} (${s.canary.failed} failed), routed ${s.routed.requests} (${s.routed.failed} failed)`,
  );
  const out = `${lines.join("\n")}\n`;
  if (v.report.gates.length === 0) return `${out}no gates for this stage\n`;
  return `${out}${formatGates(v.report.gates)}${v.report.pass ? "every gate passes: ready to promote\n" : "not ready to promote\n"}`;
}

function formatGates(gates: readonly Gate[]): string {
  return gates
    .map((g) => {
      const value =
        g.value === null ? "none" : Number.isInteger(g.value) ? String(g.value) : g.value.toFixed(4);
      return `  ${g.pass ? "PASS" : "FAIL"}  ${g.name.padEnd(26)} ${value.padStart(10)}  (${g.threshold})  ${g.detail}\n`;
    })
    .join("");
}
