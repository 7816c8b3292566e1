// `npm run bench`: every benchmark, reports written under bench-results/. `--quick` shortens each run.

import { runOverhead } from "./overhead.js";
import { runSimFidelity } from "./sim-fidelity.js";

const quick = process.argv.includes("--quick");
const outDir = process.env.BENCH_OUT ?? "bench-results";

await runSimFidelity({
  outDir,
  rates: quick ? [40, 100, 160] : [20, 40, 60, 80, 100, 120, 140, 160, 200],
  secondsPerRate: quick ? 4 : 10,
  efficiencySeconds: quick ? 4 : 10,
  seed: 1,
});

await runOverhead({ outDir, quick });
