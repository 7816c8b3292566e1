// Runs a tokengate command (sim, gateway) as a child process for benchmarks, so the load generator and
// the system under test do not share one event loop, and reads the child's CPU time from /proc.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("../../cli/main.js", import.meta.url));

export interface Child {
  proc: ChildProcess;
  pid: number;
  output: () => string;
  stop(): Promise<void>;
}

/** Node options and environment of a child (the soak benchmark's memory probe). */
export interface SpawnExtras {
  /** Before the script, e.g. `["--expose-gc", "--import", probe]`. */
  nodeArgs?: string[];
  /** Added to this process's environment. */
  env?: Record<string, string>;
}

const reaped = new Map<ChildProcess, NodeJS.Signals>();

/**
 * Sends `signal` to `proc` if this process exits while it still runs, so that a test that times out or
 * a benchmark that throws leaves no gateway, engine or nginx behind holding a port. Only on `exit`
 * (a normal end, `process.exit`, the test runner's forced exit), where nothing asynchronous can run.
 */
export function reapOnExit<T extends ChildProcess>(proc: T, signal: NodeJS.Signals = "SIGKILL"): T {
  if (reaped.size === 0) process.once("exit", reapAll);
  reaped.set(proc, signal);
  proc.once("exit", () => {
    reaped.delete(proc);
    if (reaped.size === 0) process.off("exit", reapAll);
  });
  return proc;
}

function reapAll(): void {
  for (const [proc, signal] of reaped) {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
  }
  reaped.clear();
}

/** Starts `tokengate <args>` and resolves once its output (stdout or stderr) matches `ready`. */
export function startTokengate(
  args: string[],
  ready: RegExp,
  timeoutMs = 15_000,
  extras: SpawnExtras = {},
): Promise<Child> {
  return startScript(MAIN, args, ready, timeoutMs, extras);
}

/** `tokengate sim` with `replicas` engines on the `instant` profile serving `model`, and their URLs. */
export async function startInstantEngines(
  model: string,
  replicas = 2,
): Promise<{ child: Child; urls: string[] }> {
  const child = await startTokengate(
    ["sim", "--replicas", String(replicas), "--port", "0", "--profile", "instant", "--model", model],
    /simulated replica\(s\)/,
  );
  return { child, urls: [...new Set(child.output().match(/http:\/\/[\d.]+:\d+/g) ?? [])] };
}

/** Starts `node <script> <args>` likewise (the overhead benchmark's bare proxy). */
export async function startScript(
  script: string,
  args: string[],
  ready: RegExp,
  timeoutMs = 15_000,
  extras: SpawnExtras = {},
): Promise<Child> {
  const proc = reapOnExit(
    spawn(process.execPath, [...(extras.nodeArgs ?? []), script, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: extras.env ? { ...process.env, ...extras.env } : process.env,
    }),
  );
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  proc.stderr!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${label(script, args)} did not start:\n${out}`)),
      timeoutMs,
    );
    const check = () => {
      if (ready.test(out)) {
        clearTimeout(timer);
        proc.stdout!.off("data", check);
        proc.stderr!.off("data", check);
        resolve();
      }
    };
    // The gateway announces itself on stderr (stdout carries request logs); the sim uses stdout.
    proc.stdout!.on("data", check);
    proc.stderr!.on("data", check);
    proc.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${label(script, args)} exited with ${code ?? signal}:\n${out}`));
    });
    proc.once("error", (err) => {
      clearTimeout(timer);
      reject(new Error(`${label(script, args)} could not start: ${err.message}`));
    });
  });
  return {
    proc,
    pid: proc.pid!,
    output: () => out,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once("exit", () => resolve());
        proc.kill("SIGTERM");
        setTimeout(() => proc.kill("SIGKILL"), 5000).unref();
      }),
  };
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields after the command name start at field 3 (state); utime and stime are fields 14 and 15.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return (utime + stime) / 100; // USER_HZ is 100 on Linux
}

/** CPU seconds of a process and all its descendants (nginx's master and its workers), from /proc. */
export function treeCpuSeconds(pid: number): number {
  let total = cpuSeconds(pid);
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const children = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
    for (const c of children ? children.split(" ") : []) total += treeCpuSeconds(Number(c));
  }
  return total;
}

/** Every pid of the process tree under `pid`, itself first. */
export function treePids(pid: number): number[] {
  const out = [pid];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const children = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
    for (const c of children ? children.split(" ") : []) out.push(...treePids(Number(c)));
  }
  return out;
}

/**
 * Every thread id of the process tree under `pid` (Linux priorities are per thread: a process's threads
 * started before a renice keep their old one). Empty when the process is gone.
 */
export function treeTids(pid: number): number[] {
  try {
    return treePids(pid).flatMap((p) => readdirSync(`/proc/${p}/task`).map(Number));
  } catch {
    return [];
  }
}

/** Binds every thread of the process tree under `pid` to the given CPUs (`taskset`; Linux only). */
export function pinTree(pid: number, cpuList: string): void {
  for (const p of treePids(pid))
    execFileSync("taskset", ["-a", "-p", "-c", cpuList, String(p)], { stdio: "ignore" });
}

function label(script: string, args: string[]): string {
  return script === MAIN ? `tokengate ${args[0]}` : script;
}
