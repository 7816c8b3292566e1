#!/usr/bin/env node
// The suite on a busy machine: one busy loop per core (as `stress-ng --cpu N` would) while the tests run
// `--rounds` times in a row (3 unless told); stops at the first failing round. The tests are built once
// (`npm run build` first); each round is `node scripts/run-tests.mjs` with the arguments after `--`.
//   node scripts/test-busy.mjs [--rounds 3] [--hogs N] [-- dist/server]
import { spawn, spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";

const args = process.argv.slice(2);
const rest = args.includes("--") ? args.slice(args.indexOf("--") + 1) : [];
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && (args.indexOf("--") < 0 || i < args.indexOf("--")) ? Number(args[i + 1]) : dflt;
};
const rounds = opt("--rounds", 3);
const hogs = opt("--hogs", availableParallelism());

const loop = "for (;;) {}";
const running = Array.from({ length: hogs }, () =>
  spawn(process.execPath, ["-e", loop], { stdio: "ignore" }),
);
const stopHogs = () => {
  for (const h of running) h.kill("SIGKILL");
};
process.on("exit", stopHogs);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));

console.log(`test-busy: ${hogs} busy loop(s) running; ${rounds} round(s) of the suite`);
const results = [];
for (let k = 1; k <= rounds; k++) {
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ["scripts/run-tests.mjs", ...rest], { stdio: "inherit" });
  const s = Math.round((Date.now() - t0) / 1000);
  results.push(
    `round ${k}: ${r.status === 0 ? "passed" : `failed (exit ${r.status ?? r.signal})`} in ${s} s`,
  );
  console.log(`test-busy: ${results.at(-1)}`);
  if (r.status !== 0) break;
}
stopHogs();
console.log(`test-busy: ${hogs} busy loop(s); ${results.join("; ")}`);
process.exit(results.length === rounds && results.every((l) => l.includes("passed")) ? 0 : 1);
