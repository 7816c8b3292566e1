// `tokengate start` (what `npm start` runs): seed 004's support-summary platform on one machine — the
// simulated engines of examples/support-summary/fleet.yaml and the gateway in front of them.

import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { loadFleetFile, startFleet } from "../sim/fleet.js";
import { startGateway } from "./gateway.js";
import { describeFleet, waitForSignal } from "./sim.js";

export async function runStartCommand(argv: string[]): Promise<number> {
  const dir = argv[0] ?? fileURLToPath(new URL("../../examples/support-summary/", import.meta.url));
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
      `Metrics:   ${gw.adminUrl}/metrics   (engines: ${fleet.replicas[0]!.url}/metrics)\n` +
      `Endpoints: ${gw.adminUrl}/admin/endpoints\n` +
      `Logs: one JSON line per request on stdout (this terminal). Stop with Ctrl-C.\n`,
  );
  await waitForSignal();
  await gw.stop();
  await fleet.stop();
  return 0;
}
