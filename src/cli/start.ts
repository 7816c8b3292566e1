// `tokengate start` (what `npm start` runs): the example platform on one machine. For now the simulated
// engines of examples/support-summary; the gateway joins them in front when it exists.

import { fileURLToPath } from "node:url";
import { loadFleetFile, startFleet } from "../sim/fleet.js";
import { describeFleet, waitForSignal } from "./sim.js";

export async function runStartCommand(argv: string[]): Promise<number> {
  const example =
    argv[0] ?? fileURLToPath(new URL("../../examples/support-summary/fleet.yaml", import.meta.url));
  const fleet = await startFleet(loadFleetFile(example));
  const first = fleet.replicas[0]!;
  process.stdout.write(
    `tokengate: example platform from ${example}\n${describeFleet(fleet)}\n\n` +
      `Ask an engine:\n  curl -s ${first.url}/v1/chat/completions -H 'content-type: application/json' \\\n` +
      `    -d '{"model":"${first.engine.cfg.modelName}","messages":[{"role":"user","content":"总结这段对话"}],"max_tokens":32}'\n` +
      `Engine metrics (vLLM names): ${first.url}/metrics   state: ${first.url}/admin/state\n` +
      `Logs: this terminal. Stop with Ctrl-C.\n`,
  );
  await waitForSignal();
  await fleet.stop();
  return 0;
}
