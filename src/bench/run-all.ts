// `npm run bench`: every benchmark, reports written under bench-results/. `-- --quick` shortens each run;
// `-- --only micro,picker,sim,overhead,overhead-pinned,overhead-profile,rollback-drill,batch-day,multi-region,budgets,large-prompts,soak,<scenario>` picks
// some; the soak (30 min, `--minutes N` to change, 1 with --quick) runs only when named.

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runPickerMicro } from "../picker/picker.bench.js";
import { runBudgetBench } from "./budget-bench.js";
import { runScenario } from "./harness/runner.js";
import { largePromptsSummary, runLargePrompts } from "./large-prompts.js";
import { runMicro } from "./micro.js";
import { runOverhead } from "./overhead/overhead.js";
import { runOverheadProfile } from "./overhead/overhead-profile.js";
import { writeReport } from "./report/write.js";
import { runRollbackDrill } from "./rollback-drill/rollback-drill.js";
import { SCENARIOS } from "./scenarios/index.js";
import { runSimFidelity } from "./sim-fidelity.js";
import { runSoak } from "./soak/soak.js";

const quick = process.argv.includes("--quick");
const outDir = process.env.BENCH_OUT ?? "bench-results";
const onlyArg = process.argv.indexOf("--only");
const only = onlyArg >= 0 ? new Set((process.argv[onlyArg + 1] ?? "").split(",")) : null;
const wanted = (name: string) => only === null || only.has(name);
const minutesArg = process.argv.indexOf("--minutes");
const minutes = minutesArg >= 0 ? Number(process.argv[minutesArg + 1]) : undefined;
const budgetArg = process.argv.indexOf("--retry-budget");
const retryBudgetPercent = budgetArg >= 0 ? Number(process.argv[budgetArg + 1]) : undefined;

if (wanted("micro")) await runMicro({ outDir });
if (wanted("picker")) {
  const f = runPickerMicro();
  mkdirSync(outDir, { recursive: true });
  writeFileSync(
    join(outDir, "picker-micro.json"),
    `${JSON.stringify({ date: new Date().toISOString(), ...f }, null, 2)}\n`,
  );
  process.stdout.write(
    `picker: one pick among 64 endpoints p50 ${f.pickP50Us} µs, p99 ${f.pickP99Us} µs (target ≤ 50; ` +
      `a fixed loop of that length: p99 ${f.calibrationP99Us} µs); hashing a 220 KB prompt ${f.hash220KbMBps} MB/s ` +
      `(target ≥ 500); index at 1M blocks ${f.index1MBlocksMiB} MiB (target ≤ 64)\n`,
  );
}
if (wanted("sim")) {
  await runSimFidelity({
    outDir,
    rates: quick ? [40, 100, 160] : [20, 40, 60, 80, 100, 120, 140, 160, 200],
    secondsPerRate: quick ? 4 : 10,
    efficiencySeconds: quick ? 4 : 10,
    seed: 1,
  });
}
if (wanted("overhead")) await runOverhead({ outDir, quick });
// Opt-in (not in a plain `npm run bench`): the same with the router on a CPU of its own.
if (only?.has("overhead-pinned")) await runOverhead({ outDir, quick, pinned: true });
// CPU profiles of tokengate and the bare proxy: only when named (it slows both to profile them).
if (only?.has("overhead-profile")) await runOverheadProfile({ outDir, quick });
// Opt-in (not in a plain `npm run bench`): half an hour by default.
if (only?.has("soak"))
  await runSoak({
    outDir,
    quick,
    ...(minutes === undefined ? {} : { minutes }),
    ...(retryBudgetPercent === undefined ? {} : { retryBudgetPercent }),
  });
if (wanted("rollback-drill")) await runRollbackDrill({ outDir, quick });
if (wanted("batch-day")) {
  // Loaded only when run: it drives the openai client (a development dependency).
  const { runBatchDay } = await import("./batch-day/batch-day.js");
  await runBatchDay({ outDir: join(outDir, "batch-day"), quick });
}
if (wanted("multi-region")) {
  const { runMultiRegion } = await import("./multi-region/multi-region.js");
  await runMultiRegion({ outDir: join(outDir, "multi-region"), quick, seed: 1 });
}
if (wanted("budgets")) await runBudgetBench({ outDir, quick });
if (wanted("large-prompts"))
  process.stdout.write(largePromptsSummary(await runLargePrompts({ outDir, quick })));
for (const scenario of Object.values(SCENARIOS)) {
  if (!wanted(scenario.name)) continue;
  const results = await runScenario(scenario, { seed: 1, quick });
  const files = await writeReport(results, `${outDir}/${scenario.name}`);
  process.stderr.write(`${scenario.name}: wrote ${files.join(", ")}\n`);
}
