#!/usr/bin/env node
// Runs every compiled test file (dist/**/*.test.js) with node's built-in test runner.
// Pass file or folder names to run a subset: `node scripts/run-tests.mjs dist/sim`.
//
// Deadlines, so that nothing hangs the suite:
// - each test, and each suite with its hooks, fails after 2 minutes (--test-timeout);
// - a test file whose process runs past TOKENGATE_TEST_FILE_MIN minutes (10 unless set) is killed, and
//   the tests it was running are named (a test file that never ends: a server left listening, a child
//   left running, a wait with no deadline);
// - the whole run stops after TOKENGATE_TEST_DEADLINE_MIN minutes (40 unless set).
// The run ends with the tests skipped and why: a test that needs a system service that is not installed
// is skipped with the command that installs it (src/testing/system-services.ts).
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";

const TEST_TIMEOUT_MS = 120_000;
const FILE_DEADLINE_MS = Number(process.env.TOKENGATE_TEST_FILE_MIN ?? 10) * 60_000;
const RUN_DEADLINE_MS = Number(process.env.TOKENGATE_TEST_DEADLINE_MIN ?? 40) * 60_000;

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

const scratch = mkdtempSync(join(tmpdir(), "tokengate-tests-"));
const eventsPath = join(scratch, "events.jsonl");
const runner = spawn(
  process.execPath,
  [
    "--test",
    "--test-concurrency=2",
    `--test-timeout=${TEST_TIMEOUT_MS}`,
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    `--test-reporter=${new URL("./test-events.mjs", import.meta.url).pathname}`,
    `--test-reporter-destination=${eventsPath}`,
    ...files,
  ],
  { stdio: "inherit" },
);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => runner.kill(signal));

const startedAt = Date.now();
const stopped = []; // what a deadline stopped, told at the end
const watch = setInterval(() => {
  const events = readEvents(eventsPath);
  if (Date.now() - startedAt > RUN_DEADLINE_MS) {
    stopped.push(
      `the run passed ${RUN_DEADLINE_MS / 60_000} minutes (TOKENGATE_TEST_DEADLINE_MIN) and was stopped; running then:`,
      ...runningTests(events).map((t) => `  ${where(t)}`),
    );
    for (const pid of descendants(runner.pid)) kill(pid);
    runner.kill("SIGKILL");
    return;
  }
  for (const [file, since] of runningFiles(events)) {
    if (Date.now() - since <= FILE_DEADLINE_MS) continue;
    const pids = fileProcesses(file);
    if (pids.length === 0) continue;
    const tests = runningTests(events).filter((t) => t.file === file);
    stopped.push(
      `${rel(file)} ran past ${FILE_DEADLINE_MS / 60_000} minutes (TOKENGATE_TEST_FILE_MIN) and was killed; ` +
        (tests.length > 0
          ? "running then:"
          : "its tests had ended, and something it started (a server, a timer, a child process) kept it alive"),
      ...tests.map((t) => `  ${where(t)}`),
    );
    for (const pid of pids) kill(pid);
  }
}, 2000);

const status = await new Promise((done) => runner.once("exit", (code, signal) => done(code ?? signal)));
clearInterval(watch);
const events = readEvents(eventsPath);
rmSync(scratch, { recursive: true, force: true });

printSkips(events.filter((e) => e.event === "skip"));
if (stopped.length > 0) {
  console.error("\nrun-tests: stopped by a deadline:");
  for (const l of stopped) console.error(`  ${l}`);
  process.exit(1);
}
process.exit(typeof status === "number" ? status : 1);

function readEvents(path) {
  let text = "";
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return [];
  }
  const out = [];
  for (const l of text.split("\n")) {
    if (l.trim() === "") continue;
    try {
      out.push(JSON.parse(l));
    } catch {
      // a line being written as it was read
    }
  }
  return out;
}

function rel(file) {
  return relative(process.cwd(), file.replace(/^file:\/\//, ""));
}

function where(t) {
  return `${t.file ? rel(t.file) : "?"}${t.line ? `:${t.line}` : ""}: ${t.name}`;
}

/** Files whose process has started and not ended, with when it started. */
function runningFiles(events) {
  const running = new Map();
  for (const e of events) {
    if (e.event === "file-start") running.set(e.file, e.at);
    else if (e.event === "file-end") running.delete(e.file);
  }
  return running;
}

/** Tests started and not ended, outermost first. */
function runningTests(events) {
  const open = new Map();
  const key = (t) => `${t.file}\u0000${t.line}\u0000${t.name}\u0000${t.nesting}`;
  for (const e of events) {
    if (e.event === "start") open.set(key(e), e);
    else if (e.event === "end") open.delete(key(e));
  }
  return [...open.values()];
}

/** Every process under `pid` (Linux /proc). */
function descendants(pid) {
  const out = [];
  let tasks = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    let children = "";
    try {
      children = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
    } catch {
      continue;
    }
    for (const c of children ? children.split(" ").map(Number) : []) out.push(c, ...descendants(c));
  }
  return out;
}

/** The runner's process for a test file, and everything that process started. */
function fileProcesses(file) {
  const target = resolve(file.replace(/^file:\/\//, ""));
  for (const pid of descendants(runner.pid)) {
    let args = [];
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    if (args.some((a) => a !== "" && resolve(a) === target)) return [pid, ...descendants(pid)];
  }
  return [];
}

function kill(pid) {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone already
  }
}

/** Every skip, grouped by its reason: the reason once, then the tests and suites it skipped. */
function printSkips(skips) {
  if (skips.length === 0) {
    console.log("\nrun-tests: nothing skipped");
    return;
  }
  const byReason = new Map();
  for (const s of skips) {
    const reason = s.reason ?? "(no reason given)";
    if (!byReason.has(reason)) byReason.set(reason, []);
    byReason.get(reason).push(s);
  }
  console.log(
    `\nrun-tests: ${skips.length} skipped (a skipped suite counts once), for ${byReason.size} reason(s):`,
  );
  for (const [reason, list] of byReason) {
    console.log(`  ${reason}`);
    for (const s of list) console.log(`    ${where(s)}`);
  }
}
