// `tokengate start` (what `npm start` runs): seed 004's support-summary platform on one machine — the
// simulated engines of examples/support-summary/fleet.yaml and the gateway in front of them.

import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { batchesOn } from "../config/batch-settings.js";
import { loadFleetFile, startFleet } from "../sim/fleet.js";
import { parseFlags, UsageError, usageFailure } from "./args.js";
import { startGateway, stateDirOf } from "./gateway.js";
import { describeFleet, waitForSignal } from "./sim.js";

export const START_USAGE = `Usage: tokengate start [dir]

Runs seed 004's support-summary platform on this machine: the simulated engines of <dir>/fleet.yaml and
the gateway in front of them, configured by the other YAML files of <dir> (default: the example in
examples/support-summary/). Stop with Ctrl-C.
`;

export async function runStartCommand(argv: string[]): Promise<number> {
  let args: { help: boolean; dir: string | undefined };
  try {
    const { values, positionals } = parseFlags({
      args: argv,
      allowPositionals: true,
      options: { help: { type: "boolean", short: "h" } },
    });
    if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
    args = { help: values.help === true, dir: positionals[0] };
  } catch (err) {
    return usageFailure("start", err, START_USAGE);
  }
  if (args.help) {
    process.stdout.write(START_USAGE);
    return 0;
  }
  const dir = args.dir ?? fileURLToPath(new URL("../../examples/support-summary/", import.meta.url));
  // The example trusts a local entry service that proves itself with a shared secret; make one up for the demo.
  process.env.TOKENGATE_UPSTREAM_SECRET ??= randomBytes(12).toString("hex");
  const fleet = await startFleet(loadFleetFile(`${dir}/fleet.yaml`));
  const gw = await startGateway(dir, {});
  if (!gw) {
    await fleet.stop();
    return 1;
  }
  process.stderr.write(
    `tokengate: seed 004's support-summary platform from ${dir}\n${describeFleet(fleet)}\n\n` +
      `Gateway: ${gw.url} (route config ${gw.config.version})\n\n` +
      `A live summary (routed to summary-online by rule live-summary-short):\n` +
      `  curl -s ${gw.url}/v1/chat/completions -H 'authorization: Bearer sk-local-support-basic-0001' \\\n` +
      `    -H 'content-type: application/json' -H 'x-ai-task: live_ticket_summary' -H 'x-ai-request-class: interactive' \\\n` +
      `    -d '{"model":"summary-default","messages":[{"role":"user","content":"总结这段客服对话：用户反馈订单未发货。"}],"max_tokens":64}' -D -\n\n` +
      `Why it went there, without sending anything:\n` +
      `  npx tokengate route explain --config ${dir} --task live_ticket_summary --input-tokens 2864\n\n` +
      batchHint(gw.url, batchesOn(gw.config.gateway.batches)) +
      `Metrics:   ${gw.adminUrl}/metrics   (engines: ${fleet.replicas[0]!.url}/metrics)\n` +
      `Endpoints: curl -s ${gw.adminUrl}/admin/endpoints -H "authorization: Bearer ${adminTokenHint(gw, dir)}"\n` +
      `Config:    npx tokengate config history --config ${dir}   (apply, diff, rollback: npx tokengate config --help)\n` +
      `Logs: one JSON line per request on stdout (this terminal). Stop with Ctrl-C.\n`,
  );
  await waitForSignal();
  await gw.stop();
  await fleet.stop();
  return 0;
}

/** Two commands that submit a Batch API job (only when the config turns the API on). */
function batchHint(url: string, on: boolean): string {
  if (!on) return "";
  const line =
    '{"custom_id":"t-1","method":"POST","url":"/v1/chat/completions","body":{"model":"summary-default",' +
    '"messages":[{"role":"user","content":"总结：用户反馈订单未发货。"}],"max_tokens":64}}';
  const key = "-H 'authorization: Bearer sk-local-support-basic-0001'";
  return (
    `A Batch API job (its lines run through summary-batch, class batch; then GET /v1/batches/<id>):\n` +
    `  echo '${line}' > /tmp/tg-in.jsonl\n` +
    `  curl -s ${url}/v1/files ${key} -F purpose=batch -F file=@/tmp/tg-in.jsonl\n` +
    `  curl -s ${url}/v1/batches ${key} -H 'content-type: application/json' \\\n` +
    `    -d '{"input_file_id":"<id from above>","endpoint":"/v1/chat/completions","completion_window":"24h"}'\n\n`
  );
}

/** How the admin token is written in the printed commands: the file it was put in, or its variable. */
function adminTokenHint(
  gw: { adminTokenGenerated: boolean; config: { gateway: { admin: { tokenEnv: string } } } },
  dir: string,
): string {
  return gw.adminTokenGenerated
    ? `$(cat ${stateDirOf(dir)}/admin-token)`
    : `$${gw.config.gateway.admin.tokenEnv}`;
}
