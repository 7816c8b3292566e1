#!/usr/bin/env node
// Runs every compiled test file (dist/**/*.test.js) with node's built-in test runner.
// Pass file or folder names to run a subset: `node scripts/run-tests.mjs dist/sim`.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

function collect(path, out) {
  const st = statSync(path);
  if (st.isDirectory()) {
    for (const name of readdirSync(path).sort()) collect(join(path, name), out);
  } else if (path.endsWith(".test.js")) {
    out.push(path);
  }
  return out;
}

const roots = process.argv.slice(2);
const files = (roots.length ? roots : ["dist"]).flatMap((r) => collect(r, []));
if (files.length === 0) {
  console.error("run-tests: no test files found (did the build run?)");
  process.exit(1);
}
const res = spawnSync(
  process.execPath,
  ["--test", "--test-concurrency=2", "--test-timeout=120000", ...files],
  { stdio: "inherit" },
);
process.exit(res.status ?? 1);
